package io.doubleface.tune;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The load detectors on synthetic timestamps (no clock, no threads): steady loads, steps up and
 * down with detection delays bounded from N and the window, and outliers.
 */
class LoadDetectorTest {

    static final long MS = 1_000_000L;
    static final long SEC = 1_000_000_000L;

    /** Feeds arrivals at {@code rate} (periodic) from {@code t} for {@code n} arrivals; returns the time after the last. */
    static long periodic(LoadDetector d, long t, double rate, int n) {
        long gap = (long) (SEC / rate);
        for (int i = 0; i < n; i++) {
            t += gap;
            d.arrival(t);
        }
        return t;
    }

    static long poisson(LoadDetector d, Random rnd, long t, double rate, int n) {
        for (int i = 0; i < n; i++) {
            t += (long) (-Math.log(1 - rnd.nextDouble()) / rate * SEC);
            d.arrival(t);
        }
        return t;
    }

    @Test
    void ringEstimatesSteadyPoissonLoad() {
        Random rnd = new Random(42);
        for (double rate : new double[] {100, 1000, 8000}) {
            RingBufferDetector d = new RingBufferDetector(64);
            long t = poisson(d, rnd, 0, rate, 10_000);
            // sample the estimate at many points of a long steady run: it stays near the rate
            double sum = 0;
            int n = 0;
            for (int i = 0; i < 200; i++) {
                t = poisson(d, rnd, t, rate, 50);
                double r = d.rate(t);
                assertTrue(r > rate * 0.5 && r < rate * 2, "rate " + rate + ": estimate " + r);
                sum += r;
                n++;
            }
            double mean = sum / n;
            assertTrue(Math.abs(mean - rate) < rate * 0.1, "rate " + rate + ": mean estimate " + mean);
        }
    }

    @Test
    void ringReadsPeriodicArrivalsAsLn2OfTheRate() {
        RingBufferDetector d = new RingBufferDetector(16);
        long t = periodic(d, 0, 1000, 100);
        assertEquals(1000 * Math.log(2), d.rate(t), 1.0);
    }

    @Test
    void ringHasNoEstimateBeforeNArrivals() {
        RingBufferDetector d = new RingBufferDetector(8);
        long t = periodic(d, 0, 1000, 7);
        assertEquals(0, d.rate(t));
        t = periodic(d, t, 1000, 1);
        assertTrue(d.rate(t) > 0);
    }

    /**
     * Step 100 → 8000 req/s: the median of N-1 gaps flips once more than half of them are short,
     * i.e. after at most N/2 + 1 arrivals at the new rate — (N/2 + 1) / 8000 s.
     */
    @Test
    void ringDetectsAStepUpWithinHalfTheRingOfArrivals() {
        for (int n : new int[] {5, 8, 16, 32, 64}) {
            RingBufferDetector d = new RingBufferDetector(n);
            long t = periodic(d, 0, 100, 200);
            assertTrue(d.rate(t) < 100, "before the step: " + d.rate(t));
            int arrivals = arrivalsUntil(d, t, 8000, 4000);
            int bound = n / 2 + 1;
            assertTrue(arrivals <= bound, "N=" + n + ": detected after " + arrivals + " arrivals (bound " + bound + ")");
            double delayMs = arrivals * 1000.0 / 8000;
            assertTrue(delayMs <= bound * 1000.0 / 8000, "N=" + n + ": " + delayMs + " ms");
        }
    }

    @Test
    void ringDetectsAStepDownWithinHalfTheRingOfArrivals() {
        int n = 16;
        RingBufferDetector d = new RingBufferDetector(n);
        long t = periodic(d, 0, 8000, 1000);
        long gap = SEC / 100;
        int arrivals = 0;
        while (d.rate(t) > 200) {
            t += gap;
            d.arrival(t);
            arrivals++;
            assertTrue(arrivals <= n, "no detection after " + arrivals + " arrivals");
        }
        assertTrue(arrivals <= n / 2 + 1, "detected after " + arrivals);
    }

    @Test
    void ringStepUnderPoissonArrivalsIsSeenWithinTheRing() {
        Random rnd = new Random(7);
        int n = 16;
        for (int trial = 0; trial < 50; trial++) {
            RingBufferDetector d = new RingBufferDetector(n);
            long t = poisson(d, rnd, 0, 100, 100);
            int arrivals = 0;
            while (d.rate(t) < 4000) {
                t = poisson(d, rnd, t, 8000, 1);
                arrivals++;
                assertTrue(arrivals <= n, "trial " + trial + ": no detection after " + arrivals + " arrivals");
            }
        }
    }

