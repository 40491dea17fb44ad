package io.doubleface.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The arrival processes: Poisson (exponential gaps), deterministic and bursty h2, each of mean
 * {@code 1/rate} and its {@code C²}, statistically checked with fixed seeds.
 */
class ArrivalGapsTest {

    private static final int DRAWS = 100_000;

    @Test
    void gapsHaveMeanOneOverRateAndCoefficientOfVariationOne() {
        ArrivalGaps gaps = new ArrivalGaps(42);
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

    /** {mean, C²} of {@code DRAWS} gaps at {@code rate}. */
    static double[] moments(ArrivalGaps gaps, double rate) {
        double sum = 0;
        double sumSq = 0;
        for (int i = 0; i < DRAWS; i++) {
            double g = gaps.gapSeconds(rate);
            assertTrue(g >= 0 && Double.isFinite(g), "gap " + g);
            sum += g;
            sumSq += g * g;
        }
        double mean = sum / DRAWS;
        return new double[] {mean, (sumSq / DRAWS - mean * mean) / (mean * mean)};
    }

    @Test
    void deterministicGapsAreAllOneOverRate() {
        double[] m = moments(new ArrivalGaps(3, Arrivals.DETERMINISTIC), 2000);
        assertEquals(1 / 2000.0, m[0], 1e-12);
        assertEquals(0, m[1], 1e-9);
    }

    @Test
    void h2GapsHaveTheMeanAndTheSquaredCoefficientOfVariationAsked() {
        for (double c2 : new double[] {2, 4, 10}) {
            double[] m = moments(new ArrivalGaps(11, Arrivals.parse("h2:" + c2)), 5000);
            assertEquals(1 / 5000.0, m[0], 0.03 / 5000, "mean gap, C² " + c2);
            assertEquals(c2, m[1], 0.1 * c2, "C² " + c2);
        }
    }

    @Test
    void arrivalsParseTheirFormsAndRefuseOthersNamingTheForms() {
        assertEquals(Arrivals.POISSON, Arrivals.parse("poisson"));
        assertEquals(Arrivals.DETERMINISTIC, Arrivals.parse("deterministic"));
        assertEquals(new Arrivals(Arrivals.Kind.H2, 4), Arrivals.parse("h2:4"));
        assertEquals("h2:4", Arrivals.parse("h2:4").toString());
        assertEquals("h2:2.5", Arrivals.parse("h2:2.5").toString());
        for (String bad : new String[] {"h2:1", "h2:0.5", "h2:x", "h2:", "pareto", "", "h2:5000"}) {
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> Arrivals.parse(bad), bad);
            assertTrue(e.getMessage().contains("expected"), e.getMessage());
        }
    }

    @Test
    void arrivalsFollowAPiecewiseConstantSchedule() {
        Schedule s = Schedule.parse("steps:1000@2s,10000@2s", 0);
        ArrivalGaps gaps = new ArrivalGaps(7);
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
        ArrivalGaps gaps = new ArrivalGaps(1);
        long t = 0;
        while ((t = gaps.next(s, 1.0, t)) < 3_000_000_000L) {
            assertTrue(t < 1_000_000_000L || t >= 2_000_000_000L, "arrival at " + t + " ns in the 0/s step");
        }
    }
}
