package io.doubleface.loadgen;

import java.util.SplittableRandom;

/**
 * Inter-arrival gaps of a Poisson process: exponentially distributed, {@code -ln(U) / rate}
 * (mean {@code 1/rate}, coefficient of variation 1). Not a Poisson-distributed integer with mean
 * {@code 1/rate} — that gives nearly periodic arrivals (MEASURE.md).
 *
 * <p>With a {@link Schedule}, {@link #next} walks a piecewise-constant rate exactly: a gap that
 * would cross a segment boundary is redrawn from the boundary at the new rate (the exponential
 * is memoryless, so this is the same process).
 *
 * <p>Threading: not thread-safe; each event loop of the generator owns one.
 */
public final class ExponentialGaps {

    private final SplittableRandom random;

    public ExponentialGaps(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /** One gap in seconds at {@code rate} requests per second. */
    public double gapSeconds(double rate) {
        // 1 - U is in (0, 1], so the log is finite
        return -Math.log(1.0 - random.nextDouble()) / rate;
    }

    /**
     * The arrival after {@code t} (ns from the schedule's start) when this process carries
     * {@code share} of the schedule's rate, or {@link Long#MAX_VALUE} if no more arrivals.
     */
    public long next(Schedule schedule, double share, long t) {
        while (true) {
            double rate = schedule.rateAt(t) * share;
            // warm-up (t < 0) runs at the first rate: the first segment reaches back before 0
            long end = schedule.segmentEnd(t);
            if (rate <= 0) {
                if (end == Long.MAX_VALUE) {
                    return Long.MAX_VALUE;
                }
                t = end;
                continue;
            }
            double gapNanos = gapSeconds(rate) * 1e9;
            if (t + gapNanos < end || end == Long.MAX_VALUE) {
                return t + Math.max(1, (long) gapNanos);
            }
            t = end;
        }
    }
}
