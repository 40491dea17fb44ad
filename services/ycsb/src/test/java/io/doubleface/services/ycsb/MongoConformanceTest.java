package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.mongo.MongoDriver;
import io.doubleface.mongo.MongoLoopClient;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every threading model over MongoDB shards (mongo-java-server, real wire protocol) answers
 * byte-identical responses — identical to {@link YcsbReference}'s, computed with no network — as
 * over the KV shards ({@link ModelConformanceTest}).
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

    static Stream<Arguments> cases() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (String model : Models.ALL) {
            for (int fanout : new int[] {1, 5, 20}) {
                for (Size size : Size.values()) {
                    b.add(Arguments.of(model, fanout, size));
                }
            }
        }
        return b.build();
    }

    @ParameterizedTest(name = "{0} fanout={1} {2}")
    @MethodSource("cases")
    void everyModelGivesTheSameBytesOverMongo(String model, int fanout, Size size) throws Exception {
        cluster.server.switchTo(model);
        for (long key : new long[] {0, 7, TestCluster.RECORDS - 3}) {
            YcsbQuery q = new YcsbQuery(fanout, size, key);
            HttpResponse<String> r = cluster.get(q);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(cluster.expected(q), r.body(), model + " " + q);
        }
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
