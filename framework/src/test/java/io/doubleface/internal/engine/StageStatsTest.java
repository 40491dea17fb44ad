package io.doubleface.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.StageStats.Stage;
import io.doubleface.internal.engine.StageStats.Summary;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StageStatsTest {

    private static final long MS = 1_000_000L;

    /** One traced request: admitted at 0, each point a millisecond after the last, answered at {@code totalMs}. */
    private static void record(StageStats s, String config, long totalMs) {
        s.record(config, 1, 1 + MS, 1 + 2 * MS, 1 + 3 * MS, 1 + 4 * MS, 1 + 5 * MS, 1 + 6 * MS, 1 + totalMs * MS);
    }

    @Test
    void percentilesAndSumsOfOneWindow() {
        StageStats s = new StageStats(1);
        for (int i = 1; i <= 100; i++) {
            record(s, "doubleface", 6 + i); // totals 7..106 ms
        }
        Summary total = s.snapshot().get("doubleface").get(Stage.TOTAL);
        assertEquals(100, total.count());
        assertEquals(56_500, total.meanMicros(), 1);
        // two significant digits: within 1 % of the exact value
        assertEquals(56_000, total.p50Micros(), 560);
        assertEquals(105_000, total.p99Micros(), 1_050);
        Summary plan = s.snapshot().get("doubleface").get(Stage.PLAN);
        assertEquals(1_000, plan.p50Micros(), 10);
    }

    @Test
    void resetStartsAWindowAndKeepsRecording() {
        StageStats s = new StageStats(1);
        for (int i = 0; i < 50; i++) {
            record(s, "doubleface", 100);
            record(s, "type2a", 100);
        }
        s.snapshot(); // a reader before the reset (the recorder hands out its interval histogram)
        s.reset();
        assertTrue(s.snapshot().isEmpty(), "nothing recorded since the reset: " + s.snapshot());
        record(s, "doubleface", 10);
        Map<String, Map<Stage, Summary>> after = s.snapshot();
        assertFalse(after.containsKey("type2a"), "a configuration with nothing since the reset is left out");
        Summary total = after.get("doubleface").get(Stage.TOTAL);
        assertEquals(1, total.count());
        assertEquals(10_000, total.p99Micros(), 100, "the 100-ms requests before the reset are gone");
        assertEquals(10_000, total.sumMicros(), 1);
        s.reset();
        s.reset(); // twice in a row, with nothing between
        record(s, "doubleface", 20);
        assertEquals(20_000, s.snapshot().get("doubleface").get(Stage.TOTAL).p50Micros(), 200);
    }

    @Test
    void valuesBeyondTheRangeAreClamped() {
        StageStats s = new StageStats(1);
        s.record("doubleface", 1, 0, 0, 0, 0, 0, 0, 1 + 3_600_000 * MS); // an hour
        Summary total = s.snapshot().get("doubleface").get(Stage.TOTAL);
        assertEquals(1, total.count());
        assertEquals(StageStats.MAX_MICROS, total.p50Micros(), StageStats.MAX_MICROS / 100);
    }
}
