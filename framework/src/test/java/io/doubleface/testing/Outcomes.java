package io.doubleface.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.ShardException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoop;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ReplyListener} for tests of any driver: records the outcome of each tag
 * {@code 0 .. n-1} — the reply (a {@code ByteBuf} reply as a copy of its bytes, released at once;
 * any other reply as it is, {@code null} included) or the failure — and notes any callback off the
 * loop or any second callback for a tag. Callbacks arrive on the loop; the test thread reads after
 * {@link #await()}.
 */
public class Outcomes implements ReplyListener {

    /** Longest a test waits for outcomes before calling it a hang: {@value} s. */
    public static final long HANG_SECONDS = 30;

    private final EventLoop loop;
    private static final Object NONE = new Object();

    private final Object[] replies;
    private final ShardException[] failures;
    private final int[] callbacks;
    private final CountDownLatch done;
    private volatile String misuse;

    public Outcomes(EventLoop loop, int n) {
        this.loop = loop;
        this.replies = new Object[n];
        java.util.Arrays.fill(replies, NONE);
        this.failures = new ShardException[n];
        this.callbacks = new int[n];
        this.done = new CountDownLatch(n);
    }

    @Override
    public void onReply(int tag, Object value) {
        if (value instanceof ByteBuf reply) {
            try {
                replies[tag] = ByteBufUtil.getBytes(reply);
            } finally {
                reply.release();
            }
        } else {
            replies[tag] = value;
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

    /** {@return the bytes of {@code tag}'s {@code ByteBuf} reply}; fails if the call failed */
    public byte[] reply(int tag) {
        return (byte[]) value(tag);
    }

    /** {@return {@code tag}'s reply (bytes for a {@code ByteBuf} reply; possibly {@code null})}; fails if the call failed */
    public Object value(int tag) {
        assertTrue(replies[tag] != NONE, () -> "tag " + tag + " failed: " + failures[tag]);
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
        return replies[tag] != NONE;
    }

    public void assertFailed(int tag, ShardException.Kind kind) {
        assertEquals(kind, failure(tag).kind(), () -> "tag " + tag + ": " + failures[tag]);
    }
}
