package io.doubleface.driver.spi;

import java.util.Arrays;

/**
 * The live hedge delay of one loop ({@link Resilience#hedgingAtPercentile}): reply times of
 * first attempts in a histogram of four linear buckets per octave of microseconds (about 25%
 * resolution, 4 µs to hours, 640 bytes); when a window of at least
 * {@link Resilience#HEDGE_WINDOW_MILLIS} ms and {@link Resilience#HEDGE_WINDOW_SAMPLES}
 * replies closes, its percentile (the bucket's upper bound) becomes the delay, never below the floor,
 * and the histogram starts again.
 *
 * <p>Threading: confined to its loop; no synchronisation.
 */
final class LatencyWindow {

    private static final int OCTAVES = 40;
    private static final int BUCKETS = 4 * OCTAVES;
    private static final long WINDOW_NANOS = Resilience.HEDGE_WINDOW_MILLIS * 1_000_000;

    private final int[] counts = new int[BUCKETS];
    private final double quantile;
    private final long floorNanos;
    private int samples;
    private long windowStart;
    private long delayNanos; // 0 until the first window closes

    LatencyWindow(double percentile, long floorNanos, long now) {
        this.quantile = percentile / 100;
        this.floorNanos = floorNanos;
        this.windowStart = now;
    }

    /** {@return the hedge delay now, or 0 while the first window is open (no hedging yet)} */
    long delayNanos() {
        return delayNanos;
    }

    /** Records one reply time of a first attempt. */
    void record(long nanos, long now) {
        counts[bucket(Math.max(1, nanos / 1_000))]++;
        samples++;
        if (samples >= Resilience.HEDGE_WINDOW_SAMPLES && now - windowStart >= WINDOW_NANOS) {
            delayNanos = Math.max(floorNanos, quantileNanos());
            Arrays.fill(counts, 0);
            samples = 0;
            windowStart = now;
        }
    }

    private long quantileNanos() {
        long rank = (long) Math.ceil(quantile * samples);
        long seen = 0;
        for (int b = 0; b < BUCKETS; b++) {
            seen += counts[b];
            if (seen >= rank) {
                return upperMicros(b) * 1_000;
            }
        }
        return upperMicros(BUCKETS - 1) * 1_000;
    }

    /**
     * Bucket of {@code us}: octave {@code floor(log2 us)}, then the two bits after the leading one.
     * Below 4 µs an octave has no four steps: such times count as 4 µs.
     */
    static int bucket(long us) {
        long v = Math.max(4, us);
        int octave = 63 - Long.numberOfLeadingZeros(v);
        int sub = (int) ((v >>> (octave - 2)) & 3);
        return Math.min(BUCKETS - 1, octave * 4 + sub);
    }

    /** The exclusive upper bound, in µs, of bucket {@code b}: {@code (5 + sub) * 2^octave / 4}. */
    static long upperMicros(int b) {
        int octave = b >> 2;
        int sub = b & 3;
        return Math.max(1, ((5L + sub) << octave) >> 2);
    }
}
