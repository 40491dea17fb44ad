package io.doubleface.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.ReplyListener;
import io.doubleface.driver.ShardException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoop;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ReplyListener} for tests: records the outcome of each tag {@code 0 .. n-1} (reply bytes
 * or failure), releases every reply, and notes any callback off the loop or any second callback
 * for a tag. Callbacks arrive on the loop; the test thread reads after {@link #await()}.
 */
public class Outcomes implements ReplyListener {

    /** Longest a test waits for outcomes before calling it a hang: {@value} s. */
    public static final long HANG_SECONDS = 30;

    private final EventLoop loop;
    private final byte[][] replies;
    private final ShardException[] failures;
    private final int[] callbacks;
    private final CountDownLatch done;
    private volatile String misuse;

    public Outcomes(EventLoop loop, int n) {
        this.loop = loop;
        this.replies = new byte[n][];
        this.failures = new ShardException[n];
        this.callbacks = new int[n];
        this.done = new CountDownLatch(n);
    }

    @Override
    public void onReply(int tag, Object value) {
        ByteBuf reply = (ByteBuf) value;
        try {
            replies[tag] = ByteBufUtil.getBytes(reply);
        } finally {
            reply.release();
        }
        completed(tag);
    }

    @Override
    public void onFailure(int tag, ShardException cause) {
        failures[tag] = cause;
        completed(tag);
    }

    private void completed(int tag) {
        if (!loop.inEventLoop()) {
            misuse = "callback for tag " + tag + " on " + Thread.currentThread().getName() + ", not the client's loop";
        }
        if (++callbacks[tag] > 1) {
            misuse = "tag " + tag + " completed " + callbacks[tag] + " times";
        }
        done.countDown();
    }

    /** Waits for every tag's outcome; fails on a hang, a callback off the loop or a double callback. */
    public Outcomes await() throws InterruptedException {
        assertTrue(done.await(HANG_SECONDS, TimeUnit.SECONDS), "outcomes missing after " + HANG_SECONDS + " s: "
                + done.getCount() + " of " + callbacks.length);
        // Reads below happen-before via the latch; a misuse flag set later is caught by the next check.
        assertFalse(misuse != null, misuse);
        return this;
    }

    public byte[] reply(int tag) {
        assertNotNull(replies[tag], () -> "tag " + tag + " failed: " + failures[tag]);
        return replies[tag];
    }

    public ShardException failure(int tag) {
        assertNotNull(failures[tag], () -> "tag " + tag + " got a reply, expected a failure");
        return failures[tag];
    }

    public ShardException.Kind kind(int tag) {
        return failures[tag] == null ? null : failures[tag].kind();
    }

    public boolean replied(int tag) {
        return replies[tag] != null;
    }

    public void assertFailed(int tag, ShardException.Kind kind) {
        assertEquals(kind, failure(tag).kind(), () -> "tag " + tag + ": " + failures[tag]);
    }
}
