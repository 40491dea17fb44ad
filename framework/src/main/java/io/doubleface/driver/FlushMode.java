package io.doubleface.driver;

import java.util.concurrent.TimeUnit;

/**
 * When a pipelined loop client writes the calls it has encoded for a shard connection to the
 * socket: the downstream batching knob of the variability paper (fewer, larger writes cost less
 * CPU per call; holding calls back adds to their latency).
 *
 * <ul>
 *   <li>{@link #PER_ITERATION} (the default): every connection written to in a loop iteration is
 *       flushed once, at the end of that iteration;
 *   <li>{@link #PER_WRITE}: each call is flushed as soon as it is encoded (one write system call per
 *       call);
 *   <li>{@link #batch batch(N, T)}: a connection is flushed when {@code N} calls are waiting on it,
 *       or {@code T} after the first of them was encoded, whichever comes first. The timer bounds
 *       the wait, so a partial batch is never stranded.
 * </ul>
 *
 * It is set per event loop with {@link io.doubleface.driver.spi.LoopFlush}; which drivers honour it is said in
 * docs/tracing.md ("Knobs").
 *
 * @param batchSize {@code 0}: per iteration; {@code 1}: per write; {@code N > 1}: flush at {@code N}
 *     waiting calls
 * @param maxDelayNanos for a batch, the longest a call waits to be flushed; {@code 0} otherwise
 */
public record FlushMode(int batchSize, long maxDelayNanos) {

    /** Flush every dirty connection once at the end of the loop iteration (the default). */
    public static final FlushMode PER_ITERATION = new FlushMode(0, 0);

    /** Flush each call as soon as it is encoded. */
    public static final FlushMode PER_WRITE = new FlushMode(1, 0);

    /** Longest wait of a batched call when {@code batch:N} names none: {@value} µs. */
    public static final long DEFAULT_BATCH_DELAY_MICROS = 50;

    /** Largest batch size accepted: {@value}. */
    public static final int MAX_BATCH_SIZE = 1 << 16;

    /** Longest batch delay accepted: {@value} µs (a call held longer would rather time out). */
    public static final long MAX_BATCH_DELAY_MICROS = 1_000_000;

    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException unless they are per-iteration {@code (0, 0)}, per-write
     *     {@code (1, 0)} or a batch with a size in {@code 2..}{@value #MAX_BATCH_SIZE} and a delay in
     *     {@code 1 ns..}{@value #MAX_BATCH_DELAY_MICROS} µs
     */
    public FlushMode {
        if (batchSize < 0 || batchSize > MAX_BATCH_SIZE) {
            throw new IllegalArgumentException("flush batch size: " + batchSize
                    + " (expected: 0 = per iteration, 1 = per write, 2.." + MAX_BATCH_SIZE + ")");
        }
        if (batchSize > 1) {
            if (maxDelayNanos <= 0 || maxDelayNanos > TimeUnit.MICROSECONDS.toNanos(MAX_BATCH_DELAY_MICROS)) {
                throw new IllegalArgumentException("flush batch delay: " + maxDelayNanos + " ns (expected: 1 ns.."
                        + MAX_BATCH_DELAY_MICROS + " µs)");
            }
        } else if (maxDelayNanos != 0) {
            throw new IllegalArgumentException("flush delay " + maxDelayNanos + " ns with batch size " + batchSize
                    + " (expected: a delay only for a batch of 2 or more)");
        }
    }

    /**
     * A bounded batch: flush at {@code size} waiting calls or {@code maxDelayMicros} after the first.
     *
     * @param size calls per flush, {@code 2..}{@value #MAX_BATCH_SIZE}
     * @param maxDelayMicros longest wait of a call, {@code 1..}{@value #MAX_BATCH_DELAY_MICROS} µs
     * @return the policy
     * @throws IllegalArgumentException if a bound is out of range
     */
    public static FlushMode batch(int size, long maxDelayMicros) {
        if (size < 2 || size > MAX_BATCH_SIZE) {
            throw new IllegalArgumentException("flush batch size: " + size + " (expected: 2.." + MAX_BATCH_SIZE
                    + "; per-write is a batch of 1)");
        }
        if (maxDelayMicros < 1 || maxDelayMicros > MAX_BATCH_DELAY_MICROS) {
            throw new IllegalArgumentException("flush batch delay: " + maxDelayMicros + " µs (expected: 1.."
                    + MAX_BATCH_DELAY_MICROS + ")");
        }
        return new FlushMode(size, TimeUnit.MICROSECONDS.toNanos(maxDelayMicros));
    }

    /**
     * Reads {@code per-write}, {@code per-iteration}, {@code batch:N} or {@code batch:N:Tus} (the
     * delay in microseconds, the {@code us} optional; default {@value #DEFAULT_BATCH_DELAY_MICROS}).
     *
     * @param spec the policy as the {@code --flush-mode} option and {@code /admin/knobs} take it
     * @return the policy
     * @throws IllegalArgumentException if {@code spec} is none of these, saying what was expected
     */
    public static FlushMode parse(String spec) {
        String s = spec == null ? "" : spec.trim();
        if (s.equals("per-write")) {
            return PER_WRITE;
        }
        if (s.equals("per-iteration")) {
            return PER_ITERATION;
        }
        String expected = " (expected: per-write, per-iteration, batch:N or batch:N:Tus, e.g. batch:16:50us)";
        String[] parts = s.startsWith("batch:") ? s.substring("batch:".length()).split(":", -1) : null;
        if (parts == null || parts.length > 2) {
            throw new IllegalArgumentException("flush mode: '" + spec + "'" + expected);
        }
        int n;
        long us = DEFAULT_BATCH_DELAY_MICROS;
        try {
            n = Integer.parseInt(parts[0]);
            if (parts.length == 2) {
                String t = parts[1].endsWith("us") ? parts[1].substring(0, parts[1].length() - 2) : parts[1];
                us = Long.parseLong(t);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("flush mode: '" + spec + "'" + expected, e);
        }
        return batch(n, us);
    }

    /** {@return the policy as {@link #parse} reads it: {@code per-iteration}, {@code per-write}, {@code batch:N:Tus}} */
    @Override
    public String toString() {
        return switch (batchSize) {
            case 0 -> "per-iteration";
            case 1 -> "per-write";
            default -> "batch:" + batchSize + ":" + TimeUnit.NANOSECONDS.toMicros(maxDelayNanos) + "us";
        };
    }
}
