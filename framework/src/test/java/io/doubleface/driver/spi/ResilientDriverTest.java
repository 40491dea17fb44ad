package io.doubleface.driver.spi;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.TestRead;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ResilientDriver} over a scripted driver on a real event loop: each send of the inner
 * driver does what the test queued for it (reply, fail with a kind, or hold until the test answers).
 */
class ResilientDriverTest {

    private static LoopGroup group;
    private static EventLoop loop;

    @BeforeAll
    static void start() {
        group = new LoopGroup("resil-test", 1, Transport.AUTO);
        loop = group.loops().get(0);
    }

    @AfterAll
    static void stop() {
        group.close();
    }

    private static final TestRead READ = TestRead.readRecord(7);
    private static final TestRead WRITE = TestRead.readRecord(8); // the tests' "non-idempotent" command

    private static Resilience<TestRead> base() {
        return Resilience.<TestRead>none().idempotent(c -> c.key() != WRITE.key());
    }

    // ---- circuit breaking

    @Test
    void circuitOpensAfterConsecutiveFailuresAndFailsFast() throws Exception {
        Scripted inner = new Scripted(2);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner, base().circuitBreaker(3, Duration.ofSeconds(30)));
        LoopClient<TestRead> c = d.openOn(loop);
        inner.fail(0, Kind.UNAVAILABLE, 3);
        for (int i = 0; i < 3; i++) {
            assertEquals(Kind.UNAVAILABLE, failureOf(send(c, 0, READ)).kind());
        }
        ShardException fast = failureOf(send(c, 0, READ));
        assertEquals(Kind.UNAVAILABLE, fast.kind());
        assertTrue(fast.getMessage().startsWith("shard 0 unavailable: circuit open after 3 failures in a row (last: unavailable: scripted UNAVAILABLE); next probe in "),
                fast.getMessage());
        assertEquals(3, inner.sends(0), "the open circuit's call never reached the shard");
        ok(send(c, 1, READ));
        ResilientDriver.Stats s = d.stats();
        assertEquals(1, s.circuitsOpened());
        assertEquals(1, s.rejected());
        assertEquals(1, s.openCircuits());
        d.close();
    }

    @Test
    void openCircuitLetsOneProbeThroughAndClosesOnSuccess() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner, base().circuitBreaker(2, Duration.ofMillis(200)));
        LoopClient<TestRead> c = d.openOn(loop);
        inner.fail(0, Kind.TIMEOUT, 2);
        failureOf(send(c, 0, READ));
        failureOf(send(c, 0, READ));
        assertTrue(failureOf(send(c, 0, READ)).getMessage().contains("circuit open"));
        Thread.sleep(300);
        inner.hold(0, 1); // the probe hangs until we answer it
        Outcome probe = send(c, 0, READ);
        ShardException whileProbing = failureOf(send(c, 0, READ));
        assertTrue(whileProbing.getMessage().contains("circuit open"), "one probe at a time: " + whileProbing);
        assertEquals(3, inner.sends(0));
        inner.answerHeld(0);
        ok(probe);
        ok(send(c, 0, READ));
        assertEquals(0, d.stats().openCircuits());
        d.close();
    }

    @Test
    void failedProbeOpensTheCircuitAgain() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner, base().circuitBreaker(1, Duration.ofMillis(150)));
        LoopClient<TestRead> c = d.openOn(loop);
        inner.fail(0, Kind.UNAVAILABLE, 2);
        failureOf(send(c, 0, READ));
        Thread.sleep(200);
        assertEquals("shard 0 unavailable: scripted UNAVAILABLE", failureOf(send(c, 0, READ)).getMessage(),
                "the probe reached the shard");
        assertTrue(failureOf(send(c, 0, READ)).getMessage().contains("circuit open"), "open again");
        assertEquals(2, inner.sends(0));
        d.close();
    }

    @Test
    void shardErrorsDoNotOpenTheCircuit() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner, base().circuitBreaker(2, Duration.ofSeconds(30)));
        LoopClient<TestRead> c = d.openOn(loop);
        inner.fail(0, Kind.SHARD_ERROR, 5);
        for (int i = 0; i < 5; i++) {
            assertEquals(Kind.SHARD_ERROR, failureOf(send(c, 0, READ)).kind());
        }
        assertEquals(0, d.stats().circuitsOpened());
        d.close();
    }

    // ---- retries

    @Test
    void retryRepeatsAFailedIdempotentCallOnce() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner, base().retries(1, Resilience.Budget.of(0.5, 10)));
        LoopClient<TestRead> c = d.openOn(loop);
        inner.fail(0, Kind.UNAVAILABLE, 1);
        ok(send(c, 0, READ));
        assertEquals(2, inner.sends(0));
        inner.fail(0, Kind.TIMEOUT, 2);
        assertEquals(Kind.TIMEOUT, failureOf(send(c, 0, READ)).kind(), "one retry at most");
        assertEquals(4, inner.sends(0));
        assertEquals(2, d.stats().retries());
        d.close();
    }

    @Test
    void retryNeverRepeatsANonIdempotentCall() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner, base().retries(3, Resilience.Budget.of(1, 100)));
        LoopClient<TestRead> c = d.openOn(loop);
        inner.fail(0, Kind.UNAVAILABLE, 1);
        assertEquals(Kind.UNAVAILABLE, failureOf(send(c, 0, WRITE)).kind());
        assertEquals(1, inner.sends(0));
        assertEquals(0, d.stats().retries());
        d.close();
    }

    @Test
    void anEmptyBudgetDeniesRetries() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner, base().retries(1, Resilience.Budget.of(0.5, 0)));
        LoopClient<TestRead> c = d.openOn(loop);
        // no floor, half a token per call: the first failure finds half a token, the second a whole one
        inner.fail(0, Kind.UNAVAILABLE, 1);
        assertEquals(Kind.UNAVAILABLE, failureOf(send(c, 0, READ)).kind());
        inner.fail(0, Kind.UNAVAILABLE, 1);
        ok(send(c, 0, READ));
        assertEquals(3, inner.sends(0));
        assertEquals(1, d.stats().retriesDenied());
        assertEquals(1, d.stats().retries());
        d.close();
    }

    // ---- hedging

    @Test
    void hedgeAfterTheDelayAnswersAndTheLateReplyIsReleased() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner,
                base().hedging(Duration.ofMillis(50), Resilience.Budget.of(0.1, 10)));
        LoopClient<TestRead> c = d.openOn(loop);
        inner.hold(0, 1); // the first copy hangs; the hedge (the next send) is answered at once
        Outcome o = send(c, 0, READ);
        Object reply = replyOf(o);
        assertEquals(2, inner.sends(0));
        ByteBuf late = inner.answerHeld(0);
        assertEquals(0, late.refCnt(), "the losing copy's reply was released");
        assertNull(o.queue.poll(200, TimeUnit.MILLISECONDS), "exactly one outcome");
        ((ByteBuf) reply).release();
        ResilientDriver.Stats s = d.stats();
        assertEquals(1, s.hedges());
        assertEquals(1, s.hedgeWins());
        d.close();
    }

    @Test
    void noHedgeForAFastReplyOrANonIdempotentCall() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner,
                base().hedging(Duration.ofMillis(30), Resilience.Budget.of(0.1, 10)));
        LoopClient<TestRead> c = d.openOn(loop);
        ((ByteBuf) replyOf(send(c, 0, READ))).release();
        inner.hold(0, 1);
        Outcome w = send(c, 0, WRITE);
        Thread.sleep(100);
        assertEquals(2, inner.sends(0), "no hedge of the write");
        inner.answerHeld(0);
        ((ByteBuf) replyOf(w)).release();
        assertEquals(0, d.stats().hedges());
        d.close();
    }

    @Test
    void aLivePercentileHedgesOnlyOnceItsFirstWindowHasClosed() throws Exception {
        Scripted inner = new Scripted(1);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner,
                base().hedgingAtPercentile(95, Duration.ofMillis(40), Resilience.Budget.of(1, 100)));
        LoopClient<TestRead> c = d.openOn(loop);
        inner.hold(0, 1);
        Outcome early = send(c, 0, READ); // held while no window has closed: never hedged
        for (int i = 0; i < Resilience.HEDGE_WINDOW_SAMPLES; i++) {
            ok(send(c, 0, READ));
        }
        Thread.sleep(Resilience.HEDGE_WINDOW_MILLIS + 100);
        ok(send(c, 0, READ)); // closes the first window: delay = max(40 ms, p95 of fast replies) = 40 ms
        assertEquals(0, d.stats().hedges(), "no hedge before the first window closed");
        inner.hold(0, 1);
        Outcome late = send(c, 0, READ); // held: hedged after 40 ms, answered by the hedge
        ok(late);
        assertEquals(1, d.stats().hedges());
        assertEquals(1, d.stats().hedgeWins());
        inner.answerHeld(0); // the early call, still unhedged, answers now
        ok(early);
        assertEquals(0, inner.answerHeld(0).refCnt(), "the late call's first copy was released");
        d.close();
    }

    @Test
    void latencyWindowBucketsAndPercentile() {
        for (long us : new long[] {4, 5, 7, 8, 100, 1_000, 123_456, 10_000_000}) {
            int b = LatencyWindow.bucket(us);
            assertTrue(LatencyWindow.upperMicros(b) > us, us + " below its bucket's upper bound");
            assertTrue(LatencyWindow.upperMicros(b - 1) <= us, us + " above the previous bucket's");
        }
        assertEquals(LatencyWindow.bucket(4), LatencyWindow.bucket(1), "below 4 µs counts as 4 µs");
        LatencyWindow w = new LatencyWindow(90, 1_000, 0);
        long t = 0;
        for (int i = 0; i < 1_000; i++) { // 90% at 1 ms, 10% at 100 ms
            w.record(i % 10 == 9 ? 100_000_000 : 1_000_000, t += 500_000); // 0.5 s in all
        }
        assertEquals(0, w.delayNanos(), "window still open before its minimum length");
        w.record(1_000_000, t + 2_000_000_000L);
        assertTrue(w.delayNanos() >= 1_000_000 && w.delayNanos() <= 1_250_000, "p90 in the 1 ms bucket: " + w.delayNanos());
    }

    // ---- blocking face

    @Test
    void blockingCallsRetryAndOpenTheCircuit() throws Exception {
        Scripted inner = new Scripted(2);
        ResilientDriver<TestRead> d = ResilientDriver.wrap(inner,
                base().circuitBreaker(4, Duration.ofSeconds(30)).retries(1, Resilience.Budget.of(1, 10)));
        BlockingClient<TestRead> b = d.openBlocking();
        inner.fail(0, Kind.UNAVAILABLE, 1);
        ((ByteBuf) b.call(0, READ, TimeUnit.SECONDS.toNanos(1))).release();
        assertEquals(2, inner.sends(0));
        inner.fail(0, Kind.UNAVAILABLE, 4);
        assertThrows(ShardException.class, () -> b.call(0, READ, TimeUnit.SECONDS.toNanos(1)));
        assertThrows(ShardException.class, () -> b.call(0, READ, TimeUnit.SECONDS.toNanos(1)));
        assertEquals(6, inner.sends(0));
        ShardException fast = assertThrows(ShardException.class, () -> b.call(0, READ, TimeUnit.SECONDS.toNanos(1)));
        assertTrue(fast.getMessage().contains("circuit open"), fast.getMessage());
        assertEquals(6, inner.sends(0));

        // callAll: shard 0 rejected at once, shard 1 retried once, every index one outcome
        inner.fail(1, Kind.UNAVAILABLE, 1);
        List<String> outcomes = new CopyOnWriteArrayList<>();
        b.callAll(new int[] {0, 1, 1}, List.of(READ, READ, WRITE), TimeUnit.SECONDS.toNanos(1),
                new BlockingClient.Sink() {
                    @Override
                    public void onReply(int index, Object reply) {
                        ((ByteBuf) reply).release();
                        outcomes.add(index + ":ok");
                    }

                    @Override
                    public void onFailure(int index, ShardException cause) {
                        outcomes.add(index + ":" + cause.kind());
                    }
                });
        assertEquals(List.of("0:UNAVAILABLE", "1:ok", "2:ok"), outcomes.stream().sorted().toList());
        assertEquals(3, inner.sends(1), "two calls plus one retry");
        d.close();
    }

    @Test
    void policyValidatesItsSettings() {
        assertThrows(IllegalArgumentException.class, () -> base().circuitBreaker(0, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> base().circuitBreaker(1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> base().retries(0, Resilience.Budget.of(0.1, 1)));
        assertThrows(IllegalArgumentException.class, () -> Resilience.Budget.of(1.5, 1));
        assertThrows(IllegalArgumentException.class, () -> Resilience.Budget.of(0.1, -1));
        assertThrows(IllegalArgumentException.class,
                () -> base().hedgingAtPercentile(100, Duration.ofMillis(1), Resilience.Budget.of(0.1, 1)));
        assertEquals("circuit 5/1000ms, retries 1 (10% + 10/s), hedge after 20ms (5% + 5/s)",
                base().circuitBreaker(5, Duration.ofSeconds(1)).retries(1, Resilience.Budget.of(0.1, 10))
                        .hedging(Duration.ofMillis(20), Resilience.Budget.of(0.05, 5)).toString());
        assertFalse(Resilience.<TestRead>none().isIdempotent(READ), "nothing idempotent by default");
    }

    // ---- helpers

    /** The outcomes of one send. */
    private static final class Outcome implements ReplyListener {
        final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();

        @Override
        public void onReply(int tag, Object reply) {
            assertTrue(loop.inEventLoop());
            queue.add(reply);
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            assertTrue(loop.inEventLoop());
            queue.add(cause);
        }
    }

    private static Outcome send(LoopClient<TestRead> c, int shard, TestRead command) throws Exception {
        Outcome o = new Outcome();
        loop.submit(() -> c.send(shard, command, o, 0)).sync();
        return o;
    }

    private static Object take(Outcome o) throws InterruptedException {
        Object x = o.queue.poll(5, TimeUnit.SECONDS);
        if (x == null) {
            throw new AssertionError("no outcome within 5 s");
        }
        return x;
    }

    private static ShardException failureOf(Outcome o) throws InterruptedException {
        return assertInstanceOf(ShardException.class, take(o));
    }

    /** Asserts the outcome is a reply and releases it. */
    private static void ok(Outcome o) throws InterruptedException {
        assertInstanceOf(ByteBuf.class, replyOf(o)).release();
    }

    private static Object replyOf(Outcome o) throws InterruptedException {
        Object x = take(o);
        if (x instanceof ShardException e) {
            throw new AssertionError("expected a reply, got " + e.kind() + ": " + e.getMessage());
        }
        return x;
    }

    /** What the inner driver does with a send. */
    private record Step(Kind fail, boolean hold) {}

    /** The inner driver: per shard, a queue of steps (empty: reply at once) and a count of sends. */
    private static final class Scripted implements ShardDriver<TestRead> {
        private final int shards;
        private final List<Deque<Step>> steps = new ArrayList<>();
        private final AtomicInteger[] sends;
        private final List<Deque<Object[]>> held = new ArrayList<>();

        Scripted(int shards) {
            this.shards = shards;
            this.sends = new AtomicInteger[shards];
            for (int i = 0; i < shards; i++) {
                steps.add(new java.util.concurrent.ConcurrentLinkedDeque<>());
                held.add(new java.util.concurrent.ConcurrentLinkedDeque<>());
                sends[i] = new AtomicInteger();
            }
        }

        void fail(int shard, Kind kind, int times) {
            for (int i = 0; i < times; i++) {
                steps.get(shard).add(new Step(kind, false));
            }
        }

        void hold(int shard, int times) {
            for (int i = 0; i < times; i++) {
                steps.get(shard).add(new Step(null, true));
            }
        }

        int sends(int shard) {
            return sends[shard].get();
        }

        /** Answers the oldest held call of {@code shard} on the loop; returns the reply sent. */
        ByteBuf answerHeld(int shard) throws Exception {
            Object[] h = held.get(shard).poll();
            ByteBuf reply = reply();
            loop.submit(() -> ((ReplyListener) h[0]).onReply((Integer) h[1], reply)).sync();
            return reply;
        }

        private static ByteBuf reply() {
            return Unpooled.copiedBuffer(new byte[TestRead.REPLY_SIZE]);
        }

        private Step next(int shard) {
            sends[shard].incrementAndGet();
            Step s = steps.get(shard).poll();
            return s == null ? new Step(null, false) : s;
        }

        @Override
        public int shardCount() {
            return shards;
        }

        @Override
        public String describe() {
            return "scripted://" + shards;
        }

        @Override
        public LoopClient<TestRead> openOn(EventLoop l) {
            return new LoopClient<>() {
                @Override
                public EventLoop loop() {
                    return l;
                }

                @Override
                public void send(int shard, TestRead command, ReplyListener listener, int tag) {
                    assertTrue(l.inEventLoop());
                    Step s = next(shard);
                    if (s.hold()) {
                        held.get(shard).add(new Object[] {listener, tag});
                    } else if (s.fail() != null) {
                        l.execute(() -> listener.onFailure(tag,
                                new ShardException(s.fail(), shard, "scripted " + s.fail())));
                    } else {
                        l.execute(() -> listener.onReply(tag, reply()));
                    }
                }

                @Override
                public void close() {}
            };
        }

        @Override
        public BlockingClient<TestRead> openBlocking() {
            return new BlockingClient<>() {
                @Override
                public Object call(int shard, TestRead command, long timeoutNanos) throws ShardException {
                    Step s = next(shard);
                    if (s.fail() != null) {
                        throw new ShardException(s.fail(), shard, "scripted " + s.fail());
                    }
                    return reply();
                }

                @Override
                public void callAll(int[] shardIds, List<TestRead> commands, long timeoutNanos, Sink sink) {
                    for (int i = 0; i < shardIds.length; i++) {
                        try {
                            sink.onReply(i, call(shardIds[i], commands.get(i), timeoutNanos));
                        } catch (ShardException e) {
                            sink.onFailure(i, e);
                        }
                    }
                }

                @Override
                public void close() {}
            };
        }

        @Override
        public void close() {}
    }
}
