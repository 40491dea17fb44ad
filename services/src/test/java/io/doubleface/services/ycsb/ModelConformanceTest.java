package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.http.HttpResponse;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every threading model answers the same fanout requests with byte-identical merged responses —
 * and identical to the response computed with no network or threads at all.
 */
class ModelConformanceTest {

    static final int SHARDS = 20;
    static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestCluster.start(SHARDS, "doubleface");
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
    void everyModelGivesTheSameBytes(String model, int fanout, Size size) throws Exception {
        cluster.server.switchTo(model);
        for (long key : new long[] {0, 7, TestCluster.RECORDS - 3}) {
            HttpResponse<String> r = cluster.get("/query?fanout=" + fanout + "&size=" + size.label() + "&key=" + key);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(cluster.expected(fanout, size, key), r.body(), model + " key=" + key);
        }
    }
}
