package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code FanoutServer.stop(grace)}: the request in flight gets its answer, a request arriving on
 * its connection meanwhile is served too and its answer closes the connection, new connections are
 * refused, the admin listener's {@code /ready} turns {@code 503} at the start of the drain while
 * {@code /live} stays {@code 200}, and stop returns once nothing is in flight (not after the whole
 * grace); a second, concurrent stop returns when the first has closed the server.
 */
@Timeout(60)
class DrainTest {

    @Test
    void stopAnswersTheRequestInFlightAndRefusesNewOnes() throws Exception {
        // thread-8 with 300 ms of work per reply: a fanout-2 request takes about 600 ms
        try (TestCluster c = TestCluster.builder(4).configuration("thread-8")
                .replyWorkNanos(TimeUnit.MILLISECONDS.toNanos(300)).start();
                RawHttp client = new RawHttp(c.server.port())) {
            assertProbe(c, "/ready", 200, "{\"ready\":true}\n");
            assertProbe(c, "/live", 200, "{\"live\":true}\n");
            YcsbQuery slow = new YcsbQuery(2, Size.SMALL, 5);
            client.write(RawHttp.get(TestCluster.path(slow)));
            for (int i = 0; i < 1000 && c.server.internals().engine().inFlight() == 0; i++) {
                Thread.sleep(5); // until the request is in flight (admitted)
            }
            assertEquals(1, c.server.internals().engine().inFlight());
            long[] stopped = new long[1];
            Thread stopper = Thread.ofPlatform().name("stopper").start(() -> {
                long t0 = System.nanoTime();
                c.server.stop(Duration.ofSeconds(20));
                stopped[0] = System.nanoTime() - t0;
            });
            Thread.sleep(100); // draining now
            assertProbe(c, "/ready", 503, "{\"ready\":false,\"reason\":\"draining\"}\n");
            assertProbe(c, "/live", 200, "{\"live\":true}\n");
            // a second stop (e.g. a shutdown hook racing the embedding code) returns only when closed
            long[] inFlightWhenSecondReturned = {-1};
            Thread secondStopper = Thread.ofPlatform().name("second-stopper").start(() -> {
                c.server.stop(Duration.ofSeconds(20));
                inFlightWhenSecondReturned[0] = c.server.internals().engine().inFlight();
            });
            YcsbQuery late = new YcsbQuery(1, Size.SMALL, 1);
            client.write(RawHttp.get(TestCluster.path(late)));

            RawHttp.Response first = client.read();
            assertEquals(200, first.status(), first.toString());
            assertEquals(c.expected(slow), first.text());
            RawHttp.Response second = client.read();
            assertEquals(200, second.status(), second.toString());
            assertEquals(c.expected(late), second.text());
            assertEquals("close", second.header("connection"));
            assertTrue(client.closedByServer());

            IOException refused = assertThrows(IOException.class, () -> {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", c.server.port()), 2000);
                }
            });
            assertTrue(refused.getMessage() != null, refused.toString());

            stopper.join(30_000);
            assertFalse(stopper.isAlive(), "stop did not return");
            secondStopper.join(30_000);
            assertFalse(secondStopper.isAlive(), "the second stop did not return");
            assertEquals(0, inFlightWhenSecondReturned[0], "the second stop returned before the drain was over");
            assertTrue(stopped[0] < TimeUnit.SECONDS.toNanos(20), "stop waited the whole grace: nothing was in flight");
            assertEquals(0, c.server.internals().engine().inFlight());
        }
    }

    @Test
    void aDrainDelayKeepsAcceptingWhileReadyAnswers503() throws Exception {
        try (TestCluster c = TestCluster.builder(4).configuration("doubleface").start()) {
            long[] stopped = new long[1];
            Thread stopper = Thread.ofPlatform().name("stopper").start(() -> {
                long t0 = System.nanoTime();
                c.server.stop(Duration.ofSeconds(3), Duration.ofSeconds(10));
                stopped[0] = System.nanoTime() - t0;
            });
            for (int i = 0; i < 1000 && !c.server.internals().engine().isDraining(); i++) {
                Thread.sleep(2);
            }
            assertTrue(c.server.internals().engine().isDraining());
            assertProbe(c, "/ready", 503, "{\"ready\":false,\"reason\":\"draining\"}\n");
            // a new connection during the delay is still accepted and served; its answer closes it
            YcsbQuery q = new YcsbQuery(2, Size.SMALL, 9);
            try (RawHttp late = new RawHttp(c.server.port())) {
                late.write(RawHttp.get(TestCluster.path(q)));
                RawHttp.Response r = late.read();
                assertEquals(200, r.status(), r.toString());
                assertEquals(c.expected(q), r.text());
                assertEquals("close", r.header("connection"));
                assertTrue(late.closedByServer());
            }
            stopper.join(30_000);
            assertFalse(stopper.isAlive(), "stop did not return");
            assertTrue(stopped[0] >= TimeUnit.SECONDS.toNanos(3), "the listener stayed open for the delay");
            IOException refused = assertThrows(IOException.class, () -> {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", c.server.port()), 2000);
                }
            });
            assertTrue(refused.getMessage() != null, refused.toString());
        }
    }

    /** A probe of the admin listener, with no credential. */
    private static void assertProbe(TestCluster c, String path, int status, String body) throws Exception {
        java.net.http.HttpResponse<String> r = c.adminGet(path);
        assertEquals(status, r.statusCode(), path + ": " + r.body());
        assertEquals(body, r.body(), path);
        assertEquals("application/json", r.headers().firstValue("content-type").orElse(""), path);
    }
}
