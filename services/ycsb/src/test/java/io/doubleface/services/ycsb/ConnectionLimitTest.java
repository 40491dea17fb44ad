package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One connection over {@code maxConnections} is closed on accept and counted; a freed slot is reused. */
@Timeout(60)
class ConnectionLimitTest {

    static final YcsbQuery Q = new YcsbQuery(2, Size.SMALL, 3);

    static long refused(TestCluster c) throws Exception {
        return JsonDoc.path(c.stats(), "connections_refused").asLong();
    }

    /** Whether a new connection is served (true) or closed by the server (false). */
    static boolean served(TestCluster c) throws Exception {
        try (RawHttp x = new RawHttp(c.server.port())) {
            x.write(RawHttp.get(TestCluster.path(Q)));
            RawHttp.Response r = x.read();
            return r != null && r.status() == 200 && r.text().equals(c.expected(Q));
        } catch (IOException e) {
            return false; // reset by the server
        }
    }

    @Test
    void aConnectionOverTheLimitIsClosedAndAFreedSlotIsReused() throws Exception {
        try (TestCluster c = TestCluster.start(4, b -> b.maxConnections(2))) {
            RawHttp a = new RawHttp(c.server.port());
            try (RawHttp b = new RawHttp(c.server.port())) {
                assertEquals(200, a.exchange(RawHttp.get(TestCluster.path(Q))).status());
                assertEquals(200, b.exchange(RawHttp.get(TestCluster.path(Q))).status());
                assertTrue(!served(c), "a third connection was served");
                assertEquals(1, refused(c));
                a.close();
                boolean again = false;
                for (int i = 0; i < 100 && !again; i++) { // until the server has seen 'a' close
                    again = served(c);
                    if (!again) {
                        Thread.sleep(20);
                    }
                }
                assertTrue(again, "the slot of a closed connection was not reused");
                assertEquals(200, b.exchange(RawHttp.get(TestCluster.path(Q))).status(), "b still served");
            }
        }
    }

    @Test
    void aConnectionPastItsAgeIsClosedAfterItsNextAnswer() throws Exception {
        try (TestCluster c = TestCluster.start(4, b -> b.maxConnectionAge(java.time.Duration.ofMillis(300)));
                RawHttp x = new RawHttp(c.server.port())) {
            RawHttp.Response young = x.exchange(RawHttp.get(TestCluster.path(Q)));
            assertEquals(200, young.status());
            assertEquals(null, young.header("connection"), "closed while young");
            Thread.sleep(400);
            RawHttp.Response old = x.exchange(RawHttp.get(TestCluster.path(Q)));
            assertEquals(200, old.status(), old.toString());
            assertEquals(c.expected(Q), old.text());
            assertEquals("close", old.header("connection"));
            assertTrue(x.closedByServer());
        }
    }
}
