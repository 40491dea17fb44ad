package io.doubleface.grpc;

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
 * A {@link ReplyListener} for tests of {@link TestLeaves#GET} calls: records the outcome of each
 * tag {@code 0 .. n-1} (the reply string or the failure), and notes any callback off the loop, any
 * second callback for a tag and any reply that is not a {@code String}. Callbacks arrive on the
 * loop; the test thread reads after {@link #await()}. (The framework's {@code Outcomes} reads
 * {@code ByteBuf} replies; a gRPC call's reply is its response message.)
 */
final class CallOutcomes implements ReplyListener {

    /** Longest a test waits for outcomes before calling it a hang: {@value} s. */
    static final long HANG_SECONDS = 30;

    private final EventLoop loop;
    private final String[] replies;
    private final ShardException[] failures;
    private final int[] callbacks;
    private final CountDownLatch done;
    private volatile String misuse;

    CallOutcomes(EventLoop loop, int n) {
        this.loop = loop;
        this.replies = new String[n];
        this.failures = new ShardException[n];
        this.callbacks = new int[n];
        this.done = new CountDownLatch(n);
    }

    @Override
    public void onReply(int tag, Object value) {
        if (value instanceof String s) {
            replies[tag] = s;
        } else {
            misuse = "reply for tag " + tag + " is " + (value == null ? "null" : value.getClass().getName())
                    + " (expected: String)";
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
    CallOutcomes await() throws InterruptedException {
        assertTrue(done.await(HANG_SECONDS, TimeUnit.SECONDS), "outcomes missing after " + HANG_SECONDS + " s: "
                + done.getCount() + " of " + callbacks.length);
        assertFalse(misuse != null, misuse);
        return this;
    }

    String reply(int tag) {
        assertNotNull(replies[tag], () -> "tag " + tag + " failed: " + failures[tag]);
        return replies[tag];
    }

    ShardException failure(int tag) {
        assertNotNull(failures[tag], () -> "tag " + tag + " got a reply, expected a failure");
        return failures[tag];
    }

    ShardException.Kind kind(int tag) {
        return failures[tag] == null ? null : failures[tag].kind();
    }

    boolean replied(int tag) {
        return replies[tag] != null;
    }

    void assertFailed(int tag, ShardException.Kind kind) {
        assertEquals(kind, failure(tag).kind(), () -> "tag " + tag + ": " + failures[tag]);
    }

    /** Asserts that {@code tag} got {@code expected}, comparing lengths first (replies may be 1 MB). */
    void assertReply(int tag, String expected) {
        String got = reply(tag);
        assertEquals(expected.length(), got.length(), () -> "tag " + tag + ": reply length");
        assertTrue(expected.equals(got), () -> "tag " + tag + ": reply differs from the expected one at "
                + firstDifference(expected, got) + " (starts " + head(got) + ", expected " + head(expected) + ")");
    }

    static int firstDifference(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            if (a.charAt(i) != b.charAt(i)) {
                return i;
            }
        }
        return n;
    }

    static String head(String s) {
        return s.length() <= 40 ? '"' + s + '"' : '"' + s.substring(0, 40) + "...\"";
    }
}
