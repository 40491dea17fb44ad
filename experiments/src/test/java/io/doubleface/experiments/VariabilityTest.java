package io.doubleface.experiments;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.loop.ThreadStats;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The pieces of {@code experiment variability} that need no processes: the configuration grammar
 * with knobs, which configuration a variant is compared with, and per-run stage figures from the
 * mid-tier's running sums (the real run is {@code ExperimentCommandTest}).
 */
class VariabilityTest {

    @Test
    void knobsAreParsedBetweenTheNameAndTheShardOptions() {
        assertEquals("doubleface", Topology.configOf("doubleface+flush=batch:64:20us@connection=native"));
        assertEquals("connection=native", Topology.optionsOf("doubleface+flush=batch:64:20us@connection=native", ""));
        assertEquals(Map.of("flush", "batch:64:20us", "pin", "off", "gc", "default", "tune", "default"),
                Topology.knobsOf("doubleface+flush=batch:64:20us@connection=native"));
        assertEquals(Map.of("flush", "per-write", "pin", "0,1", "gc", "default", "tune", "default"),
                Topology.knobsOf("type2a-1f1b+pin=0,1+flush=per-write"));
        assertEquals(Map.of("flush", "per-iteration", "pin", "off", "gc", "zgc", "tune", "default"),
                Topology.knobsOf("doubleface+gc=zgc"));
        assertEquals(Map.of("flush", "per-iteration", "pin", "off", "gc", "default", "tune", "default"),
                Topology.knobsOf("doubleface"));
        for (String bad : List.of("doubleface+flush=sometimes", "doubleface+color=red", "doubleface+flush",
                "doubleface+flush=", "doubleface+flush=per-write+flush=per-iteration", "doubleface+pin=x", "doubleface+gc=cms",
                "type9+flush=per-write", "doubleface+tune=10ms", "adaptive+tune=10", "adaptive+tune=0ms",
                "adaptive+tune=fast")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Topology.check(bad), bad);
            assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), bad);
        }
        Topology.check("doubleface+flush=per-write+pin=0@connection=native");
        assertEquals(Map.of("flush", "per-iteration", "pin", "off", "gc", "default", "tune", "10ms"),
                Topology.knobsOf("adaptive+tune=10ms"));
        assertTrue(Topology.isAdapter("adaptive+tune=10ms"));
        assertEquals("adaptive", Topology.configOf("adaptive+tune=500us@connection=native"));
    }

    @Test
    void aVariantRunsAtItsBaseConfigurationsRate() {
        assertEquals("doubleface", Variability.base("doubleface+flush=per-write"));
        assertEquals("doubleface", Variability.base("doubleface-poll"));
        assertEquals("type2a-1f1b", Variability.base("type2a-1f1b"));
        assertArrayEquals(new String[] {"flush", "per-write"}, Variability.knob("doubleface+flush=per-write"));
        assertArrayEquals(new String[] {"busy-poll", "poll"}, Variability.knob("doubleface-poll"));
        assertArrayEquals(new String[] {"gc", "g1"}, Variability.knob("doubleface+gc=g1"));
        assertEquals("doubleface", Variability.base("doubleface+gc=g1"));
        assertNull(Variability.knob("doubleface"));
        Map<String, Object> prepared = Map.of("capacity_rps", Map.of("doubleface", 10_000L));
        ExperimentRunner.Options o = new ExperimentRunner.Options("variability", false, null, "kv", 5, 100, 1, null,
                null, null, null, null, 1, null, null, null, null, null, 0.75, null, null, null, null, "java", "t",
                List.of());
        assertEquals(3_000, Variability.rate(o, 0.3, "doubleface-poll", prepared));
        assertEquals(9_000, Variability.rate(o, 0.9, "doubleface+flush=batch:64:20us", prepared));
        assertThrows(IllegalStateException.class, () -> Variability.rate(o, 0.3, "type2b", prepared));
    }

    @Test
    void aRunsStageFiguresComeFromTheDifferenceOfTheRunningSums() {
        Random rnd = new Random(7);
        double[] before = new double[1000];
        double[] run = new double[500];
        for (int i = 0; i < before.length; i++) {
            before[i] = 50 + rnd.nextDouble() * 10; // an earlier, quiet run
        }
        for (int i = 0; i < run.length; i++) {
            run[i] = rnd.nextDouble() < 0.1 ? 5_000 : 100 + rnd.nextDouble() * 50; // this run: a heavy tail
        }
        MidTierSample a = sample(sums(before));
        double[] all = new double[before.length + run.length];
        System.arraycopy(before, 0, all, 0, before.length);
        System.arraycopy(run, 0, all, before.length, run.length);
        MidTierSample b = sample(sums(all));
        MidTierSample.Stage s = MidTierSample.delta(a, b).stage("doubleface", "round_trip");
        double mean = java.util.Arrays.stream(run).average().orElseThrow();
        double var = java.util.Arrays.stream(run).map(x -> (x - mean) * (x - mean)).sum() / run.length;
        assertEquals(500, s.count());
        assertEquals(mean, s.meanMicros(), 1e-6 * mean);
        assertEquals(var, s.varianceMicros2(), 1e-6 * var);
        assertEquals(var / (mean * mean), s.cv2(), 1e-6);
        assertNull(MidTierSample.delta(b, b).stage("doubleface", "round_trip")); // nothing traced in between
    }

    private static Map<String, Object> sums(double[] xs) {
        double sum = 0;
        double sq = 0;
        for (double x : xs) {
            sum += x;
            sq += x * x;
        }
        return Map.of("count", (long) xs.length, "sum_us", sum, "sum_sq_us2", Math.round(sq));
    }

    private static MidTierSample sample(Map<String, Object> roundTrip) {
        Map<String, Object> admin = Map.of("requests", Map.of("answered", 0L), "loops", List.of(),
                "stages", Map.of("one_in", 1L, "doubleface", Map.of("round_trip", roundTrip)));
        return new MidTierSample(System.nanoTime(), 0, Map.of(), Map.of(), Map.<String, ThreadStats.Sample>of(),
                MidTierSample.stagesOf(admin));
    }
}
