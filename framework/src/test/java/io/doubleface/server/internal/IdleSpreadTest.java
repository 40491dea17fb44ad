package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Each connection's idle timeout is the configured one plus up to a tenth, at random, so that
 * connections that went idle together close spread over that tenth instead of in one loop iteration.
 */
class IdleSpreadTest {

    @Test
    void withinATenthAboveTheConfiguredTimeoutAndSpreadOverIt() {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < 10_000; i++) {
            long v = HttpFanoutHandler.IdleAndBytesSeen.spread(60_000);
            assertTrue(v >= 60_000 && v <= 66_000, "spread(60000) = " + v + " (expected: 60000..66000)");
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        // 10,000 uniform draws miss the lowest or the highest 1 % of the range with p ~ 1e-43
        assertTrue(min < 60_060, "lowest of 10,000 draws: " + min);
        assertTrue(max > 65_940, "highest of 10,000 draws: " + max);
    }

    @Test
    void tinyTimeoutsStayExact() {
        assertEquals(1, HttpFanoutHandler.IdleAndBytesSeen.spread(1));
        for (int i = 0; i < 100; i++) {
            long v = HttpFanoutHandler.IdleAndBytesSeen.spread(5);
            assertEquals(5, v, "a tenth of 5 ms rounds to nothing");
        }
    }
}
