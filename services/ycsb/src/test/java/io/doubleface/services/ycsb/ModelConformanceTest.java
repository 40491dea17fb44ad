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
import org.junit.jupiter.params.provider.FieldSource;
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

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.ycsb.Models#ALL")
    void everyModelGivesTheSameBytesUnderConcurrentLoad(String model) throws Exception {
        cluster.server.switchTo(model);
        List<YcsbQuery> qs = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            Size size = Size.values()[i % 3];
            int fanout = size == Size.LARGE ? 1 + i % 5 : new int[] {1, 5, 20}[i % 3 == 0 ? 2 : i % 2];
            qs.add(new YcsbQuery(fanout, size, (i * 31L) % TestCluster.RECORDS));
        }
        List<HttpResponse<String>> rs = cluster.getAll(qs, 16);
        for (int i = 0; i < qs.size(); i++) {
            assertEquals(200, rs.get(i).statusCode(), rs.get(i).body());
            assertEquals(cluster.expected(qs.get(i)), rs.get(i).body(), model + " " + qs.get(i));
        }
    }
}
