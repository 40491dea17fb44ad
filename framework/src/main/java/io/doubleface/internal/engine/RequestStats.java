package io.doubleface.internal.engine;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Upstream requests by {@link Outcome}, plus the number in flight. Thread-safe; recording is a
 * {@link LongAdder} increment (no contention between loops).
 */
public final class RequestStats {

    private final LongAdder[] byOutcome = new LongAdder[Outcome.values().length];
    private final LongAdder started = new LongAdder();
    private final LongAdder slowReaders = new LongAdder();
    private final LongAdder refusedConnections = new LongAdder();
    private final LongAdder overServerQueue = new LongAdder();
    /** Response bytes queued on connections whose client is behind (over the high water mark). */
    private final AtomicLong behindBytes = new AtomicLong();
    /** A binding's or codec's decode threw something other than a bad-request exception (HTTP or gRPC). */
    public final ErrorLog decodeErrors = new ErrorLog("decode");
    /** A binding's encode threw (the client got 500 / INTERNAL). */
    public final ErrorLog encodeErrors = new ErrorLog("encode");
    /** A model failed to run a request (the client got 500). */
    public final ErrorLog executeErrors = new ErrorLog("execute");
    /** A service's plan, reply handler or merge threw something other than a status of its choosing (the client got 500). */
    public final ErrorLog serviceErrors = new ErrorLog("service");

    /**
     * Shard calls that failed, logged with the driver's detail (the client's answer and
     * {@code Replies.failure} give the same words under every model; the detail is only here and in
     * the failure's cause). Not among {@link #errorLogs()}: shard failures are counted per backend.
     */
    public final ErrorLog shardFailures = new ErrorLog("shard");

    private final List<ErrorLog> errorLogs = List.of(decodeErrors, encodeErrors, executeErrors, serviceErrors);

    /** {@return the per-request error kinds, for stats and metrics} */
    public List<ErrorLog> errorLogs() {
        return errorLogs;
    }

    public RequestStats() {
        for (int i = 0; i < byOutcome.length; i++) {
            byOutcome[i] = new LongAdder();
        }
    }

    /** A request was admitted to the engine. */
    public void admitted() {
        started.increment();
    }

    /** A request (admitted or refused by the upstream) was answered with {@code outcome}. */
    public void answered(Outcome outcome) {
        byOutcome[outcome.ordinal()].increment();
    }

    /** An upstream connection was closed because its client did not read its responses. */
    public void slowReaderClosed() {
        slowReaders.increment();
    }

    /** An upstream connection was closed on accept: the server had its most connections open. */
    public void connectionRefused() {
        refusedConnections.increment();
    }

    /** Upstream connections closed on accept so far (over the connection limit). */
    public long connectionsRefused() {
        return refusedConnections.sum();
    }

    /**
     * Adds {@code delta} (may be negative) to the response bytes queued on connections whose client
     * is behind, and returns the new total.
     */
    public long addBehindBytes(long delta) {
        return behindBytes.addAndGet(delta);
    }

    /** {@return response bytes now queued on connections whose client is behind} */
    public long behindBytes() {
        return behindBytes.get();
    }

    /** A slow reader was closed because the server-wide queued bytes went over their bound. */
    public void serverQueueFull() {
        overServerQueue.increment();
    }

    /** {@return slow readers closed so far because the server-wide bound was reached (also in slowReadersClosed)} */
    public long serverQueueFullCount() {
        return overServerQueue.sum();
    }

    /** Upstream connections closed as slow readers so far. */
    public long slowReadersClosed() {
        return slowReaders.sum();
    }

    public long count(Outcome outcome) {
        return byOutcome[outcome.ordinal()].sum();
    }

    /** Requests admitted to the engine so far. */
    public long admittedCount() {
        return started.sum();
    }

    /** All outcomes, including zeros. */
    public Map<Outcome, Long> snapshot() {
        Map<Outcome, Long> m = new EnumMap<>(Outcome.class);
        for (Outcome o : Outcome.values()) {
            m.put(o, byOutcome[o.ordinal()].sum());
        }
        return m;
    }
}
