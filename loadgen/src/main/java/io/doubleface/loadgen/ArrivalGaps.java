package io.doubleface.loadgen;

import java.util.SplittableRandom;

/**
 * Inter-arrival gaps of an open-loop run, of mean {@code 1/rate}, drawn from {@link Arrivals}: for
 * Poisson arrivals exponentially distributed, {@code -ln(U) / rate} (coefficient of variation 1) —
 * not a Poisson-distributed integer with mean {@code 1/rate}, which gives nearly periodic arrivals
 * (docs/measuring.md#open-and-closed-loop-coordinated-omission); constant for deterministic ones;
 * a mix of two exponentials for bursty {@code h2}.
 *
 * <p>With a {@link Schedule}, {@link #next} walks a piecewise-constant rate: a gap that would cross a
 * segment boundary is redrawn from the boundary at the new rate (exact for Poisson, which is
 * memoryless; for the others a gap is cut at each rate change).
 *
 * <p>Threading: not thread-safe; each event loop of the generator owns one.
 */
public final class ArrivalGaps {

    private final SplittableRandom random;
    private final Arrivals arrivals;
    /** h2: probability of the first phase, and each phase's rate as a multiple of the mean rate. */
    private final double p1;
    private final double rate1;
    private final double rate2;

    /**
     * Poisson gaps.
     *
     * @param seed the seed of the draws
     */
    public ArrivalGaps(long seed) {
        this(seed, Arrivals.POISSON);
    }

    /**
     * Gaps of {@code arrivals}.
     *
     * @param seed the seed of the draws
     * @param arrivals the distribution
     */
    public ArrivalGaps(long seed, Arrivals arrivals) {
        this.random = new SplittableRandom(seed);
        this.arrivals = arrivals;
        double c2 = arrivals.c2();
        this.p1 = arrivals.kind() == Arrivals.Kind.H2 ? (1 + Math.sqrt((c2 - 1) / (c2 + 1))) / 2 : 1;
        // balanced means: p1/rate1 = p2/rate2 = 1/(2 rate)
        this.rate1 = 2 * p1;
        this.rate2 = 2 * (1 - p1);
    }

    /** {@return the distribution of the gaps} */
    public Arrivals arrivals() {
        return arrivals;
    }

    /** One gap in seconds at {@code rate} requests per second. */
    public double gapSeconds(double rate) {
        return switch (arrivals.kind()) {
            case POISSON -> exponential(rate);
            case DETERMINISTIC -> 1.0 / rate;
            case H2 -> random.nextDouble() < p1 ? exponential(rate * rate1) : exponential(rate * rate2);
        };
    }

    private double exponential(double rate) {
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
