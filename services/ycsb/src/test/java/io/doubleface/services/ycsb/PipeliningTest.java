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

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "type2a-1f2b", "thread-8"})
    void pipelineDeeperThanTheServerReadsAheadIsAnsweredInOrder(String model) throws Exception {
        cluster.server.switchTo(model);
        int n = 3 * io.doubleface.server.HttpLimits.DEFAULT_MAX_PIPELINED; // reading pauses and resumes
        List<YcsbQuery> qs = new ArrayList<>();
        StringBuilder all = new StringBuilder();
        for (int i = 0; i < n; i++) {
            YcsbQuery q = new YcsbQuery(1 + i % 7, Size.SMALL, i % TestCluster.RECORDS);
            qs.add(q);
            all.append(RawHttp.get(TestCluster.path(q)));
        }
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write(all.toString());
            for (int i = 0; i < n; i++) {
                RawHttp.Response r = c.read();
                assertNotNull(r, "connection closed after " + i + " of " + n + " responses");
                assertEquals(200, r.status(), "response " + i + ": " + r);
                assertEquals(cluster.expected(qs.get(i)), r.text(), "response " + i);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "type2b", "type1-8", "thread-8"})
    void clientLeavingWithRequestsInFlightLeaksNothingAndTheServerGoesOn(String model) throws Exception {
        cluster.server.switchTo(model);
        long okBefore = cluster.requests("ok");
        long admittedBefore = cluster.requests("admitted");
        List<YcsbQuery> qs = mixed(30);
        StringBuilder all = new StringBuilder();
        for (YcsbQuery q : qs) {
            all.append(RawHttp.get(TestCluster.path(q)));
        }
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write(all.toString());
            assertNotNull(c.read()); // one answered; the rest in flight or parked in order
        } // and gone
        // every admitted request still completes exactly once, and the server keeps serving
        long guard = System.nanoTime() + TestCluster.GENEROUS.toNanos();
        while (inFlight(cluster) > 0) {
            assertTrue(System.nanoTime() - guard < 0, "requests of the departed client never completed");
            Thread.sleep(10);
        }
        long admitted = cluster.requests("admitted") - admittedBefore;
        assertTrue(admitted >= 1 && admitted <= qs.size(), "admitted " + admitted);
        assertEquals(admitted, cluster.requests("ok") - okBefore, "admitted requests of the departed client end ok");
        YcsbQuery q = new YcsbQuery(20, Size.MEDIUM, 5);
        assertEquals(cluster.expected(q), cluster.get(q).body());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "thread-8"})
    void requestsPipelinedAfterConnectionCloseAreNotProcessed(String model) throws Exception {
        cluster.server.switchTo(model);
        long admittedBefore = cluster.requests("admitted");
        long okBefore = cluster.requests("ok");
        long notFoundBefore = cluster.requests("not_found");
        YcsbQuery first = new YcsbQuery(5, Size.SMALL, 21);
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            // RFC 9112 §9.6: after a request with "close", the server MUST NOT process further requests
            c.write(RawHttp.getAndClose(TestCluster.path(first)) + RawHttp.get(TestCluster.path(new YcsbQuery(20, Size.LARGE, 22)))
                    + RawHttp.get("/nope"));
            RawHttp.Response r = c.read();
            assertEquals(200, r.status(), r.toString());
            assertEquals(cluster.expected(first), r.text());
            assertTrue(c.closedByServer(), "closed after the response to the close request");
        }
        assertEquals(admittedBefore + 1, cluster.requests("admitted"), "requests after the close request were admitted");
        assertEquals(okBefore + 1, cluster.requests("ok"));
        assertEquals(notFoundBefore, cluster.requests("not_found"), "a request after the close request was answered 404");
    }

    /** Requests admitted and not yet answered, from {@code /admin/stats}. */
    static long inFlight(TestCluster cluster) throws Exception {
        java.util.Map<String, Object> s = cluster.stats();
        long done = 0;
        for (String o : List.of("ok", "unavailable", "timeout", "internal_error")) {
            done += JsonDoc.path(s, "requests", o).asLong();
        }
        return JsonDoc.path(s, "requests", "admitted").asLong() - done;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "thread-8"})
    void http10WithoutKeepAliveIsClosedAfterTheResponse(String model) throws Exception {
        cluster.server.switchTo(model);
        YcsbQuery q = new YcsbQuery(5, Size.SMALL, 77);
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("GET " + TestCluster.path(q) + " HTTP/1.0\r\n\r\n");
            assertEquals(200, r.status(), r.toString());
            assertEquals(cluster.expected(q), r.text());
            assertTrue(c.closedByServer(), "an HTTP/1.0 connection without keep-alive must be closed");
        }
    }
}
