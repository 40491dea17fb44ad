package io.doubleface.services.ycsb;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.Outcome;
import io.doubleface.server.HttpLimits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Bad upstream input over raw sockets: every broken request gets its documented status and a
 * short text reason, a broken request stream is closed after the answer, a merely wrong request
 * (404, 405, 400 from the binding) leaves the connection usable, each outcome is counted exactly
 * once in {@code /admin/stats}, and the server keeps serving.
 *
 * <p>The limits are small ({@link #LIMITS}) so each offending request is a few kB that the server
 * reads whole before it closes (a close with unread input would turn into a TCP reset).
 */
class HttpBadInputTest {

    static final int SHARDS = 20;
    static final HttpLimits LIMITS = new HttpLimits(1024, 2048, 4096, 128, Duration.ofSeconds(60));
    static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestCluster.builder(SHARDS).limits(LIMITS).start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    static final YcsbQuery GOOD = new YcsbQuery(5, Size.SMALL, 17);

    @Test
    void anHttpVersionOtherThan1Gets505() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("GET " + TestCluster.path(GOOD) + " HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n");
            assertEquals(505, r.status(), r.toString());
            assertTextReason(r, "HTTP version HTTP/2.0 not supported");
            assertTrue(c.closedByServer());
        }
        assertCounted(before, Outcome.VERSION_NOT_SUPPORTED);
    }

    @Test
    void http11WithoutHostOrWithTwoGets400AndHttp10WithoutHostIsServed() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("GET " + TestCluster.path(GOOD) + " HTTP/1.1\r\n\r\n");
            assertEquals(400, r.status(), r.toString());
            assertTextReason(r, "missing Host header");
        }
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("GET " + TestCluster.path(GOOD) + " HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
            assertEquals(400, r.status(), r.toString());
            assertTextReason(r, "Host header given 2 times");
        }
        assertCounted(before, Outcome.BAD_REQUEST, Outcome.BAD_REQUEST);
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("GET " + TestCluster.path(GOOD) + " HTTP/1.0\r\n\r\n");
            assertEquals(200, r.status(), r.toString());
            assertEquals(cluster.expected(GOOD), r.text());
        }
    }

    @Test
    void obsFoldGets400AndCloseWhereverTheHeadIsSplitButAnIndentedBodyIsNoFold() throws Exception {
        Map<Outcome, Long> before = outcomes();
        String folded = "GET " + TestCluster.path(GOOD) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: a\r\n\tb\r\n\r\n";
        // in one write, and split just before the folding tab (the fold spans two reads)
        int tab = folded.indexOf('\t');
        for (String[] parts : new String[][] {{folded}, {folded.substring(0, tab), folded.substring(tab)}}) {
            try (RawHttp c = new RawHttp(cluster.server.port())) {
                c.write(parts[0]);
                if (parts.length > 1) {
                    Thread.sleep(50);
                    c.write(parts[1]);
                }
                RawHttp.Response r = c.read();
                assertEquals(400, r.status(), r.toString());
                assertTextReason(r, "obs-fold");
                assertTrue(c.closedByServer(), "connection left open after an obs-fold");
            }
        }
        // a good request, then one with a fold by space: the first is answered, the second refused
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write(RawHttp.get(TestCluster.path(GOOD)) + folded.replace('\t', ' '));
            assertGood(c.read());
            RawHttp.Response r = c.read();
            assertEquals(400, r.status(), String.valueOf(r));
            assertTextReason(r, "obs-fold");
        }
        // line breaks followed by spaces in a body are the body's business, and the request
        // after it on the same connection is scanned from its own first byte
        String body = "{\r\n  \"a\": 1\r\n}";
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write("GET " + TestCluster.path(GOOD) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                    + body.length() + "\r\n\r\n" + body + RawHttp.get(TestCluster.path(GOOD)));
            assertGood(c.read());
            assertGood(c.read());
        }
        assertCounted(before, Outcome.BAD_REQUEST, Outcome.BAD_REQUEST, Outcome.OK, Outcome.BAD_REQUEST, Outcome.OK,
                Outcome.OK);
    }

    @Test
    void anAnswerToHeadHasNoBodySoTheNextAnswerOnTheConnectionIsIntact() throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", cluster.server.port())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(("HEAD " + TestCluster.path(GOOD) + " HTTP/1.1\r\nHost: a\r\n\r\n"
                    + RawHttp.get(TestCluster.path(GOOD))).getBytes(StandardCharsets.US_ASCII));
            String expected = cluster.expected(GOOD);
            StringBuilder got = new StringBuilder();
            byte[] buf = new byte[8192];
            java.io.InputStream in = s.getInputStream();
            while (!got.toString().endsWith(expected)) {
                int n = in.read(buf);
                assertTrue(n > 0, "connection closed after: " + got);
                got.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
            }
            String text = got.toString();
            assertTrue(text.startsWith("HTTP/1.1 405"), text);
            int endOfFirstHead = text.indexOf("\r\n\r\n") + 4;
            // no body after the HEAD answer's head: the GET's answer follows at once
            assertTrue(text.startsWith("HTTP/1.1 200", endOfFirstHead), text);
        }
    }

    @Test
    void malformedRequestLineGets400WithReasonAndClose() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("GARBAGE\r\n\r\n");
            assertEquals(400, r.status(), r.toString());
            assertTextReason(r, "malformed");
            assertEquals("close", r.header("connection"), r.toString());
            assertTrue(c.closedByServer(), "connection left open after a malformed request");
        }
        assertCounted(before, Outcome.BAD_REQUEST);
    }

    @Test
    void requestLineLongerThanTheLimitGets414() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange(RawHttp.get("/query?key=1&pad=" + "x".repeat(LIMITS.maxInitialLineLength())));
            assertEquals(414, r.status(), r.toString());
            assertTextReason(r, Integer.toString(LIMITS.maxInitialLineLength()));
            assertTrue(c.closedByServer(), "connection left open after a 414");
        }
        assertCounted(before, Outcome.URI_TOO_LONG);
    }

    @Test
    void headersLargerThanTheLimitGet431() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("GET " + TestCluster.path(GOOD) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
                    + "b".repeat(LIMITS.maxHeaderSize() + 100) + "\r\n\r\n");
            assertEquals(431, r.status(), r.toString());
            assertTextReason(r, Integer.toString(LIMITS.maxHeaderSize()));
            assertTrue(c.closedByServer(), "connection left open after a 431");
        }
        assertCounted(before, Outcome.HEADERS_TOO_LARGE);
    }

    @Test
    void declaredBodyLargerThanTheLimitGets413() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("GET " + TestCluster.path(GOOD)
                    + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000\r\n\r\n");
            assertEquals(413, r.status(), r.toString());
            assertTextReason(r, "10000000");
            assertTrue(c.closedByServer(), "connection left open after a 413");
        }
        assertCounted(before, Outcome.BODY_TOO_LARGE);
    }

    @Test
    void chunkedBodyGrowingPastTheLimitGets413() throws Exception {
        Map<Outcome, Long> before = outcomes();
        StringBuilder req = new StringBuilder("GET " + TestCluster.path(GOOD)
                + " HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        int chunk = 1000;
        for (int sent = 0; sent <= LIMITS.maxBodySize(); sent += chunk) {
            req.append(Integer.toHexString(chunk)).append("\r\n").append("c".repeat(chunk)).append("\r\n");
        }
        req.append("0\r\n\r\n");
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange(req.toString());
            assertEquals(413, r.status(), r.toString());
            assertTextReason(r, Integer.toString(LIMITS.maxBodySize()));
            assertTrue(c.closedByServer(), "connection left open after a 413");
        }
        assertCounted(before, Outcome.BODY_TOO_LARGE);
    }

    @Test
    void unknownPathGets404AndTheConnectionStaysUsable() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange(RawHttp.get("/nope"));
            assertEquals(404, r.status(), r.toString());
            assertTextReason(r, "/nope");
            assertGood(c.exchange(RawHttp.get(TestCluster.path(GOOD))));
        }
        assertCounted(before, Outcome.NOT_FOUND, Outcome.OK);
    }

    @Test
    void postGets405WithAllowGetAndTheConnectionStaysUsable() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange("POST " + TestCluster.path(GOOD)
                    + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n");
            assertEquals(405, r.status(), r.toString());
            assertEquals("GET", r.header("allow"), r.toString());
            assertTextReason(r, "POST");
            assertGood(c.exchange(RawHttp.get(TestCluster.path(GOOD))));
        }
        assertCounted(before, Outcome.METHOD_NOT_ALLOWED, Outcome.OK);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "fanout=0                 | fanout",
            "fanout=abc               | fanout",
            "fanout=21                | fanout",
            "size=huge                | size",
            "key=-1                   | key",
            "key=200                  | key",
            "x=1                      | x",
            "fanout=1&fanout=2        | fanout",
    })
    void badParameterGets400NamingItAndTheConnectionStaysUsable(String query, String parameter) throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange(RawHttp.get("/query?" + query));
            assertEquals(400, r.status(), r.toString());
            assertTextReason(r, parameter);
            assertTrue(r.text().startsWith(parameter) || r.text().contains(" " + parameter),
                    "reason should name the parameter '" + parameter + "': " + r.text());
            assertGood(c.exchange(RawHttp.get(TestCluster.path(GOOD))));
        }
        assertCounted(before, Outcome.BAD_REQUEST, Outcome.OK);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"/query?key=%zz", "/query?key=%4", "/que%zzry?key=1", "/query?%=1"})
    void malformedPercentEncodingGets400AndTheConnectionStaysUsable(String target) throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            RawHttp.Response r = c.exchange(RawHttp.get(target));
            assertEquals(400, r.status(), r.toString());
            assertTextReason(r, "malformed");
            assertGood(c.exchange(RawHttp.get(TestCluster.path(GOOD))));
        }
        assertCounted(before, Outcome.BAD_REQUEST, Outcome.OK);
    }

    @Test
    void brokenRequestPipelinedAfterAGoodOneIsAnsweredInOrderThenClosed() throws Exception {
        Map<Outcome, Long> before = outcomes();
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write(RawHttp.get(TestCluster.path(new YcsbQuery(20, Size.MEDIUM, 3))) + "GARBAGE\r\n\r\n"
                    + RawHttp.get(TestCluster.path(GOOD)));
            RawHttp.Response first = c.read();
            assertEquals(200, first.status(), first.toString());
            assertEquals(cluster.expected(20, Size.MEDIUM, 3), first.text());
            RawHttp.Response second = c.read();
            assertEquals(400, second.status(), String.valueOf(second));
            assertTrue(c.closedByServer(), "requests after a malformed one must be discarded and the connection closed");
        }
        assertCounted(before, Outcome.OK, Outcome.BAD_REQUEST);
    }

    @Test
    void serverKeepsServingAfterEveryKindOfBadInput() throws Exception {
        String[] bad = {
            "GARBAGE\r\n\r\n",
            RawHttp.get("/query?pad=" + "x".repeat(2000)),
            "GET /query HTTP/1.1\r\nHost: t\r\nX-Big: " + "b".repeat(3000) + "\r\n\r\n",
            "GET /query HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000\r\n\r\n",
            "GET /query HTTP/1.1\r\nHost: t\r\nContent-Length: nope\r\n\r\n",
            "GET /query HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "\u0000\u0001\u0002\r\n\r\n",
            RawHttp.get("/nope"),
            RawHttp.get("/query?fanout=abc"),
        };
        for (String b : bad) {
            try (RawHttp c = new RawHttp(cluster.server.port())) {
                RawHttp.Response r = c.exchange(b);
                int s = r.status();
                assertTrue(s >= 400 && s < 500, "expected a 4xx for " + b.substring(0, Math.min(40, b.length())) + ": " + r);
            }
        }
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            assertGood(c.exchange(RawHttp.get(TestCluster.path(GOOD))));
        }
        assertEquals(200, cluster.get(GOOD).statusCode());
        Map<String, Object> stats = cluster.stats();
        assertEquals(0, JsonDoc.path(stats, "requests", "internal_error").asLong(), "no 500 for bad input");
    }

    @Test
    void idleConnectionIsClosedAfterTheIdleTimeout() throws Exception {
        HttpLimits shortIdle = new HttpLimits(1024, 2048, 4096, 128, Duration.ofMillis(200));
        try (TestCluster c = TestCluster.builder(SHARDS).limits(shortIdle).start();
                RawHttp conn = new RawHttp(c.server.port())) {
            RawHttp.Response r = conn.exchange(RawHttp.get(TestCluster.path(GOOD)));
            assertEquals(200, r.status(), r.toString());
            assertTrue(conn.closedByServer(), "an idle keep-alive connection must be closed after the idle timeout");
        }
    }

    @Test
    void connectionWaitingForAnAnswerIsNotClosedForIdleness() throws Exception {
        HttpLimits shortIdle = new HttpLimits(1024, 2048, 4096, 128, Duration.ofMillis(100));
        try (BlackHole hole = new BlackHole();
                TestCluster c = TestCluster.builder(SHARDS).limits(shortIdle).deadline(Duration.ofMillis(1500))
                        .shardAt(SHARDS - 1, hole.address()).start();
                RawHttp conn = new RawHttp(c.server.port())) {
            // calls the silent shard: no traffic on the connection until the deadline answers it
            RawHttp.Response r = conn.exchange(RawHttp.get(TestCluster.path(new YcsbQuery(1, Size.SMALL, SHARDS - 1))));
            assertEquals(504, r.status(), r.toString());
            assertTrue(conn.closedByServer(), "idle again after the answer: closed");
        }
    }

    // ---- helpers ---------------------------------------------------------------------------------

    static void assertGood(RawHttp.Response r) {
        assertEquals(200, r.status(), r.toString());
        assertEquals(cluster.expected(GOOD), r.text());
    }

    static void assertTextReason(RawHttp.Response r, String mentions) {
        assertTrue(r.header("content-type") != null && r.header("content-type").startsWith("text/plain"),
                "reason should be text/plain: " + r);
        String text = r.text().strip();
        assertTrue(!text.isEmpty() && text.length() < 300, "short reason expected: " + r);
        assertTrue(text.contains(mentions), "reason should mention '" + mentions + "': " + text);
    }

    static Map<Outcome, Long> outcomes() throws Exception {
        Map<String, Object> stats = cluster.stats();
        Map<Outcome, Long> m = new EnumMap<>(Outcome.class);
        for (Outcome o : Outcome.values()) {
            m.put(o, JsonDoc.path(stats, "requests", o.label()).asLong());
        }
        return m;
    }

    /** Each of {@code expected} was counted once more than in {@code before}, and nothing else changed. */
    static void assertCounted(Map<Outcome, Long> before, Outcome... expected) throws Exception {
        Map<Outcome, Long> want = new EnumMap<>(before);
        for (Outcome o : expected) {
            want.merge(o, 1L, Long::sum);
        }
        assertEquals(want, outcomes(), "requests by outcome in /admin/stats");
    }
}
