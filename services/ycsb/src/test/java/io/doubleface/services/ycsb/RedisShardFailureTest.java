package io.doubleface.services.ycsb;

import static io.doubleface.services.ycsb.ShardFailureTest.AVOIDING;
import static io.doubleface.services.ycsb.ShardFailureTest.FAULTY;
import static io.doubleface.services.ycsb.ShardFailureTest.SHARDS;
import static io.doubleface.services.ycsb.ShardFailureTest.TOUCHING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.redis.RedisServers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Redis shard failures over real redis-server processes, for representative models and both
 * connection modes: a shard killed with {@code kill -9} mid-run gives 503 (within the deadline) to
 * the requests that touch it while the others keep succeeding, and the driver reconnects once a
 * redis-server runs on that port again; a SIGSTOPped shard gives 504 within the deadline.
 */
class RedisShardFailureTest {

    /** Request deadline of the failure tests (generous enough for a loaded 2-core machine). */
    static final Duration DEADLINE = Duration.ofSeconds(2);

    static RedisServers servers;

    @BeforeAll
    static void start() {
        servers = RedisServers.start(SHARDS, 0);
        RedisRecords.load(servers.uri(), RedisTestCluster.RECORDS, n -> { });
    }

    @AfterAll
    static void stop() {
        if (servers != null) {
            servers.close();
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"doubleface, ''", "type2a-1f2b, ''", "type2b, ''", "thread-8, ''", "doubleface, ?connection=shared"})
    void killedShardGives503ThenReconnects(String model, String options) throws Exception {
        try (RedisTestCluster cluster = RedisTestCluster.start(servers, model, options, DEADLINE)) {
            assertAllGood(cluster, TOUCHING);
            assertAllGood(cluster, AVOIDING);

            servers.kill(FAULTY); // kill -9 mid-run
            try {
                for (int round = 0; round < 2; round++) {
                    for (YcsbQuery q : TOUCHING) {
                        long start = System.nanoTime();
                        HttpResponse<String> r = cluster.get(q);
                        long tookMillis = (System.nanoTime() - start) / 1_000_000;
                        assertEquals(503, r.statusCode(), model + " " + q + ": " + r.body());
                        assertTrue(r.body().contains("shard " + FAULTY), "reason should name shard " + FAULTY + ": "
                                + r.body());
                        assertTrue(tookMillis < DEADLINE.toMillis() + 5_000, "503 took " + tookMillis + " ms");
                    }
                    assertAllGood(cluster, AVOIDING);
                }
            } finally {
                servers.restart(FAULTY);
                RedisRecords.load(List.of(servers.addresses().get(FAULTY)), RedisTestCluster.RECORDS);
            }
            for (YcsbQuery q : TOUCHING) {
                HttpResponse<String> r = eventually200(cluster, q);
                assertEquals(cluster.expected(q), r.body(), model + " " + q + " after the shard came back");
            }
            assertAllGood(cluster, AVOIDING);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"doubleface, ''", "type2a-1f2b, ''", "type2b, ''", "thread-8, ''", "doubleface, ?connection=shared"})
    void stoppedShardGives504AndOthersKeepWorking(String model, String options) throws Exception {
        try (RedisTestCluster cluster = RedisTestCluster.start(servers, model, options, DEADLINE)) {
            assertAllGood(cluster, TOUCHING); // connections open before the stop
            assertAllGood(cluster, AVOIDING);
            servers.pause(FAULTY);
            try {
                // Fewer requests wait on the stopped shard than the blocking models have threads
                // (see ShardFailureTest): the avoiding ones must not queue behind them.
                List<YcsbQuery> mixed = new ArrayList<>(TOUCHING);
                mixed.addAll(AVOIDING);
                long start = System.nanoTime();
                List<HttpResponse<String>> rs = cluster.getAll(mixed, mixed.size());
                long tookMillis = (System.nanoTime() - start) / 1_000_000;
                for (int i = 0; i < mixed.size(); i++) {
                    YcsbQuery q = mixed.get(i);
                    HttpResponse<String> r = rs.get(i);
                    if (TestCluster.touches(q, FAULTY, SHARDS)) {
                        assertEquals(504, r.statusCode(), model + " " + q + ": " + r.body());
                    } else {
                        assertEquals(200, r.statusCode(), model + " " + q + ": " + r.body());
                        assertEquals(cluster.expected(q), r.body());
                    }
                }
                assertTrue(tookMillis < DEADLINE.toMillis() + 10_000, "504s took " + tookMillis + " ms");
                assertAllGood(cluster, AVOIDING);
            } finally {
                servers.resume(FAULTY);
            }
            for (YcsbQuery q : TOUCHING) {
                HttpResponse<String> r = eventually200(cluster, q);
                assertEquals(cluster.expected(q), r.body(), model + " " + q + " after SIGCONT");
            }
        }
    }

    static void assertAllGood(RedisTestCluster cluster, List<YcsbQuery> qs) throws Exception {
        for (YcsbQuery q : qs) {
            HttpResponse<String> r = cluster.get(q);
            assertEquals(200, r.statusCode(), q + ": " + r.body());
            assertEquals(cluster.expected(q), r.body(), q.toString());
        }
    }

    /** Retries {@code q} until it succeeds (the driver may still be reconnecting); bounded. */
    static HttpResponse<String> eventually200(RedisTestCluster cluster, YcsbQuery q) throws Exception {
        HttpResponse<String> r = null;
        long deadline = System.nanoTime() + TestCluster.GENEROUS.toNanos();
        while (System.nanoTime() - deadline < 0) {
            r = cluster.get(q);
            if (r.statusCode() == 200) {
                return r;
            }
            assertTrue(r.statusCode() == 503 || r.statusCode() == 504, "while the shard recovers: " + r.statusCode()
                    + " " + r.body());
            Thread.sleep(50);
        }
        throw new AssertionError(q + " still fails after the shard came back: " + r.statusCode() + " " + r.body());
    }
}
