package io.doubleface.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The arrival process is Poisson: exponential gaps, statistically checked with a fixed seed. */
class ExponentialGapsTest {

    private static final int DRAWS = 100_000;

    @Test
    void gapsHaveMeanOneOverRateAndCoefficientOfVariationOne() {
        ExponentialGaps gaps = new ExponentialGaps(42);
        double rate = 5000;
        double sum = 0;
        double sumSq = 0;
        int shortGaps = 0;
        for (int i = 0; i < DRAWS; i++) {
            double g = gaps.gapSeconds(rate);
            assertTrue(g >= 0 && Double.isFinite(g), "gap " + g);
            sum += g;
            sumSq += g * g;
            if (g < 0.1 / rate) {
                shortGaps++;
            }
        }
        double mean = sum / DRAWS;
        double sd = Math.sqrt(sumSq / DRAWS - mean * mean);
        assertEquals(1 / rate, mean, 0.03 / rate, "mean gap");
        assertEquals(1.0, sd / mean, 0.05, "coefficient of variation");
        // not near-periodic: P(gap < mean/10) = 1 - e^-0.1 = 9.5% for exponential gaps, ~0 for periodic ones
        assertEquals(0.095, shortGaps / (double) DRAWS, 0.01, "share of gaps under a tenth of the mean");
    }

    @Test
    void arrivalsFollowAPiecewiseConstantSchedule() {
        Schedule s = Schedule.parse("steps:1000@2s,10000@2s", 0);
        ExponentialGaps gaps = new ExponentialGaps(7);
        long t = 0;
        int first = 0;
        int second = 0;
        while ((t = gaps.next(s, 1.0, t)) < 4_000_000_000L) {
            if (t < 2_000_000_000L) {
                first++;
            } else {
                second++;
            }
        }
        assertEquals(2000, first, 200, "arrivals in the 1000/s step");
        assertEquals(20000, second, 600, "arrivals in the 10000/s step");
    }

    @Test
    void aZeroRateStepHasNoArrivals() {
        Schedule s = Schedule.parse("steps:100@1s,0@1s,100@1s", 0);
        ExponentialGaps gaps = new ExponentialGaps(1);
        long t = 0;
        while ((t = gaps.next(s, 1.0, t)) < 3_000_000_000L) {
            assertTrue(t < 1_000_000_000L || t >= 2_000_000_000L, "arrival at " + t + " ns in the 0/s step");
        }
    }
}