    @Test
    void ringIgnoresABurstOfFewerThanHalfTheRing() {
        int n = 16;
        RingBufferDetector d = new RingBufferDetector(n);
        long t = periodic(d, 0, 100, 100);
        for (int i = 0; i < n / 2 - 1; i++) { // 7 back-to-back arrivals: 6 zero-length gaps
            d.arrival(t);
        }
        double r = d.rate(t);
        assertTrue(r < 100, "a short burst moved the estimate to " + r);
    }

    @Test
    void ringIgnoresAFewLongPauses() {
        int n = 16;
        RingBufferDetector d = new RingBufferDetector(n);
        long t = periodic(d, 0, 1000, 100);
        for (int i = 0; i < 3; i++) {
            t += 500 * MS; // three pauses of half a second
            d.arrival(t);
            t = periodic(d, t, 1000, 2);
        }
        double r = d.rate(t);
        assertEquals(1000 * Math.log(2), r, 1.0, "pauses moved the estimate");
    }

    @Test
    void ringDecaysAfterASecondOfSilence() {
        RingBufferDetector d = new RingBufferDetector(16);
        long t = periodic(d, 0, 1000, 100);
        assertTrue(d.rate(t + 900 * MS) > 600, "a pause under a second keeps the estimate");
        assertTrue(d.rate(t + 10 * SEC) < 2, "ten seconds of silence: " + d.rate(t + 10 * SEC));
    }

    @Test
    void ringToleratesOutOfOrderTimestampsFromSeveralLoops() {
        RingBufferDetector d = new RingBufferDetector(16);
        long t = 0;
        for (int i = 0; i < 1000; i++) {
            t += MS;
            d.arrival(i % 2 == 0 ? t + MS / 2 : t); // two writers, slightly out of order
        }
        double r = d.rate(t);
        assertTrue(r > 500 && r < 2000, "estimate " + r);
    }

    @Test
    void windowEstimatesTheLastCompleteWindow() {
        WindowDetector d = new WindowDetector(5 * MS);
        long t = periodic(d, 0, 8000, 8000); // one second
        assertEquals(8000, d.rate(t), 8000 * 0.05);
    }

    /** Step 100 → 8000: seen once the first full window after the step ends — at most 2W later. */
    @Test
    void windowDetectsAStepWithinTwoWindows() {
        for (long w : new long[] {1, 5, 10}) {
            WindowDetector d = new WindowDetector(w * MS);
            long t = periodic(d, 0, 100, 100) + 123_456; // step at an arbitrary phase of a window
            long stepAt = t;
            long gap = SEC / 8000;
            while (d.rate(t) < 4000) {
                t += gap;
                d.arrival(t);
                assertTrue(t - stepAt <= 2 * w * MS + gap, "W=" + w + " ms: not detected after " + (t - stepAt) + " ns");
            }
            long arrivals = (t - stepAt) / gap;
            assertTrue(arrivals <= 2 * w * 8 + 1, "W=" + w + " ms: " + arrivals + " arrivals");
        }
    }

    @Test
    void windowForgetsOldWindows() {
        WindowDetector d = new WindowDetector(5 * MS);
        long t = periodic(d, 0, 8000, 800);
        assertEquals(0, d.rate(t + 20 * MS));
    }

    @Test
    void windowIgnoresLateArrivalsOfOldWindows() {
        WindowDetector d = new WindowDetector(5 * MS);
        d.arrival(100 * MS);
        d.arrival(10 * MS); // 18 windows late
        assertEquals(200, d.rate(105 * MS), 1e-9);
    }

    @Test
    void detectorsByName() {
        assertEquals("ring-16", LoadDetector.create("ring").describe());
        assertEquals("ring-5", LoadDetector.create("ring-5").describe());
        assertEquals("window-5ms", LoadDetector.create("window").describe());
        assertEquals("window-10ms", LoadDetector.create("window-10ms").describe());
        assertThrows(IllegalArgumentException.class, () -> LoadDetector.create("ring-2"));
        assertThrows(IllegalArgumentException.class, () -> LoadDetector.create("ring-x"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LoadDetector.create("ewma"));
        assertTrue(e.getMessage().contains("expected: ring, ring-N, window, window-Nms"), e.getMessage());
    }

    /** Arrivals at {@code rate} from {@code t} until the estimate reaches {@code threshold}. */
    static int arrivalsUntil(LoadDetector d, long t, double rate, double threshold) {
        long gap = (long) (SEC / rate);
        int n = 0;
        while (d.rate(t) < threshold) {
            t += gap;
            d.arrival(t);
            n++;
            if (n > 100_000) {
                throw new AssertionError("never detected");
            }
        }
        return n;
    }
}
