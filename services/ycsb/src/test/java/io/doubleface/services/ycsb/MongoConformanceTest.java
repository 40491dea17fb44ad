package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.mongo.MongoDriver;
import io.doubleface.mongo.MongoLoopClient;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Every threading model over MongoDB shards (mongo-java-server, real wire protocol) answers
 * byte-identical responses — identical to {@link YcsbAnswer}'s, written from the data — as
 * over the KV shards ({@link StoreConformanceTest}).
 */
class MongoConformanceTest {

    static final int SHARDS = 20;
    static MongoTestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = MongoTestCluster.start(SHARDS, "doubleface");
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    /** The integrated model's completions: with Netty on the shared loops, replies complete on the loop. */
    @Test
    void doublefaceRepliesCompleteOnTheSharedLoops() throws Exception {
        cluster.server.switchTo("doubleface");
        for (int i = 0; i < 20; i++) {
            YcsbQuery q = new YcsbQuery(20, Size.SMALL, i);
            assertEquals(cluster.expected(q), cluster.get(q).body());
        }
        long onLoop = 0;
        for (MongoLoopClient.Stats s : cluster.driver.stats()) {
            onLoop += s.onLoop();
        }
        assertTrue(onLoop > 0, cluster.driver.stats().toString());
    }

    /** The AIO transport (the paper's AIOBackend) under the models that use loop clients. */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"type2b", "doubleface", "type2a-1f2b"})
    void aioTransportGivesTheSameBytes(String model) throws Exception {
        try (MongoTestCluster aio = MongoTestCluster.start(5, model, TestCluster.GENEROUS,
                MongoTestCluster.generous().withTransport(MongoDriver.Transport.AIO), Map.of())) {
            for (Size size : Size.values()) {
                for (int fanout : new int[] {1, 5}) {
                    YcsbQuery q = new YcsbQuery(fanout, size, 3);
                    HttpResponse<String> r = aio.get(q);
                    assertEquals(200, r.statusCode(), r.body());
                    assertEquals(aio.expected(q), r.body(), model + " " + q);
                }
            }
        }
    }
}
