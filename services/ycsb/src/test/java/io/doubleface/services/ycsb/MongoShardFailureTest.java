package io.doubleface.services.ycsb;

import io.doubleface.testing.StallingProxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.mongo.MongoDriver;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Shard failures over MongoDB shards under representative models: a stopped mongo-java-server
 * shard gives 503 naming it to the requests that need it while the others keep succeeding, and
 * the driver uses the shard again when a server is started on its port; a shard that stops
 * answering (a proxy that stops forwarding: the in-process equivalent of SIGSTOP) gives 504
 * within the request deadline.
 */
class MongoShardFailureTest {

    static final int SHARDS = 20;
    static final int FAULTY = ShardFailureTest.FAULTY;
    static final List<YcsbQuery> TOUCHING = ShardFailureTest.TOUCHING;
    static final List<YcsbQuery> AVOIDING = ShardFailureTest.AVOIDING;

    /** Short monitor and connect timeouts, so a returning shard is seen soon. */
    static MongoDriver.Options options() {
        return MongoTestCluster.generous().withConnectTimeout(Duration.ofMillis(500)).withHeartbeat(Duration.ofMillis(500));
    }

    static void assertAllGood(MongoTestCluster c, List<YcsbQuery> qs) throws Exception {
        for (YcsbQuery q : qs) {
            HttpResponse<String> r = c.get(q);
            assertEquals(200, r.statusCode(), q + ": " + r.body());
            assertEquals(c.expected(q), r.body(), q.toString());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "type2a-1f2b", "type2b", "thread-8"})
    void stoppedShardGives503AndIsUsedAgainWhenItReturns(String model) throws Exception {
        Duration deadline = Duration.ofSeconds(5);
        try (MongoTestCluster c = MongoTestCluster.start(SHARDS, model, deadline, options(), Map.of())) {
            assertAllGood(c, TOUCHING);
            assertAllGood(c, AVOIDING);

            c.leaf.stop(FAULTY); // mid-run: its connections drop, its port refuses

            for (int round = 0; round < 3; round++) {
                for (YcsbQuery q : TOUCHING) {
                    long t0 = System.nanoTime();
                    HttpResponse<String> r = c.get(q);
                    long tookMillis = (System.nanoTime() - t0) / 1_000_000;
                    assertEquals(503, r.statusCode(), model + " " + q + ": " + r.body());
                    assertTrue(r.body().contains("shard " + FAULTY), r.body());
                    assertTrue(tookMillis < deadline.toMillis(), "503 after " + tookMillis + " ms, past the deadline");
                }
                assertAllGood(c, AVOIDING);
            }

            c.leaf.restart(FAULTY);
            MongoRecords.load("mongodb://" + c.leaf.host() + ":" + c.leaf.port(FAULTY), TestCluster.RECORDS, n -> { });
            for (YcsbQuery q : TOUCHING) {
                HttpResponse<String> r = null;
                for (int attempt = 0; attempt < 100; attempt++) {
                    r = c.get(q);
                    if (r.statusCode() == 200) {
                        break;
                    }
                    assertEquals(503, r.statusCode(), "while the shard comes back: " + r.body());
                    Thread.sleep(100);
                }
                assertEquals(200, r.statusCode(), model + " " + q + " after the shard came back: " + r.body());
                assertEquals(c.expected(q), r.body());
            }
            assertAllGood(c, AVOIDING);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "type2a-1f2b", "type2b", "thread-8"})
    void shardThatStopsAnsweringGives504WithinTheDeadline(String model) throws Exception {
        Duration deadline = Duration.ofMillis(500);
        try (MongoTestCluster plain = MongoTestCluster.start(SHARDS, model)) {
            // the faulty shard sits behind a proxy in front of the first cluster's last shard
            try (StallingProxy proxy = new StallingProxy(plain.leaf.addresses().get(FAULTY));
                    MongoTestCluster c = MongoTestCluster.start(SHARDS, model, deadline, options(),
                            Map.of(FAULTY, proxy.address()))) {
                for (int attempt = 0; attempt < 20 && c.get(TOUCHING.get(0)).statusCode() != 200; attempt++) {
                    Thread.sleep(100); // first calls connect; the short deadline may cut them
                }
                assertAllGood(c, AVOIDING);
                proxy.stall(true);
                for (YcsbQuery q : TOUCHING) {
                    long t0 = System.nanoTime();
                    HttpResponse<String> r = c.get(q);
                    long tookMillis = (System.nanoTime() - t0) / 1_000_000;
                    assertEquals(504, r.statusCode(), model + " " + q + ": " + r.body());
                    assertTrue(tookMillis < deadline.toMillis() + 2_000, "504 after " + tookMillis + " ms");
                }
                assertAllGood(c, AVOIDING);
                proxy.stall(false);
            }
        }
    }
}
