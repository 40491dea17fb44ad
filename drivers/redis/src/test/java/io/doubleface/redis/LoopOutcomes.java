package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.ReplyListener;
import io.doubleface.driver.ShardException;
import io.netty.channel.EventLoop;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ReplyListener} for the Redis tests: records the outcome of each tag {@code 0 .. n-1}
 * (the decoded reply, {@code null} included, or the failure), and notes any callback off the loop
 * or any second callback for a tag. Callbacks arrive on the loop; the test thread reads after
 * {@link #await()}. (The framework's {@code Outcomes} expects {@code ByteBuf} replies.)
 */
final class LoopOutcomes implements ReplyListener {

    /** Longest a test waits for outcomes before calling it a hang: {@value} s. */
    static final long HANG_SECONDS = 30;

    private static final Object NONE = new Object();

    private final EventLoop loop;
    private final Object[] replies;
    private final ShardException[] failures;
    private final int[] callbacks;
    private final CountDownLatch done;
    private volatile String misuse;

    LoopOutcomes(EventLoop loop, int n) {
        this.loop = loop;
        this.replies = new Object[n];
        Arrays.fill(replies, NONE);
        this.failures = new ShardException[n];
        this.callbacks = new int[n];
        this.done = new CountDownLatch(n);
    }

    @Override
    public void onReply(int tag, Object value) {
        replies[tag] = value;
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
    LoopOutcomes await() throws InterruptedException {
        assertTrue(done.await(HANG_SECONDS, TimeUnit.SECONDS), "outcomes missing after " + HANG_SECONDS + " s: "
                + done.getCount() + " of " + callbacks.length);
        assertFalse(misuse != null, misuse);
        return this;
    }

    /** The reply of {@code tag} (possibly {@code null}); fails if the call failed. */
    Object reply(int tag) {
        assertTrue(replies[tag] != NONE, () -> "tag " + tag + " failed: " + failures[tag]);
        return replies[tag];
    }

    /** The reply of {@code tag} in {@link TestData#canon} form. */
    Object canonReply(int tag) {
        return TestData.canon(reply(tag));
    }

    ShardException failure(int tag) {
        assertNotNull(failures[tag], () -> "tag " + tag + " got a reply, expected a failure");
        return failures[tag];
    }

    ShardException.Kind kind(int tag) {
        return failures[tag] == null ? null : failures[tag].kind();
    }

    boolean replied(int tag) {
        return replies[tag] != NONE;
    }

    void assertFailed(int tag, ShardException.Kind kind) {
        assertEquals(kind, failure(tag).kind(), () -> "tag " + tag + ": " + failures[tag]);
    }
}
