package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HTTP/1.1 pipelining over one raw socket: many requests written back to back, of mixed fanout
 * and size so that they complete out of order, are answered in request order with the exact
 * bytes; a 404 in the middle keeps its place; {@code Connection: close} closes after its answer.
 */
class PipeliningTest {

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

    /** 50 queries: large fanout-20 scans between small fanout-1 reads, so later ones finish first. */
    static List<YcsbQuery> mixed(int n) {
        List<YcsbQuery> qs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            YcsbQuery q = switch (i % 5) {
                case 0 -> new YcsbQuery(20, Size.LARGE, (i * 7) % TestCluster.RECORDS);
                case 1 -> new YcsbQuery(1, Size.SMALL, (i * 7) % TestCluster.RECORDS);
                case 2 -> new YcsbQuery(5, Size.MEDIUM, (i * 7) % TestCluster.RECORDS);
                case 3 -> new YcsbQuery(1, Size.SMALL, (i * 11) % TestCluster.RECORDS);
                default -> new YcsbQuery(20, Size.SMALL, (i * 13) % TestCluster.RECORDS);
            };
            qs.add(q);
        }
        return qs;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "type2b", "thread-8"})
    void pipelinedRequestsAreAnsweredInRequestOrder(String model) throws Exception {
        cluster.server.switchTo(model);
        List<YcsbQuery> qs = mixed(50);
        StringBuilder all = new StringBuilder();
        for (YcsbQuery q : qs) {
            all.append(RawHttp.get(TestCluster.path(q)));
        }
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write(all.toString()); // one write: all 50 requests back to back
            for (int i = 0; i < qs.size(); i++) {
                RawHttp.Response r = c.read();
                assertNotNull(r, "connection closed after " + i + " of " + qs.size() + " responses");
                assertEquals(200, r.status(), "response " + i + ": " + r);
                assertEquals(cluster.expected(qs.get(i)), r.text(), model + ": response " + i + " is not the answer to request " + i);
            }
            // still usable afterwards
            YcsbQuery last = new YcsbQuery(3, Size.SMALL, 42);
            RawHttp.Response r = c.exchange(RawHttp.get(TestCluster.path(last)));
            assertEquals(cluster.expected(last), r.text());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "type2b", "thread-8"})
    void a404InThePipelineKeepsItsPlace(String model) throws Exception {
        cluster.server.switchTo(model);
        List<YcsbQuery> qs = mixed(10);
        StringBuilder all = new StringBuilder();
        for (int i = 0; i < qs.size(); i++) {
            all.append(RawHttp.get(i == 3 ? "/nope/" + i : TestCluster.path(qs.get(i))));
        }
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write(all.toString());
            for (int i = 0; i < qs.size(); i++) {
                RawHttp.Response r = c.read();
                assertNotNull(r, "connection closed after " + i + " responses");
                if (i == 3) {
                    assertEquals(404, r.status(), r.toString());
                    assertTrue(r.text().contains("/nope/3"), r.toString());
                } else {
                    assertEquals(200, r.status(), "response " + i + ": " + r);
                    assertEquals(cluster.expected(qs.get(i)), r.text(), "response " + i);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "type2b", "thread-8"})
    void connectionCloseOnTheLastRequestClosesAfterAnsweringIt(String model) throws Exception {
        cluster.server.switchTo(model);
        List<YcsbQuery> qs = mixed(5);
        StringBuilder all = new StringBuilder();
        for (int i = 0; i < qs.size(); i++) {
            String p = TestCluster.path(qs.get(i));
            all.append(i == qs.size() - 1 ? RawHttp.getAndClose(p) : RawHttp.get(p));
        }
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write(all.toString());
            for (int i = 0; i < qs.size(); i++) {
                RawHttp.Response r = c.read();
                assertNotNull(r, "connection closed after " + i + " responses");
                assertEquals(200, r.status(), r.toString());
                assertEquals(cluster.expected(qs.get(i)), r.text(), "response " + i);
                if (i == qs.size() - 1) {
                    assertEquals("close", r.header("connection"), r.toString());
                }
            }
            assertTrue(c.closedByServer(), "server kept the connection open after Connection: close");
        }
    }
}
