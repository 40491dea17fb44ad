package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every threading model over 20 real redis-server shards answers byte-identically to
 * {@link YcsbReference} (the response computed with no network or threads) — per-loop Lettuce
 * clients and, for the asynchronous models, one shared connection per shard.
 */
class RedisConformanceTest {

    static final int SHARDS = 20;
    static RedisTestCluster perLoop;
    static RedisTestCluster shared;

    @BeforeAll
    static void start() {
        perLoop = RedisTestCluster.start(SHARDS, "doubleface", "");
        shared = RedisTestCluster.start(perLoop.servers, "doubleface", "?connection=shared", TestCluster.GENEROUS);
    }

    @AfterAll
    static void stop() {
        if (shared != null) {
            shared.close();
        }
        if (perLoop != null) {
            perLoop.close();
        }
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
    void everyModelGivesTheSameBytesOverRedis(String model, int fanout, Size size) throws Exception {
        for (RedisTestCluster cluster : List.of(perLoop, shared)) {
            cluster.server.switchTo(model);
            for (long key : new long[] {0, 7, RedisTestCluster.RECORDS - 3}) {
                YcsbQuery q = new YcsbQuery(fanout, size, key);
                HttpResponse<String> r = cluster.get(q);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(cluster.expected(q), r.body(), model + " " + cluster.driver.describe() + " key=" + key);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void everyModelGivesTheSameBytesUnderConcurrentLoad(String model) throws Exception {
        for (RedisTestCluster cluster : List.of(perLoop, shared)) {
            cluster.server.switchTo(model);
            List<YcsbQuery> qs = new ArrayList<>();
            for (int i = 0; i < 120; i++) {
                Size size = Size.values()[i % 3];
                int fanout = size == Size.LARGE ? 1 + i % 5 : new int[] {1, 5, 20}[i % 3 == 0 ? 2 : i % 2];
                qs.add(new YcsbQuery(fanout, size, (i * 31L) % RedisTestCluster.RECORDS));
            }
            List<HttpResponse<String>> rs = cluster.getAll(qs, 16);
            for (int i = 0; i < qs.size(); i++) {
                assertEquals(200, rs.get(i).statusCode(), rs.get(i).body());
                assertEquals(cluster.expected(qs.get(i)), rs.get(i).body(), model + " " + qs.get(i));
            }
        }
        assertEquals(0, perLoop.driver.offLoopCompletions(), "per-loop completions off the loop");
    }

    static List<String> models() {
        return Models.ALL;
    }
}
