package io.doubleface.services.musuite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SplitMix64Test {

    @Test
    void matchesTheReferenceSequenceOfSplitMix64() {
        // splitmix64.c (Vigna) from state 0: the first outputs
        SplitMix64 r = new SplitMix64(0);
        assertEquals(0xe220a8397b1dcdafL, r.nextLong());
        assertEquals(0x6e789e6aa1b965f4L, r.nextLong());
    }

    @Test
    void streamsAndItemsAreIndependentAndRepeatable() {
        assertEquals(SplitMix64.of(1, 2, 3).nextLong(), SplitMix64.of(1, 2, 3).nextLong());
        assertNotEquals(SplitMix64.of(1, 2, 3).nextLong(), SplitMix64.of(1, 2, 4).nextLong());
        assertNotEquals(SplitMix64.of(1, 2, 3).nextLong(), SplitMix64.of(1, 3, 3).nextLong());
        assertNotEquals(SplitMix64.of(1, 2, 3).nextLong(), SplitMix64.of(2, 2, 3).nextLong());
    }

    @Test
    void drawsStayInRangeAndGaussiansLookNormal() {
        SplitMix64 r = new SplitMix64(9);
        double sum = 0;
        double sq = 0;
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            double d = r.nextDouble();
            assertTrue(d >= 0 && d < 1);
            int b = r.nextInt(7);
            assertTrue(b >= 0 && b < 7);
            double g = r.nextGaussian();
            sum += g;
            sq += g * g;
        }
        assertEquals(0, sum / n, 0.02);
        assertEquals(1, sq / n, 0.02);
    }
}
