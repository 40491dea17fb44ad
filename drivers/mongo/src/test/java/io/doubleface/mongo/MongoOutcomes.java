package io.doubleface.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.ReplyListener;
import io.doubleface.driver.ShardException;
import io.netty.channel.EventLoop;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ReplyListener} for the mongo tests: records the outcome of each tag {@code 0 .. n-1}
 * (the command's typed reply, or the failure), and notes any callback off the loop or any second
 * callback for a tag. Like the framework's {@code Outcomes}, whose replies are ByteBufs; here they
 * are the commands' values (documents, ids, counts). Callbacks arrive on the loop; the test
 * thread reads after {@link #await()}.
 */
final class MongoOutcomes implements ReplyListener {

    /** Longest a test waits for outcomes before calling it a hang: {@value} s. */
    static final long HANG_SECONDS = 30;

    private final EventLoop loop;
    private final Object[] replies;
    private final ShardException[] failures;
    private final int[] callbacks;
    private final CountDownLatch done;
    private volatile String misuse;

    MongoOutcomes(EventLoop loop, int n) {
        this.loop = loop;
        this.replies = new Object[n];
        this.failures = new ShardException[n];
        this.callbacks = new int[n];
        this.done = new CountDownLatch(n);
    }

    @Override
    public void onReply(int tag, Object value) {
        if (value == null) {
            misuse = "tag " + tag + ": null reply";
        }
        replies[tag] = value;
        completed(tag);
    }

    @Override
    public void onFailure(int tag, ShardException cause) {
        if (cause == null) {
            misuse = "tag " + tag + ": null failure";
        }
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
    MongoOutcomes await() throws InterruptedException {
        assertTrue(done.await(HANG_SECONDS, TimeUnit.SECONDS), "outcomes missing after " + HANG_SECONDS + " s: "
                + done.getCount() + " of " + callbacks.length);
        assertFalse(misuse != null, misuse);
        return this;
    }

    /** {@return the reply of {@code tag}; fails if it failed} */
    Object reply(int tag) {
        assertNotNull(replies[tag], () -> "tag " + tag + " failed: " + failures[tag]);
        return replies[tag];
    }

    ShardException failure(int tag) {
        assertNotNull(failures[tag], () -> "tag " + tag + " got a reply, expected a failure");
        return failures[tag];
    }

    boolean replied(int tag) {
        return replies[tag] != null;
    }

    void assertFailed(int tag, ShardException.Kind kind) {
        assertEquals(kind, failure(tag).kind(), () -> "tag " + tag + ": " + failures[tag]);
    }
}
