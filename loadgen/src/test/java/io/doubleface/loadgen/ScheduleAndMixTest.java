package io.doubleface.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Parsing of schedules (steps, flash, traces) and request mixes; mix weights hold statistically. */
class ScheduleAndMixTest {

    private static final long S = 1_000_000_000L;

    @Test
    void stepsAndFlashParseIntoSegments() {
        Schedule steps = Schedule.parse("steps:100@10s,1000@500ms,5000@1m", 0);
        assertEquals(100, steps.rateAt(0));
        assertEquals(100, steps.rateAt(-5 * S), "warm-up runs at the first rate");
        assertEquals(1000, steps.rateAt(10 * S));
        assertEquals(5000, steps.rateAt(10 * S + S / 2));
        assertEquals(5000, steps.rateAt(1000 * S), "the last rate continues");
        assertEquals(Duration.ofMillis(70_500), steps.length());

        Schedule flash = Schedule.parse("flash:100@30s,8000@1s,100@30s", 0);
        assertEquals(8000, flash.rateAt(30 * S));
        assertEquals(100, flash.rateAt(31 * S));
        assertEquals((100 * 60 + 8000) / 61.0, flash.meanRate(61 * S), 1e-9);
        assertNull(Schedule.constant(10).length());
    }

    @Test
    void malformedSchedulesAreRejectedWithTheExpectedForm() {
        for (String bad : new String[] {"", "ramp:1@1s", "steps:", "steps:100", "steps:100@10", "steps:100@10h",
            "steps:-5@1s", "steps:0@1s", "flash:100@0s", "steps:abc@1s", "trace:"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Schedule.parse(bad, 0), bad);
            assertTrue(e.getMessage().contains("expected") || e.getMessage().contains("every rate is 0"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> Schedule.constant(0));
    }

    @Test
    void traceFilesParseAndScaleToTheirPeak(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("t.csv");
        Files.writeString(f, "second,rate\n0,100\n2,400\n3,200\n");
        Schedule asWritten = Schedule.parse("trace:" + f, 0);
        assertEquals(100, asWritten.rateAt(S));
        assertEquals(400, asWritten.rateAt(2 * S));
        assertEquals(200, asWritten.rateAt(3 * S));
        assertEquals(Duration.ofSeconds(4), asWritten.length());
        Schedule scaled = Schedule.parse("trace:" + f, 2000);
        assertEquals(2000, scaled.rateAt(2 * S), 1e-9);
        assertEquals(500, scaled.rateAt(0), 1e-9);

        Files.writeString(f, "second,rate\n0,100\n0,200\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Schedule.parse("trace:" + f, 0));
        assertTrue(e.getMessage().contains("line 3"), e.getMessage());
        Files.writeString(f, "0,100\n1;200\n");
        e = assertThrows(IllegalArgumentException.class, () -> Schedule.parse("trace:" + f, 0));
        assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("second,rate"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Schedule.parse("trace:" + dir.resolve("no.csv"), 0));
        assertTrue(e.getMessage().contains("no such file"), e.getMessage());
    }

    @Test
    void shippedTracesLastSixtySecondsAndHaveTheirShapes() {
        for (String name : Schedule.SHIPPED_TRACES) {
            Schedule s = Schedule.parse("trace:" + name, 5000);
            assertEquals(Duration.ofSeconds(60), s.length(), name);
            double peak = 0;
            for (int sec = 0; sec < 60; sec++) {
                peak = Math.max(peak, s.rateAt(sec * S));
            }
            assertEquals(5000, peak, 1e-6, name + " peak");
        }
        Schedule var = Schedule.parse("trace:var", 1000);
        assertTrue(var.rateAt(30 * S) < 0.6 * var.rateAt(0), "VAR dips in the middle");
        Schedule app = Schedule.parse("trace:app", 1000);
        assertTrue(app.rateAt(30 * S) > 3 * app.rateAt(0) && app.rateAt(55 * S) < 0.5 * app.rateAt(30 * S),
                "APP rises, holds, drops");
    }

    @Test
    void mixParsesAndRejectsBadEntries() {
        RequestMix m = RequestMix.parse("50:/query?fanout=5&size=small&key={key},50:/query?fanout=3&key={key}");
        assertEquals(2, m.paths().size());
        assertEquals("/query?fanout=5&size=small&key=17", m.path(0, 17));
        for (String bad : new String[] {"", "/a", "0:/a", "x:/a", "5:a", "5:/a b"}) {
            assertThrows(IllegalArgumentException.class, () -> RequestMix.parse(bad), bad);
        }
    }

    @Test
    void aTemplateMayNameItsMethod() {
        RequestMix m = RequestMix.parse("9:/social/timeline?user={key},1:POST /social/posts?user={key}&text=hi");
        assertEquals("GET", m.templates().get(0).method());
        assertEquals("POST", m.templates().get(1).method());
        assertEquals("/social/posts?user=7&text=hi", new String(m.templates().get(1).parts()[0],
                java.nio.charset.StandardCharsets.US_ASCII) + 7 + new String(m.templates().get(1).parts()[1],
                java.nio.charset.StandardCharsets.US_ASCII));
        assertEquals("POST /social/posts?user={key}&text=hi", m.paths().get(1));
        assertThrows(IllegalArgumentException.class, () -> RequestMix.parse("1:PATCH /x"));
        assertThrows(IllegalArgumentException.class, () -> RequestMix.parse("1:POST  /x"));
    }

    @Test
    void mixWeightsAreRespected() {
        RequestMix m = RequestMix.parse("1:/a,3:/b,6:/c");
        SplittableRandom r = new SplittableRandom(3);
        int[] counts = new int[3];
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            counts[m.pick(r)]++;
        }
        assertEquals(0.1, counts[0] / (double) n, 0.01);
        assertEquals(0.3, counts[1] / (double) n, 0.01);
        assertEquals(0.6, counts[2] / (double) n, 0.01);
    }
}
