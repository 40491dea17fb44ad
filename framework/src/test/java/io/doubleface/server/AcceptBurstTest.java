package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.server.internal.HttpListener;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.ServerChannelRecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * A read of the listening socket takes a whole burst of connections. Netty's epoll transport asks
 * its server channels' read policy after each accept whether to go on, with a "maybe more data"
 * test that compares the accepted descriptor with one byte attempted, so it is false for every
 * descriptor but 1; with Netty's policy that ends the read after one connection, and the rest of a
 * burst waits one loop iteration each (docs/benchmarks.md, "The layouts users run").
 */
class AcceptBurstTest {

    /** Accepts as Netty's epoll server channel does: one byte attempted, the descriptor as bytes read. */
    private static int acceptsInOneRead(RecvByteBufAllocator allocator, int queued) {
        RecvByteBufAllocator.ExtendedHandle h = (RecvByteBufAllocator.ExtendedHandle) allocator.newHandle();
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            h.reset(ch.config());
            h.attemptedBytesRead(1);
            int accepted = 0;
            int fd = 57;
            do {
                h.lastBytesRead(accepted < queued ? fd++ : -1);
                if (h.lastBytesRead() == -1) {
                    break; // EAGAIN: the accept queue is empty
                }
                h.incMessagesRead(1);
                accepted++;
            } while (h.continueReading(() -> h.lastBytesRead() == h.attemptedBytesRead()));
            h.readComplete();
            return accepted;
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void oneReadAcceptsEveryQueuedConnection() {
        assertEquals(300, acceptsInOneRead(HttpListener.acceptAllocator(), 300));
        assertEquals(1, acceptsInOneRead(HttpListener.acceptAllocator(), 1));
        assertEquals(0, acceptsInOneRead(HttpListener.acceptAllocator(), 0));
    }

    @Test
    void oneReadStopsAtTheBound() {
        assertEquals(HttpListener.ACCEPTS_PER_READ, acceptsInOneRead(HttpListener.acceptAllocator(), 5_000));
    }

    @Test
    void nettysOwnPolicyTakesOneConnectionPerRead() {
        // why the server sets its own: with Netty's, 300 queued connections take 300 reads
        int n = acceptsInOneRead(new ServerChannelRecvByteBufAllocator(), 300);
        assertEquals(1, n);
    }
}
