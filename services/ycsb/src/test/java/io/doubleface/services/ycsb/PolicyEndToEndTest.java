package io.doubleface.services.ycsb;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * End to end, the DoubleFace reply-reply orders change the order replies are processed in,
 * never the results: with per-reply CPU work and concurrent load, {@code fifo} and
 * {@code completion-first} answer with the exact expected bytes, and every reply went through
 * the end-of-iteration tail batches.
 */
class PolicyEndToEndTest {

    static final int SHARDS = 20;
    static final long REPLY_WORK_NANOS = 20_000;

    static List<YcsbQuery> queries() {
        List<YcsbQuery> qs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int fanout = new int[] {20, 5, 1, 10}[i % 4];
            qs.add(new YcsbQuery(fanout, i % 7 == 0 ? Size.MEDIUM : Size.SMALL, (i * 13L) % TestCluster.RECORDS));
        }
        return qs;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface-fifo", "doubleface-cf"})
    void policyChangesOrderNotResults(String configuration) throws Exception {
        try (TestCluster cluster = TestCluster.builder(SHARDS).configuration(configuration)
                .replyWorkNanos(REPLY_WORK_NANOS).start()) {
            List<YcsbQuery> qs = queries();
            List<HttpResponse<String>> rs = cluster.getAll(qs, 32);
            long replies = 0;
            for (int i = 0; i < qs.size(); i++) {
                assertEquals(200, rs.get(i).statusCode(), rs.get(i).body());
                assertEquals(cluster.expected(qs.get(i)), rs.get(i).body(), configuration + " request " + i);
                replies += qs.get(i).fanout();
            }
            Map<String, Object> stats = cluster.stats();
            assertEquals(configuration, JsonDoc.path(stats, "config").asString());
            long batches = 0;
            long batched = 0;
            long max = 0;
            for (Map<String, Object> l : JsonDoc.objects(stats, "loops")) {
                if ("io".equals(l.get("group"))) {
                    batches += ((Number) l.get("tail_batches")).longValue();
                    batched += ((Number) l.get("tail_replies")).longValue();
                    max = Math.max(max, ((Number) l.get("tail_batch_max")).longValue());
                }
            }
            assertTrue(batches > 0, "tail_batches");
            assertTrue(max >= 1, "tail_batch_max");
            assertTrue(batches <= batched, "a batch holds at least one reply");
            assertEquals(replies, batched, "each shard reply processed by exactly one tail batch");
        }
    }
}
