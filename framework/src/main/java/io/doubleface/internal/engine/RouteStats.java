package io.doubleface.internal.engine;

import java.util.concurrent.atomic.LongAdder;

/**
 * The requests of one route (an HTTP method and path pattern, or a gRPC method) by
 * {@link Outcome}, and the time from their dispatch to their answer. Shown per route in
 * {@code /admin/stats} ({@code routes}) and {@code /metrics} ({@code doubleface_route_*}).
 * Thread-safe; recording is two {@link LongAdder} increments and one {@code System.nanoTime()}.
 */
public final class RouteStats {

    private final String name;
    private final LongAdder[] byOutcome = new LongAdder[Outcome.values().length];
    private final LongAdder nanos = new LongAdder();

    /** @param name e.g. {@code GET /users/{user}/timeline} or {@code grpc example.search.v1.Search/Query} */
    public RouteStats(String name) {
        this.name = name;
        for (int i = 0; i < byOutcome.length; i++) {
            byOutcome[i] = new LongAdder();
        }
    }

    public String name() {
        return name;
    }

    /** A request of this route dispatched at {@code startNanos} ({@code System.nanoTime()}) was answered with {@code outcome}. */
    public void answered(Outcome outcome, long startNanos) {
        byOutcome[outcome.ordinal()].increment();
        nanos.add(System.nanoTime() - startNanos);
    }

    public long count(Outcome outcome) {
        return byOutcome[outcome.ordinal()].sum();
    }

    /** Requests answered, every outcome. */
    public long answered() {
        long n = 0;
        for (LongAdder a : byOutcome) {
            n += a.sum();
        }
        return n;
    }

    /** Sum over the answered requests of the time from dispatch to answer, in nanoseconds. */
    public long totalNanos() {
        return nanos.sum();
    }

    @Override
    public String toString() {
        return name;
    }
}
