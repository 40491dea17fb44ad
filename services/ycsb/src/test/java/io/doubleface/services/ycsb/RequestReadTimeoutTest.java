package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.HttpLimits;
import java.net.SocketException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client trickling a request (one byte now and then, each resetting the idle timeout) gets
 * {@code 408} and is disconnected after the request read timeout; a keep-alive connection that is
 * merely idle between requests is left alone.
 */
@Timeout(60)
class RequestReadTimeoutTest {

    static final Duration TIMEOUT = Duration.ofMillis(400);
    static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestCluster.builder(4).limits(HttpLimits.DEFAULTS.withRequestReadTimeout(TIMEOUT)).start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    /** Sends {@code bytes} one byte every 50 ms until the server answers or closes; returns its answer. */
    static RawHttp.Response trickle(RawHttp c, String bytes) throws Exception {
        for (int i = 0; i < bytes.length() && !c.hasInput(); i++) {
            try {
                c.write(bytes.substring(i, i + 1));
            } catch (SocketException e) {
                break; // closed by the server
            }
            Thread.sleep(50);
        }
        return c.read();
    }

    @Test
    void aTrickledHeadGets408AndTheConnectionCloses() throws Exception {
        long before = cluster.requests("request_timeout");
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write("GET /query?key=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            RawHttp.Response r = trickle(c, "X-Slow: " + "a".repeat(200)); // 200 × 50 ms = 10 s, far past the timeout
            assertEquals(408, r.status(), r.toString());
            assertTrue(r.text().startsWith("request head not received within 400 ms"), r.text());
            assertTrue(c.closedByServer());
        }
        assertEquals(before + 1, cluster.requests("request_timeout"));
    }

    @Test
    void aTrickledBodyGets408() throws Exception {
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            c.write("POST /query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 300\r\n\r\n");
            RawHttp.Response r = trickle(c, "x".repeat(300));
            assertEquals(408, r.status(), r.toString());
            assertTrue(r.text().startsWith("request body not received within 400 ms"), r.text());
        }
    }

    @Test
    void anIdleKeepAliveConnectionBetweenRequestsIsLeftAlone() throws Exception {
        YcsbQuery q = new YcsbQuery(2, Size.SMALL, 4);
        try (RawHttp c = new RawHttp(cluster.server.port())) {
            assertEquals(200, c.exchange(RawHttp.get(TestCluster.path(q))).status());
            Thread.sleep(TIMEOUT.toMillis() * 4); // several checks with nothing under way
            RawHttp.Response r = c.exchange(RawHttp.get(TestCluster.path(q)));
            assertEquals(200, r.status(), r.toString());
            assertEquals(cluster.expected(q), r.text());
        }
    }
}
