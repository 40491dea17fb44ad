package io.doubleface.server;

import java.util.Locale;

/**
 * Admission control: how many requests a server keeps in flight before it refuses new ones with
 * {@code 503 Service Unavailable} and {@code Retry-After: 1} (gRPC {@code RESOURCE_EXHAUSTED}),
 * answered at once, before any shard call. A request is in flight from the moment it is handed to
 * the engine (decoded, routed) until it is answered; refused requests never reach the service.
 *
 * <ul>
 *   <li>{@link #unlimited()} (the default): no limit; overload shows as queueing and late answers
 *       (504 at the deadline) instead of fast refusals.</li>
 *   <li>{@link #fixed(int)}: at most {@code n} in flight. Pick it from Little's law: the largest
 *       throughput you want to serve times the latency you accept (e.g. 20,000 req/s × 5 ms = 100).
 *       One compare-and-set per request and one decrement per answer.</li>
 *   <li>{@link #adaptive()}: the limit follows the measured latency of answered requests with
 *       Netflix's {@code concurrency-limits} Gradient2 algorithm: it grows while latency stays at
 *       its long-run level and shrinks when latency rises (queueing), between a minimum and a
 *       maximum. About 100 ns and one small allocation per request, plus a short lock per answer.</li>
 * </ul>
 *
 * <p>Immutable; thread-safe. {@link #parse} reads the CLI's form ({@code serve --admission}).
 */
public final class Admission {

    /** How the limit is set. */
    public enum Kind {
        /** No limit. */
        UNLIMITED,
        /** A fixed number of requests in flight. */
        FIXED,
        /** A limit adapted to latency (Gradient2). */
        ADAPTIVE
    }

    /** Default initial limit of {@link #adaptive()}: {@value}. */
    public static final int DEFAULT_ADAPTIVE_INITIAL = 100;
    /** Default minimum of {@link #adaptive()}: {@value}. */
    public static final int DEFAULT_ADAPTIVE_MIN = 20;
    /** Default maximum of {@link #adaptive()}: {@value}. */
    public static final int DEFAULT_ADAPTIVE_MAX = 10_000;

    private static final Admission UNLIMITED = new Admission(Kind.UNLIMITED, 0, 0, 0);

    private final Kind kind;
    private final int limit;
    private final int min;
    private final int max;

    private Admission(Kind kind, int limit, int min, int max) {
        this.kind = kind;
        this.limit = limit;
        this.min = min;
        this.max = max;
    }

    /** {@return no admission limit (the default)} */
    public static Admission unlimited() {
        return UNLIMITED;
    }

    /**
     * At most {@code maxInFlight} requests in flight; one more is refused with {@code 503}.
     *
     * @param maxInFlight the limit, {@code >= 1}
     * @return the setting
     * @throws IllegalArgumentException if {@code maxInFlight < 1}
     */
    public static Admission fixed(int maxInFlight) {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight: " + maxInFlight + " (expected: >= 1)");
        }
        return new Admission(Kind.FIXED, maxInFlight, maxInFlight, maxInFlight);
    }

    /**
     * A limit adapted to latency with the defaults: starts at {@value #DEFAULT_ADAPTIVE_INITIAL},
     * stays within {@value #DEFAULT_ADAPTIVE_MIN} .. {@value #DEFAULT_ADAPTIVE_MAX}.
     *
     * @return the setting
     */
    public static Admission adaptive() {
        return adaptive(DEFAULT_ADAPTIVE_INITIAL, DEFAULT_ADAPTIVE_MIN, DEFAULT_ADAPTIVE_MAX);
    }

    /**
     * A limit adapted to latency (Gradient2 of Netflix {@code concurrency-limits}).
     *
     * @param initial the limit at start, within {@code min .. max}
     * @param min the lowest the limit goes, {@code >= 1}
     * @param max the highest the limit goes
     * @return the setting
     * @throws IllegalArgumentException unless {@code 1 <= min <= initial <= max}
     */
    public static Admission adaptive(int initial, int min, int max) {
        if (min < 1 || initial < min || max < initial) {
            throw new IllegalArgumentException("adaptive admission: initial " + initial + ", min " + min + ", max "
                    + max + " (expected: 1 <= min <= initial <= max)");
        }
        return new Admission(Kind.ADAPTIVE, initial, min, max);
    }

    /**
     * Reads {@code off}, {@code N} (fixed), {@code adaptive} or {@code adaptive:INITIAL:MIN:MAX}.
     *
     * @param spec the text
     * @return the setting
     * @throws IllegalArgumentException if {@code spec} is none of these, with the reason
     */
    public static Admission parse(String spec) {
        String s = spec == null ? "" : spec.trim().toLowerCase(Locale.ROOT);
        if (s.equals("off") || s.equals("unlimited")) {
            return unlimited();
        }
        if (s.equals("adaptive")) {
            return adaptive();
        }
        try {
            if (s.startsWith("adaptive:")) {
                String[] p = s.substring("adaptive:".length()).split(":", -1);
                if (p.length != 3) {
                    throw new IllegalArgumentException("admission '" + spec + "' (expected: adaptive:INITIAL:MIN:MAX)");
                }
                return adaptive(Integer.parseInt(p[0]), Integer.parseInt(p[1]), Integer.parseInt(p[2]));
            }
            return fixed(Integer.parseInt(s));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("admission '" + spec
                    + "' (expected: off, a number of requests in flight, adaptive, or adaptive:INITIAL:MIN:MAX)");
        }
    }

    /** {@return how the limit is set} */
    public Kind kind() {
        return kind;
    }

    /** {@return the fixed limit, or the adaptive limit's initial value; 0 when unlimited} */
    public int limit() {
        return limit;
    }

    /** {@return the adaptive limit's minimum (the fixed limit when fixed; 0 when unlimited)} */
    public int min() {
        return min;
    }

    /** {@return the adaptive limit's maximum (the fixed limit when fixed; 0 when unlimited)} */
    public int max() {
        return max;
    }

    @Override
    public String toString() {
        return switch (kind) {
            case UNLIMITED -> "off";
            case FIXED -> Integer.toString(limit);
            case ADAPTIVE -> "adaptive:" + limit + ":" + min + ":" + max;
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Admission a && a.kind == kind && a.limit == limit && a.min == min && a.max == max;
    }

    @Override
    public int hashCode() {
        return ((kind.hashCode() * 31 + limit) * 31 + min) * 31 + max;
    }
}
