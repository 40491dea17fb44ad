package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code traceStages}: every traced request's stages are recorded once, per configuration, under
 * every model; off records nothing and shows nothing; sampling traces some, not all.
 */
class StageTracingTest {

    static final List<String> STAGES = List.of("queue", "plan", "round_trip", "reply_wait", "last_reply", "merge",
            "respond", "total");

    @Test
    void everyModelRecordsEachStageOfEveryTracedRequestOnce() throws Exception {
        try (TestCluster c = TestCluster.builder(8).tweak(b -> b.traceStages(1)).start()) {
            int n = 40;
            for (String model : Models.ALL) {
                c.server.switchTo(model);
                for (int i = 0; i < n; i++) {
                    YcsbQuery q = new YcsbQuery(5, Size.SMALL, i);
                    assertEquals(c.expected(q), c.get(q).body(), model);
                }
            }
            Map<String, Object> stages = JsonDoc.path(c.stats(), "stages").asMap();
            assertEquals(1L, JsonDoc.path(stages, "one_in").asLong());
            for (String model : Models.ALL) {
                String name = io.doubleface.model.Configuration.parse(model).name();
                Map<String, Object> m = JsonDoc.path(stages, name).asMap();
                double total = JsonDoc.path(m, "total", "sum_us").asDouble();
                double chained = 0;
                for (String s : STAGES) {
                    assertEquals(n, JsonDoc.path(m, s, "count").asLong(), model + " " + s + ": " + m);
                    if (!s.equals("total")) {
                        chained += JsonDoc.path(m, s, "sum_us").asDouble();
                        // each request's stage is part of its total, so each percentile is too
                        for (String p : List.of("p50_us", "p99_us", "p999_us")) {
                            long stage = JsonDoc.path(m, s, p).asLong();
                            long whole = JsonDoc.path(m, "total", p).asLong();
                            assertTrue(stage <= whole, model + " " + s + " " + p + " " + stage + " > total " + whole);
                        }
                    }
                }
                // the seven stages chain from admission to the answer: per request they add up to
                // its total, so their sums add up to the total's (the JSON rounds each to 0.001 µs)
                assertEquals(total, chained, 0.01, model + ": " + m);
                assertTrue(total > 0, model + ": " + m);
            }
        }
    }

    @Test
    void offShowsNothingAndSamplingTracesSomeNotAll() throws Exception {
        try (TestCluster c = TestCluster.builder(4).start()) {
            YcsbQuery q = new YcsbQuery(3, Size.SMALL, 1);
            for (int i = 0; i < 20; i++) {
                assertEquals(200, c.get(q).statusCode());
            }
            assertFalse(c.stats().containsKey("stages"), "tracing is off by default");
            c.server.traceStages(4);
            int n = 400;
            for (int i = 0; i < n; i++) {
                assertEquals(200, c.get(q).statusCode());
            }
            long traced = JsonDoc.path(c.stats(), "stages", "doubleface", "total", "count").asLong();
            assertTrue(traced > 0 && traced < n, "one in 4 of " + n + ": traced " + traced);
        }
    }
}
