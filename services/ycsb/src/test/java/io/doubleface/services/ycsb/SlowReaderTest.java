package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.HttpLimits;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client that pipelines requests for large answers and never reads them: the server stops
 * reading from it, disconnects it once it leaves more than {@code maxQueuedBytes} unread (or reads
 * nothing for {@code slowReaderTimeout}), counts it, and keeps answering everybody else.
 */
@Timeout(120)
class SlowReaderTest {

    static final int SHARDS = 8;
    /** ~8 × 20 kB = 160 kB per answer. */
    static final YcsbQuery LARGE = new YcsbQuery(8, Size.LARGE, 3);
    static final YcsbQuery SMALL = new YcsbQuery(2, Size.SMALL, 5);

    /** Opens a connection that reads nothing (a tiny receive window) and pipelines {@code n} large requests. */
    static Socket neverReading(int port, int n) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        OutputStream out = s.getOutputStream();
        byte[] one = ("GET " + TestCluster.path(LARGE) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < n; i++) {
            try {
                out.write(one);
            } catch (SocketException e) {
                break; // the server closed it already
            }
        }
        out.flush();
        return s;
    }

    static long slowReadersClosed(TestCluster c) throws Exception {
        return JsonDoc.path(c.stats(), "slow_readers_closed").asLong();
    }

    /** Waits until the server has closed {@code n} slow readers; meanwhile checks that others are served. */
    static long awaitClosed(TestCluster c, long n, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        long closed;
        while ((closed = slowReadersClosed(c)) < n && System.nanoTime() < deadline) {
            var r = c.get(SMALL);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(c.expected(SMALL), r.body());
            TimeUnit.MILLISECONDS.sleep(50);
        }
        return closed;
    }

    @Test
    void aClientLeavingMoreThanMaxQueuedBytesUnreadIsDisconnectedWhileOthersAreServed() throws Exception {
        HttpLimits limits = HttpLimits.DEFAULTS.withSlowReader(1 << 20, Duration.ofMinutes(5));
        try (TestCluster c = TestCluster.builder(SHARDS).limits(limits).start();
                Socket slow = neverReading(c.server.port(), 128)) {
            assertEquals(1, awaitClosed(c, 1, Duration.ofSeconds(60)), "slow reader not disconnected");
            assertEquals(0, JsonDoc.path(c.stats(), "requests", "internal_error").asLong());
            // the server goes on answering, and the answers are right
            for (int i = 0; i < 20; i++) {
                assertEquals(c.expected(LARGE), c.get(LARGE).body());
            }
        }
    }

    @Test
    void clientsBehindTogetherOverTheServerBoundAreDisconnectedAndTheCountReturnsToZero() throws Exception {
        // per connection far away (64 MiB, 5 min): only the server-wide bound (3 MiB) can close them
        HttpLimits limits = HttpLimits.DEFAULTS.withSlowReader(64L << 20, Duration.ofMinutes(5));
        try (TestCluster c = TestCluster.builder(SHARDS).limits(limits)
                        .tweak(b -> b.maxQueuedBytesTotal(3L << 20)).start();
                Socket s1 = neverReading(c.server.port(), 64);
                Socket s2 = neverReading(c.server.port(), 64);
                Socket s3 = neverReading(c.server.port(), 64)) {
            assertTrue(awaitClosed(c, 1, Duration.ofSeconds(60)) >= 1, "no client closed at the server bound");
            long bound = JsonDoc.path(c.stats(), "slow_readers_closed_server_bound").asLong();
            assertTrue(bound >= 1, "closed, but not by the server bound: " + c.stats());
            assertEquals(0, JsonDoc.path(c.stats(), "requests", "internal_error").asLong());
            for (int i = 0; i < 10; i++) {
                assertEquals(c.expected(LARGE), c.get(LARGE).body());
            }
            s1.close();
            s2.close();
            s3.close();
            // every connection's share leaves the count when it closes
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long behind;
            while ((behind = JsonDoc.path(c.stats(), "behind_bytes").asLong()) != 0 && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(50);
            }
            assertEquals(0, behind, "bytes still counted as behind after every slow client left");
        }
    }

    @Test
    void aClientReadingNothingForTheSlowReaderTimeoutIsDisconnected() throws Exception {
        // the byte bound is far away: only the timeout can close this one
        HttpLimits limits = HttpLimits.DEFAULTS.withSlowReader(256L << 20, Duration.ofSeconds(1));
        try (TestCluster c = TestCluster.builder(SHARDS).limits(limits).start();
                Socket slow = neverReading(c.server.port(), 40)) {
            long t0 = System.nanoTime();
            assertEquals(1, awaitClosed(c, 1, Duration.ofSeconds(30)), "slow reader not disconnected");
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= 900, "closed after " + ms + " ms, before the 1 s timeout");
        }
    }

    @Test
    void aClientReadingEveryAnswerIsNeverDisconnected() throws Exception {
        HttpLimits limits = HttpLimits.DEFAULTS.withSlowReader(4L << 20, Duration.ofSeconds(2));
        try (TestCluster c = TestCluster.builder(SHARDS).limits(limits).start();
                RawHttp client = new RawHttp(c.server.port())) {
            // one large answer at a time, each read whole before the next request
            for (int i = 0; i < 20; i++) {
                RawHttp.Response r = client.exchange(RawHttp.get(TestCluster.path(LARGE)));
                assertEquals(200, r.status());
                assertEquals(c.expected(LARGE), r.text());
            }
            assertEquals(0, slowReadersClosed(c));
        }
    }
}
