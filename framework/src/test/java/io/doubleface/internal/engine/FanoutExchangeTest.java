package io.doubleface.internal.engine;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.api.CallRef;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.api.RequestFailedException;
import io.doubleface.testing.TestRead;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.model.Configuration;
import io.doubleface.testing.NoIoDriver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class FanoutExchangeTest {

    private static final int SHARDS = 4;
    private static final long LONG_DEADLINE = TimeUnit.SECONDS.toNanos(30);

    private static final Object OWNER = new Object();
    private static final Backend<TestRead> BACKEND = new Backend<>("b", 0, new NoIoDriver(SHARDS), OWNER);
    private static final Backend<TestRead> SECOND = new Backend<>("second", 1, new NoIoDriver(SHARDS), OWNER);
    /** The server's backends: the only ones a plan may call. */
    private static final List<Backend<?>> BACKENDS = List.of(BACKEND, SECOND);
    /** Another server's backend, at an index this server has too. */
    private static final Backend<TestRead> FOREIGN = new Backend<>("f", 0, new NoIoDriver(SHARDS), new Object());

    private static LoopGroup group;
    private static EventLoop loop;

    @BeforeAll
    static void start() {
        group = new LoopGroup("fx", 1, Transport.AUTO);
        loop = group.loops().get(0);
    }

    @AfterAll
    static void stop() {
        group.close();
    }

    /**
     * A service whose plan (and, optionally, next rounds) is given per test; records reply handler
     * and merge calls. Merge answers {@code q[r0=…,r1=…]}, with {@code !k} for a call without reply.
     */
    private static class Service implements FanoutService<String, String, String> {
        final Consumer<FanoutPlan<String, String>> planner;
        final List<Integer> replied = new CopyOnWriteArrayList<>();
        final AtomicInteger merges = new AtomicInteger();
        final List<String> failures = new CopyOnWriteArrayList<>();
        volatile boolean failOnReply;
        volatile boolean failMerge;
        /** Planner of round {@code merges} (1, 2, …), or none: the merge answers. */
        volatile java.util.function.BiConsumer<Integer, FanoutPlan<String, String>> nextRound;
        final StringBuilder earlier = new StringBuilder();

        final ReplyHandler<String, ByteBuf, String> handler = (q, call, reply) -> {
            if (failOnReply) {
                throw new IllegalStateException("bad reply");
            }
            replied.add(call);
            return "r" + call + "=" + reply.readableBytes();
        };

        Service(Consumer<FanoutPlan<String, String>> planner) {
            this.planner = planner;
        }

        @Override
        public void plan(String request, FanoutPlan<String, String> plan) {
            planner.accept(plan);
        }

        @Override
        public String merge(String request, Replies<String> replies, FanoutPlan<String, String> next) {
            int m = merges.incrementAndGet();
            if (failMerge) {
                throw new IllegalStateException("cannot merge");
            }
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < replies.size(); i++) {
                b.append(i == 0 ? "" : ",").append(replies.ok(i) ? replies.get(i) : "!" + i);
                if (!replies.ok(i)) {
                    failures.add(replies.failure(i).kind() + ":" + replies.failure(i).getMessage());
                }
            }
            if (nextRound != null && m <= 2) {
                earlier.append("[").append(b).append("]");
                nextRound.accept(m, next);
                return next.calls() > 0 ? null : "no calls";
            }
            return request + earlier + "[" + b + "]";
        }
    }

    /** A model that records the rounds the exchange asks it to send. */
    private static final class RoundRecorder implements ThreadingModel {
        final List<Integer> sentRounds = new CopyOnWriteArrayList<>();

        @Override
        public Configuration configuration() {
            return Configuration.parse("doubleface");
        }

        @Override
        public List<EventLoop> frontendLoops() {
            return List.of(loop);
        }

        @Override
        public void execute(FanoutExchange<?, ?, ?> exchange) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void sendRound(FanoutExchange<?, ?, ?> exchange) {
            sentRounds.add(exchange.round());
        }

        @Override
        public void activate() {}

        @Override
        public void park() {}

        @Override
        public void close() {}
    }

    /** Records every outcome, in order. */
    private static final class Sink implements ResponseSink<String> {
        final LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();

        @Override
        public void complete(String response) {
            events.add("OK " + response);
        }

        @Override
        public void fail(Outcome outcome, String reason) {
            events.add(outcome + " " + reason);
        }

        List<String> all() {
            return List.copyOf(events);
        }
    }

    private static Service service(int... shards) {
        Service[] self = new Service[1];
        self[0] = new Service(p -> {
            for (int s : shards) {
                p.call(BACKEND, s, TestRead.readField(s, 0), self[0].handler);
            }
        });
        return self[0];
    }

    private static Service noCalls() {
        return new Service(p -> { });
    }

    private static ByteBuf payload(int bytes) {
        return Unpooled.buffer(bytes).writeZero(bytes);
    }

    private static FanoutExchange<String, String, String> exchange(Service service, Sink sink, AtomicInteger finished) {
        FanoutExchange<String, String, String> ex = new FanoutExchange<>(service, "q", loop, sink, BACKENDS, LONG_DEADLINE,
                finished::incrementAndGet);
        ex.model(new RoundRecorder());
        return ex;
    }

    /** Tag of call {@code call} in round 0. */
    private static int t(int call) {
        return call;
    }

    @Test
    void replyForEveryCallIsMergedOnceInPlanOrder() {
        Service service = service(2, 0, 1);
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = exchange(service, sink, finished);

        assertTrue(ex.plan());
        assertEquals(3, ex.calls());
        assertEquals(2, ex.shard(0));
        assertEquals(0, ex.shard(1));
        assertEquals(TestRead.readField(1, 0), ex.command(2));
        assertEquals(3, ex.outstanding());

        ByteBuf p2 = payload(30);
        ByteBuf p0 = payload(10);
        ByteBuf p1 = payload(20);
        assertFalse(ex.processReply(2, p2));
        assertFalse(ex.processReply(0, p0));
        assertEquals(1, ex.outstanding());
        assertFalse(ex.isFinished());
        assertTrue(ex.processReply(1, p1), "the last reply asks for the merge");
        ex.completeRound();
        ex.completeRound(); // a second merge request is a no-op

        assertEquals(List.of("OK q[r0=10,r1=20,r2=30]"), sink.all());
        assertEquals(1, service.merges.get());
        assertEquals(List.of(2, 0, 1), service.replied);
        assertEquals(1, finished.get(), "onFinish runs once");
        assertTrue(ex.isFinished());
        for (ByteBuf p : List.of(p0, p1, p2)) {
            assertEquals(0, p.refCnt(), "payload released after onReply");
        }
    }

    @Test
    void processScheduledMergesOnTheLastReply() {
        Service service = service(0, 1);
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertTrue(ex.plan());
        ex.processScheduled(1, payload(1));
        assertTrue(sink.all().isEmpty());
        ex.processScheduled(0, payload(2));
        assertEquals(List.of("OK q[r0=2,r1=1]"), sink.all());
    }

    @Test
    void failureAfterSuccessIsIgnored() {
        Service service = service(0);
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = exchange(service, sink, finished);
        assertTrue(ex.plan());
        assertTrue(ex.processReply(0, payload(5)));
        ex.completeRound();

        ex.failCall(0, new ShardException(ShardException.Kind.UNAVAILABLE, 0, "late failure"));
        ex.finish(Outcome.TIMEOUT, "late deadline");

        assertEquals(List.of("OK q[r0=5]"), sink.all());
        assertEquals(1, finished.get());
    }

    @Test
    void replyAfterFailureIsReleasedAndDropped() {
        Service service = service(0, 1, 2);
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = exchange(service, sink, finished);
        assertTrue(ex.plan());
        assertFalse(ex.processReply(0, payload(3)));

        ex.failCall(1, new ShardException(ShardException.Kind.UNAVAILABLE, 1, "connection refused"));
        ByteBuf late = payload(4);
        assertFalse(ex.processReply(2, late));
        ex.completeRound();

        assertEquals(List.of("UNAVAILABLE backend b: shard 1 unavailable"), sink.all());
        assertEquals(0, late.refCnt(), "late reply released");
        assertEquals(List.of(0), service.replied, "onReply not run for a reply after the failure");
        assertEquals(0, service.merges.get());
        assertEquals(1, finished.get());
    }

    @Test
    void shardTimeoutAnswers504AndOtherShardFailures503() {
        for (ShardException.Kind kind : ShardException.Kind.values()) {
            Sink sink = new Sink();
            FanoutExchange<String, String, String> ex = exchange(service(0), sink, new AtomicInteger());
            assertTrue(ex.plan());
            ex.failCall(0, new ShardException(kind, 0, "x"));
            Outcome expected = kind == ShardException.Kind.TIMEOUT ? Outcome.TIMEOUT : Outcome.UNAVAILABLE;
            assertTrue(sink.all().get(0).startsWith(expected + " "), kind + ": " + sink.all());
        }
    }

    @Test
    void aPlanOfNoCallsIsMergedAtOnceWithNoReplies() {
        Sink sink = new Sink();
        Service service = noCalls();
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertFalse(ex.plan(), "answered: nothing to send");
        assertEquals(List.of("OK q[]"), sink.all());
        assertEquals(1, service.merges.get());
        assertTrue(ex.isFinished());
    }

    @Test
    void aPlanOfNoCallsWhoseMergePlansCallsOpensRoundOneForTheCaller() {
        Sink sink = new Sink();
        Service service = noCalls();
        service.nextRound = (m, next) -> {
            if (m == 1) { // the merge of the empty round 0 plans round 1; the merge of round 1 answers
                next.call(BACKEND, 1, TestRead.readField(1, 0), service.handler);
            }
        };
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertTrue(ex.plan(), "a round to send");
        assertEquals(1, ex.calls());
        assertEquals(1, ex.shard(0));
        assertEquals(List.of(), sink.all());
        assertTrue(ex.processReply(ex.tag(0), payload(5)));
        ex.completeRound();
        assertEquals(List.of("OK no calls"), sink.all());
        assertEquals(List.of(0), service.replied);
        assertEquals(2, service.merges.get());
    }

    @Test
    void aPlanOfNoCallsUnderAQuorumIsMergedAtOnceToo() {
        Sink sink = new Sink();
        Service service = new Service(p -> p.failurePolicy(FailurePolicy.quorum(1)));
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertFalse(ex.plan(), "answered: nothing to send");
        assertEquals(List.of("OK q[]"), sink.all(), "no call failed, so the quorum does not fail the round");
        assertEquals(1, service.merges.get());
    }

    @Test
    void aRequestFailedExceptionChoosesTheStatusAndReasonFromPlanOnReplyAndMerge() {
        Sink planned = new Sink();
        FanoutExchange<String, String, String> ex = exchange(new Service(p -> {
            p.call(BACKEND, 0, TestRead.readField(0, 0), (q, call, r) -> "never sent");
            throw RequestFailedException.unavailable("no replica left for group 3");
        }), planned, new AtomicInteger());
        assertFalse(ex.plan());
        assertEquals(List.of("UNAVAILABLE no replica left for group 3"), planned.all());

        Sink replied = new Sink();
        ReplyHandler<String, ByteBuf, String> late = (q, call, r) -> {
            throw RequestFailedException.timedOut("the index is " + r.readableBytes() + " versions behind");
        };
        FanoutExchange<String, String, String> ex2 = exchange(new Service(p -> p.call(BACKEND, 0,
                TestRead.readField(0, 0), late)), replied, new AtomicInteger());
        assertTrue(ex2.plan());
        assertFalse(ex2.processReply(0, payload(2)));
        assertEquals(List.of("TIMEOUT the index is 2 versions behind"), replied.all());

        Sink merged = new Sink();
        Service s = new Service(p -> p.call(BACKEND, 0, TestRead.readField(0, 0), (q, call, r) -> "x")) {
            @Override
            public String merge(String request, Replies<String> replies, FanoutPlan<String, String> next) {
                next.call(BACKEND, 1, TestRead.readField(1, 0), (q, call, r) -> "never sent");
                throw RequestFailedException.unavailable("every replica failed");
            }
        };
        FanoutExchange<String, String, String> ex3 = exchange(s, merged, new AtomicInteger());
        assertTrue(ex3.plan());
        assertTrue(ex3.processReply(0, payload(1)));
        ex3.completeRound();
        assertEquals(List.of("UNAVAILABLE every replica failed"), merged.all());
    }

    @Test
    void planThrowingIsAnInternalErrorNamingTheStepAndLoggingTheCause() {
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(new Service(p -> {
            throw new IllegalStateException("no plan today");
        }), sink, new AtomicInteger());
        RequestStats stats = new RequestStats();
        ErrorLog errors = stats.serviceErrors;
        ex.stats(stats);
        assertFalse(ex.plan());
        // the answer names the step only: no exception class or message reaches the client
        assertEquals(List.of("INTERNAL_ERROR plan failed"), sink.all());
        assertEquals(1, errors.count(), "the exception is logged (and counted) instead");
    }

    @Test
    void callToAShardOutOfRangeOrAForeignBackendIsRejected() {
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        List<FanoutPlan<String, String>> given = new ArrayList<>();
        Service probe = new Service(p -> {
            given.add(p);
            for (Runnable r : List.<Runnable>of(
                    () -> p.call(BACKEND, SHARDS, TestRead.readRecord(1), (q, c, v) -> "x"),
                    () -> p.call(BACKEND, -1, TestRead.readRecord(1), (q, c, v) -> "x"),
                    () -> p.call(FOREIGN, 0, TestRead.readRecord(1), (q, c, v) -> "x"))) {
                try {
                    r.run();
                } catch (IllegalArgumentException e) {
                    thrown.add(e);
                }
            }
            assertThrows(NullPointerException.class, () -> p.call(BACKEND, 0, (TestRead) null, (q, c, v) -> "x"));
            assertEquals(0, p.calls(), "rejected calls are not planned");
            p.call(BACKEND, 0, TestRead.readRecord(1), (q, c, v) -> "x");
        });
        FanoutExchange<String, String, String> ex = exchange(probe, new Sink(), new AtomicInteger());
        assertTrue(ex.plan());
        assertEquals(3, thrown.size());
        assertTrue(thrown.get(0).getMessage().contains("shard: " + SHARDS)
                && thrown.get(0).getMessage().contains("0.." + (SHARDS - 1)), thrown.get(0).getMessage());
        assertTrue(thrown.get(2).getMessage().contains("backend 'f' is not one of this server's"),
                thrown.get(2).getMessage());
        assertThrows(IllegalStateException.class,
                () -> given.get(0).call(BACKEND, 0, TestRead.readRecord(1), (q, c, v) -> "x"),
                "the plan cannot be used after plan returned");
    }

    @Test
    void planCallingAShardOutOfRangeAnswers500() {
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(service(0, 9), sink, new AtomicInteger());
        RequestStats stats = new RequestStats();
        ErrorLog errors = stats.serviceErrors;
        ex.stats(stats);
        assertFalse(ex.plan());
        assertEquals(List.of("INTERNAL_ERROR plan failed"), sink.all(), "the step, not the exception");
        assertEquals(1, errors.count(), "the exception (shard: 9 out of range) is logged instead");
    }

    @Test
    void fanoutIsLimited() {
        Service s = new Service(p -> {
            for (int i = 0; i < FanoutPlan.MAX_CALLS; i++) {
                assertEquals(i, p.call(BACKEND, i % SHARDS, TestRead.readRecord(i), (q, c, v) -> "x"));
            }
            assertThrows(IllegalArgumentException.class,
                    () -> p.call(BACKEND, 0, TestRead.readRecord(0), (q, c, v) -> "x"));
        });
        assertTrue(exchange(s, new Sink(), new AtomicInteger()).plan());
    }

    @Test
    void onReplyThrowingAnswers500AndReleasesEveryPayload() {
        Service service = service(0, 1);
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertTrue(ex.plan());
        service.failOnReply = true;
        ByteBuf first = payload(2);
        ByteBuf second = payload(2);
        assertFalse(ex.processReply(0, first));
        assertFalse(ex.processReply(1, second));
        assertEquals(0, first.refCnt());
        assertEquals(0, second.refCnt());
        assertEquals(1, sink.all().size());
        assertTrue(sink.all().get(0).startsWith("INTERNAL_ERROR onReply failed for call 0"), sink.all().get(0));
    }

    @Test
    void mergeThrowingAnswers500() {
        Service service = service(0);
        service.failMerge = true;
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertTrue(ex.processReply(0, payload(1)));
        ex.completeRound();
        assertEquals(1, sink.all().size());
        assertTrue(sink.all().get(0).startsWith("INTERNAL_ERROR merge failed"), sink.all().get(0));
    }

    @Test
    void deadlineAnswers504ListingTheMissingReplies() throws Exception {
        Service service = service(0, 1, 2);
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = new FanoutExchange<>(service, "q", loop, sink, BACKENDS,
                TimeUnit.MILLISECONDS.toNanos(50), finished::incrementAndGet);
        loop.submit(() -> {
            assertTrue(ex.plan());
            ex.armDeadline();
            assertFalse(ex.processReply(1, payload(8)));
        }).get(10, TimeUnit.SECONDS);

        String event = sink.events.poll(10, TimeUnit.SECONDS);
        assertEquals("TIMEOUT deadline of 50 ms exceeded with 2 of 3 shard replies missing", event);
        assertTrue(ex.isFinished());

        // replies after the deadline are released and dropped, on the loop as in the models
        ByteBuf late = payload(8);
        assertFalse(loop.submit(() -> ex.processReply(0, late)).get(10, TimeUnit.SECONDS));
        assertEquals(0, late.refCnt());
        assertEquals(List.of(1), service.replied);
        assertEquals(1, finished.get());
        assertTrue(sink.events.isEmpty());
    }

    @Test
    void completionBeforeTheDeadlineIsTheOnlyAnswer() throws Exception {
        Service service = service(0);
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = new FanoutExchange<>(service, "q", loop, sink, BACKENDS,
                TimeUnit.MILLISECONDS.toNanos(20), null);
        loop.submit(() -> {
            assertTrue(ex.plan());
            ex.armDeadline();
            assertTrue(ex.processReply(0, payload(1)));
            ex.completeRound();
        }).get(10, TimeUnit.SECONDS);
        // let a (cancelled) deadline pass: it must not answer a second time
        loop.schedule(() -> { }, 60, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
        assertEquals(List.of("OK q[r0=1]"), sink.all());
    }

    @Test
    void theLoopsDeadlineQueueExpiresTheUnansweredInOrderAndForgetsTheAnswered() throws Exception {
        // 200 requests on one loop with a 40-ms deadline: the even ones answered at once (removed
        // from the queue), the odd ones never: each odd one gets its 504, none twice
        int n = 200;
        long deadline = TimeUnit.MILLISECONDS.toNanos(40);
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        List<FanoutExchange<String, String, String>> all = new java.util.ArrayList<>();
        loop.submit(() -> {
            for (int i = 0; i < n; i++) {
                FanoutExchange<String, String, String> ex = new FanoutExchange<>(service(0), "q" + i, loop, sink,
                        BACKENDS, deadline, finished::incrementAndGet);
                all.add(ex);
                assertTrue(ex.plan());
                ex.armDeadline();
                if (i % 2 == 0) {
                    assertTrue(ex.processReply(0, payload(1)));
                    ex.completeRound();
                }
            }
        }).get(10, TimeUnit.SECONDS);
        List<String> events = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            String e = sink.events.poll(10, TimeUnit.SECONDS);
            assertTrue(e != null, "answers so far: " + events.size());
            events.add(e);
        }
        loop.schedule(() -> { }, 80, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
        assertTrue(sink.events.isEmpty(), "an answer twice: " + sink.events);
        assertEquals(n / 2, events.stream().filter(e -> e.startsWith("OK")).count());
        assertEquals(n / 2, events.stream().filter(e -> e.startsWith("TIMEOUT deadline of 40 ms")).count());
        assertEquals(n, finished.get());
        for (int i = 1; i < n; i += 2) {
            assertTrue(all.get(i).isFinished());
        }
        // nothing is held once every request has an outcome
        assertEquals(0, loop.submit(() -> DeadlineQueue.of(loop, deadline).size()).get(10, TimeUnit.SECONDS));
    }

    @Test
    void moreDeadlineLengthsThanQueuesPerLoopFallBackToATimerEach() throws Exception {
        // lengths 31..31+2*MAX ms on one loop: the first MAX get queues, the others their own timers;
        // every one answers 504 once
        int lengths = 2 * DeadlineQueue.MAX_QUEUES_PER_THREAD;
        LoopGroup own = new LoopGroup("fx-dl", 1, Transport.AUTO);
        try {
            EventLoop l = own.loops().get(0);
            Sink sink = new Sink();
            l.submit(() -> {
                for (int i = 0; i < lengths; i++) {
                    FanoutExchange<String, String, String> ex = new FanoutExchange<>(service(0), "q", l, sink, BACKENDS,
                            TimeUnit.MILLISECONDS.toNanos(31 + i), null);
                    assertTrue(ex.plan());
                    ex.armDeadline();
                }
            }).get(10, TimeUnit.SECONDS);
            for (int i = 0; i < lengths; i++) {
                String e = sink.events.poll(10, TimeUnit.SECONDS);
                assertTrue(e != null && e.startsWith("TIMEOUT deadline of " + (31 + i) + " ms"), i + ": " + e);
            }
            assertEquals(null, l.submit(() -> DeadlineQueue.of(l, TimeUnit.MILLISECONDS.toNanos(999)))
                    .get(10, TimeUnit.SECONDS), "no queue beyond the limit");
        } finally {
            own.close();
        }
    }

    // ---- rounds ------------------------------------------------------------------------------------

    @Test
    void mergeThatPlansCallsStartsTheNextRoundAndTheLastMergeAnswers() {
        Service service = service(0, 1);
        service.nextRound = (m, next) -> next.call(BACKEND, 3, TestRead.readField(3, 0), service.handler);
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = exchange(service, sink, finished);
        RoundRecorder model = new RoundRecorder();
        ex.model(model);
        assertTrue(ex.plan());
        assertFalse(ex.processReply(0, payload(1)));
        assertTrue(ex.processReply(1, payload(2)));
        ex.completeRound();
        assertEquals(List.of(1), model.sentRounds, "round 1 sent by the model");
        assertEquals(1, ex.round());
        assertEquals(1, ex.calls());
        assertEquals(3, ex.shard(0));
        assertEquals((1 << 16), ex.tag(0), "the tag carries the round");
        ByteBuf stale = payload(9);
        assertFalse(ex.processReply(1, stale), "a round-0 tag cannot land in round 1");
        assertEquals(0, stale.refCnt());
        assertTrue(ex.processReply(ex.tag(0), payload(3)));
        ex.completeRound();
        // round 2: the planner adds one more call again
        assertEquals(List.of(1, 2), model.sentRounds);
        assertTrue(ex.processReply(ex.tag(0), payload(4)));
        ex.completeRound();
        assertEquals(List.of("OK q[r0=1,r1=2][r0=3][r0=4]"), sink.all());
        assertEquals(1, finished.get());
    }

    @Test
    void callsOnSeveralBackendsWithSeveralHandlersKeepTheirOwnBackendAndHandler() {
        Backend<TestRead> second = SECOND;
        ReplyHandler<String, ByteBuf, String> other = (q, call, reply) -> "other" + call;
        Service[] self = new Service[1];
        // the first calls share backend and handler; later ones differ (the per-call arrays start mid-round)
        self[0] = new Service(p -> {
            p.call(BACKEND, 0, TestRead.readField(0, 0), self[0].handler);
            p.call(BACKEND, 1, TestRead.readField(1, 0), self[0].handler);
            p.call(BACKEND, 2, TestRead.readField(2, 0), other);
            p.call(second, 3, TestRead.readField(3, 0), self[0].handler);
            for (int i = 0; i < 9; i++) { // past the initial capacity of 8 calls
                p.call(i % 2 == 0 ? second : BACKEND, i % SHARDS, TestRead.readField(i, 0),
                        i % 3 == 0 ? other : self[0].handler);
            }
        });
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = exchange(self[0], sink, finished);
        assertTrue(ex.plan());
        assertEquals(13, ex.calls());
        List<String> names = new ArrayList<>();
        for (int c = 0; c < ex.calls(); c++) {
            names.add(ex.backendIndex(c) + ":" + ex.shard(c));
        }
        assertEquals(List.of("0:0", "0:1", "0:2", "1:3", "1:0", "0:1", "1:2", "0:3", "1:0", "0:1", "1:2", "0:3", "1:0"),
                names);
        for (int c = 0; c < 13; c++) {
            assertEquals(c == 12, ex.processReply(ex.tag(c), payload(c)));
        }
        ex.completeRound();
        assertEquals(List.of("OK q[r0=0,r1=1,other2,r3=3,other4,r5=5,r6=6,other7,r8=8,r9=9,other10,r11=11,r12=12]"),
                sink.all());
    }

    @Test
    void mergeReturningNothingAndPlanningNothingIsAnInternalError() {
        Service service = service(0);
        service.nextRound = (m, next) -> { };
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertTrue(ex.processReply(0, payload(1)));
        ex.completeRound();
        // the test service answers "no calls" in that case: a response, so the request completes
        assertEquals(List.of("OK no calls"), sink.all());

        Service bad = new Service(p -> p.call(BACKEND, 0, TestRead.readRecord(0), (q, c, v) -> "x")) {
            @Override
            public String merge(String request, Replies<String> replies, FanoutPlan<String, String> next) {
                return null;
            }
        };
        Sink sink2 = new Sink();
        FanoutExchange<String, String, String> ex2 = exchange(bad, sink2, new AtomicInteger());
        assertTrue(ex2.plan());
        assertTrue(ex2.processReply(0, payload(1)));
        ex2.completeRound();
        assertEquals(List.of("INTERNAL_ERROR merge returned no response and planned no further calls"), sink2.all());
    }

    @Test
    void mergeReturningAResponseAndPlanningCallsIsAnInternalError() {
        Service both = new Service(p -> p.call(BACKEND, 0, TestRead.readRecord(0), (q, c, v) -> "x")) {
            @Override
            public String merge(String request, Replies<String> replies, FanoutPlan<String, String> next) {
                next.call(BACKEND, 1, TestRead.readRecord(0), (q, c, v) -> "y");
                return "done";
            }
        };
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(both, sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertTrue(ex.processReply(0, payload(1)));
        ex.completeRound();
        assertEquals(List.of("INTERNAL_ERROR merge returned a response and also planned further calls"), sink.all());
    }

    @Test
    void failedCallInTheSecondRoundFailsTheRequestUnderFailFast() {
        Service service = service(0);
        service.nextRound = (m, next) -> next.call(BACKEND, 2, TestRead.readField(2, 0), service.handler);
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertTrue(ex.processReply(0, payload(1)));
        ex.completeRound();
        assertFalse(ex.failCall(ex.tag(0), new ShardException(ShardException.Kind.TIMEOUT, 2, "no reply within 5 ms")));
        assertEquals(List.of("TIMEOUT backend b: shard 2 timed out"), sink.all());
    }

    // ---- failure policies --------------------------------------------------------------------------

    @Test
    void bestEffortMergesWhatArrivedAndReportsTheFailures() {
        Service service = new Service(null);
        Service s = new Service(p -> {
            p.failurePolicy(FailurePolicy.bestEffort());
            for (int i = 0; i < 3; i++) {
                p.call(BACKEND, i, TestRead.readField(i, 0), service.handler);
            }
        });
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(s, sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertFalse(ex.processReply(0, payload(1)));
        assertFalse(ex.failCall(1, new ShardException(ShardException.Kind.UNAVAILABLE, 1, "connection refused")));
        assertTrue(ex.processReply(2, payload(3)));
        ex.completeRound();
        assertEquals(List.of("OK q[r0=1,!1,r2=3]"), sink.all());
        assertEquals(List.of("UNAVAILABLE:backend b: shard 1 unavailable"), s.failures);
    }

    @Test
    void quorumFailsARoundWithTooFewReplies() {
        Service h = new Service(null);
        Service s = new Service(p -> {
            p.failurePolicy(FailurePolicy.quorum(2));
            for (int i = 0; i < 3; i++) {
                p.call(BACKEND, i, TestRead.readField(i, 0), h.handler);
            }
        });
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(s, sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertFalse(ex.failCall(0, new ShardException(ShardException.Kind.UNAVAILABLE, 0, "down")));
        assertFalse(ex.processReply(1, payload(1)));
        assertTrue(ex.failCall(2, new ShardException(ShardException.Kind.SHARD_ERROR, 2, "WRONGTYPE")));
        ex.completeRound();
        assertEquals(List.of("UNAVAILABLE only 1 of 3 shard calls answered (quorum: 2); first failure: backend b: "
                + "shard 0 unavailable"), sink.all());
        assertEquals(0, s.merges.get());

        Sink ok = new Sink();
        FanoutExchange<String, String, String> ex2 = exchange(s, ok, new AtomicInteger());
        assertTrue(ex2.plan());
        assertFalse(ex2.failCall(0, new ShardException(ShardException.Kind.UNAVAILABLE, 0, "down")));
        assertFalse(ex2.processReply(1, payload(1)));
        assertTrue(ex2.processReply(2, payload(2)));
        ex2.completeRound();
        assertEquals(List.of("OK q[!0,r1=1,r2=2]"), ok.all());
    }

    @Test
    void optionalCallFailsAloneUnderFailFast() {
        Service h = new Service(null);
        Service s = new Service(p -> {
            p.call(BACKEND, 0, TestRead.readField(0, 0), h.handler);
            p.optional(p.call(BACKEND, 1, TestRead.readField(1, 0), h.handler));
        });
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(s, sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertFalse(ex.failCall(1, new ShardException(ShardException.Kind.TIMEOUT, 1, "slow")));
        assertTrue(ex.processReply(0, payload(4)));
        ex.completeRound();
        assertEquals(List.of("OK q[r0=4,!1]"), sink.all());
        assertEquals(List.of("TIMEOUT:backend b: shard 1 timed out"), s.failures);
    }

    @Test
    void bestEffortMergesAtTheDeadlineWithTheLateCallsReported() throws Exception {
        Service h = new Service(null);
        Service s = new Service(p -> {
            p.failurePolicy(FailurePolicy.bestEffort());
            p.call(BACKEND, 0, TestRead.readField(0, 0), h.handler);
            p.call(BACKEND, 1, TestRead.readField(1, 0), h.handler);
        });
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = new FanoutExchange<>(s, "q", loop, sink, BACKENDS,
                TimeUnit.MILLISECONDS.toNanos(40), null);
        ex.model(new RoundRecorder());
        loop.submit(() -> {
            assertTrue(ex.plan());
            ex.armDeadline();
            assertFalse(ex.processReply(0, payload(6)));
        }).get(10, TimeUnit.SECONDS);
        assertEquals("OK q[r0=6,!1]", sink.events.poll(10, TimeUnit.SECONDS));
        assertEquals(List.of("TIMEOUT:backend b: shard 1 timed out"), s.failures);
        ByteBuf late = payload(2);
        assertFalse(loop.submit(() -> ex.processReply(1, late)).get(10, TimeUnit.SECONDS));
        assertEquals(0, late.refCnt(), "a reply after the deadline merge is released");
    }

    @Test
    void deadlineInsideTheSecondRoundAnswers504NamingTheRound() throws Exception {
        Service service = service(0);
        service.nextRound = (m, next) -> {
            if (m == 1) { // the merge of the empty round 0 plans round 1; the merge of round 1 answers
                next.call(BACKEND, 1, TestRead.readField(1, 0), service.handler);
            }
        };
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = new FanoutExchange<>(service, "q", loop, sink, BACKENDS,
                TimeUnit.MILLISECONDS.toNanos(60), null);
        RoundRecorder model = new RoundRecorder();
        ex.model(model);
        loop.submit(() -> {
            assertTrue(ex.plan());
            ex.armDeadline();
            assertTrue(ex.processReply(0, payload(1)));
            ex.completeRound();
        }).get(10, TimeUnit.SECONDS);
        assertEquals(List.of(1), model.sentRounds);
        assertEquals("TIMEOUT deadline of 60 ms exceeded with 1 of 1 shard replies missing (round 1)",
                sink.events.poll(10, TimeUnit.SECONDS));
    }

    // ---- reference-counted processed replies: owned by the round, released when it ends ----------

    /**
     * Keeps each reply buffer as its processed reply; merge records each one's reference count and
     * answers the readable bytes of all, keeping (retained) the buffers {@code keep} names.
     */
    private static final class Keeping implements FanoutService<String, ByteBuf, String> {
        final ReplyHandler<String, ByteBuf, ByteBuf> keep = (q, call, reply) -> reply;
        final ReplyHandler<String, ByteBuf, ByteBuf> slice = (q, call, reply) -> reply.retainedSlice(0, 1);
        final Consumer<FanoutPlan<String, ByteBuf>> planner;
        final List<Integer> refCntsInMerge = new CopyOnWriteArrayList<>();
        final List<ByteBuf> retained = new CopyOnWriteArrayList<>();
        final List<Integer> refCntsTaken = new CopyOnWriteArrayList<>();
        volatile java.util.function.BiConsumer<Integer, FanoutPlan<String, ByteBuf>> nextRound;
        volatile boolean retainAll;
        /** Merge takes every reply (Replies#take) instead of retaining it; call 0 twice. */
        volatile boolean takeAll;
        final AtomicInteger merges = new AtomicInteger();

        Keeping(Consumer<FanoutPlan<String, ByteBuf>> planner) {
            this.planner = planner;
        }

        @Override
        public void plan(String request, FanoutPlan<String, ByteBuf> plan) {
            planner.accept(plan);
        }

        @Override
        public String merge(String request, Replies<ByteBuf> replies, FanoutPlan<String, ByteBuf> next) {
            int m = merges.incrementAndGet();
            StringBuilder b = new StringBuilder(request);
            for (int i = 0; i < replies.size(); i++) {
                ByteBuf v = replies.get(i);
                refCntsInMerge.add(v == null ? -1 : v.refCnt());
                b.append(i == 0 ? "[" : ",").append(v == null ? "!" : String.valueOf(v.readableBytes()));
                if (v != null && retainAll) {
                    retained.add(v.retain());
                }
                if (takeAll) {
                    ByteBuf t = replies.take(i);
                    if (t != null) {
                        retained.add(t);
                        refCntsTaken.add(t.refCnt());
                    }
                    if (i == 0 && t != null) {
                        retained.add(replies.take(0)); // a second take: a reference of its own
                        refCntsTaken.add(t.refCnt());
                    }
                    if (replies.get(i) != v || replies.ok(i) != (v != null)) {
                        throw new AssertionError("get/ok changed by take, call " + i);
                    }
                }
            }
            if (nextRound != null && m == 1) {
                nextRound.accept(m, next);
                return null;
            }
            return b.append("]").toString();
        }
    }

    @Test
    void aHandlerReturningItsBufferKeepsItUntilTheMergeReturns() {
        Keeping[] k = new Keeping[1];
        k[0] = new Keeping(p -> {
            p.call(BACKEND, 0, TestRead.readField(0, 0), k[0].keep);
            p.call(BACKEND, 1, TestRead.readField(1, 0), k[0].keep);
            p.call(BACKEND, 2, TestRead.readField(2, 0), k[0].slice);
        });
        k[0].retainAll = true;
        Sink sink = new Sink();
        FanoutExchange<String, ByteBuf, String> ex = new FanoutExchange<>(k[0], "q", loop, sink, BACKENDS, LONG_DEADLINE,
                null);
        ex.model(new RoundRecorder());
        assertTrue(ex.plan());
        ByteBuf p0 = payload(10);
        ByteBuf p1 = payload(20);
        ByteBuf p2 = payload(30);
        assertFalse(ex.processReply(0, p0));
        assertEquals(1, p0.refCnt(), "kept: not released after onReply");
        assertFalse(ex.processReply(2, p2));
        assertTrue(ex.processReply(1, p1));
        ex.completeRound();
        assertEquals(List.of("OK q[10,20,1]"), sink.all());
        // in merge: the kept buffers alive (1 reference each; the slice holds the one of p2, released by its handler's return)
        assertEquals(List.of(1, 1, 1), k[0].refCntsInMerge);
        assertEquals(3, k[0].retained.size());
        for (ByteBuf b : k[0].retained) {
            assertEquals(1, b.refCnt(), "what merge retained survives the round: " + b);
            b.release();
        }
        for (ByteBuf b : List.of(p0, p1, p2)) {
            assertEquals(0, b.refCnt(), "released once the response let go: " + b);
        }
    }

    @Test
    void takenRepliesPassToMergeWithoutAReferenceCountUpdateAndAreNotReleasedAfterIt() {
        Keeping[] k = new Keeping[1];
        k[0] = new Keeping(p -> {
            p.failurePolicy(FailurePolicy.bestEffort());
            p.call(BACKEND, 0, TestRead.readField(0, 0), k[0].keep);
            p.call(BACKEND, 1, TestRead.readField(1, 0), k[0].keep);
            p.call(BACKEND, 2, TestRead.readField(2, 0), k[0].keep);
        });
        k[0].takeAll = true;
        Sink sink = new Sink();
        FanoutExchange<String, ByteBuf, String> ex = new FanoutExchange<>(k[0], "q", loop, sink, BACKENDS, LONG_DEADLINE,
                null);
        ex.model(new RoundRecorder());
        assertTrue(ex.plan());
        ByteBuf p0 = payload(10);
        ByteBuf p1 = payload(20);
        assertFalse(ex.processReply(0, p0));
        assertFalse(ex.processReply(1, p1));
        assertTrue(ex.failCall(2, new ShardException(ShardException.Kind.UNAVAILABLE, 2, "down")));
        ex.completeRound();
        assertEquals(List.of("OK q[10,20,!]"), sink.all());
        assertEquals(List.of(1, 1, -1), k[0].refCntsInMerge, "a failed call takes nothing");
        assertEquals(List.of(1, 2, 1), k[0].refCntsTaken, "a first take leaves the count alone, a second retains");
        // p0 taken twice (its reference, then a retain), p1 once: the framework released none of them
        assertEquals(List.of(p0, p0, p1), k[0].retained);
        assertEquals(2, p0.refCnt(), "the first take moved the framework's reference, the second retained");
        assertEquals(1, p1.refCnt(), "taken: the framework's reference is the caller's now");
        for (ByteBuf b : k[0].retained) {
            b.release();
        }
        assertEquals(0, p0.refCnt());
        assertEquals(0, p1.refCnt());
    }

    @Test
    void keptBuffersAreReleasedAfterEachRoundsMergeAndWhenTheRequestFails() {
        // two rounds: round 0's buffers end with its merge, before round 1's replies arrive
        Keeping[] k = new Keeping[1];
        k[0] = new Keeping(p -> p.call(BACKEND, 0, TestRead.readField(0, 0), k[0].keep));
        k[0].nextRound = (m, next) -> next.call(BACKEND, 1, TestRead.readField(1, 0), k[0].keep);
        Sink sink = new Sink();
        FanoutExchange<String, ByteBuf, String> ex = new FanoutExchange<>(k[0], "q", loop, sink, BACKENDS, LONG_DEADLINE,
                null);
        ex.model(new RoundRecorder());
        assertTrue(ex.plan());
        ByteBuf r0 = payload(3);
        assertTrue(ex.processReply(0, r0));
        ex.completeRound();
        assertEquals(0, r0.refCnt(), "round 0's kept reply released when its merge returned");
        ByteBuf r1 = payload(4);
        assertTrue(ex.processReply(ex.tag(0), r1));
        ex.completeRound();
        assertEquals(List.of("OK q[4]"), sink.all());
        assertEquals(0, r1.refCnt());

        // fail-fast: a kept reply, then another call fails: answered 503, the kept one released
        Keeping[] f = new Keeping[1];
        f[0] = new Keeping(p -> {
            p.call(BACKEND, 0, TestRead.readField(0, 0), f[0].keep);
            p.call(BACKEND, 1, TestRead.readField(1, 0), f[0].keep);
        });
        Sink failed = new Sink();
        FanoutExchange<String, ByteBuf, String> fx = new FanoutExchange<>(f[0], "q", loop, failed, BACKENDS,
                LONG_DEADLINE, null);
        fx.model(new RoundRecorder());
        assertTrue(fx.plan());
        ByteBuf kept = payload(5);
        assertFalse(fx.processReply(0, kept));
        assertFalse(fx.failCall(1, new ShardException(ShardException.Kind.UNAVAILABLE, 1, "connection refused")));
        assertEquals(List.of("UNAVAILABLE backend b: shard 1 unavailable"), failed.all());
        assertEquals(0, kept.refCnt(), "the failed request's kept reply released");
        assertEquals(0, f[0].merges.get());

        // quorum not met at the end of the round: released too
        Keeping[] q = new Keeping[1];
        q[0] = new Keeping(p -> {
            p.failurePolicy(FailurePolicy.quorum(2));
            p.call(BACKEND, 0, TestRead.readField(0, 0), q[0].keep);
            p.call(BACKEND, 1, TestRead.readField(1, 0), q[0].keep);
        });
        Sink quorum = new Sink();
        FanoutExchange<String, ByteBuf, String> qx = new FanoutExchange<>(q[0], "q", loop, quorum, BACKENDS,
                LONG_DEADLINE, null);
        qx.model(new RoundRecorder());
        assertTrue(qx.plan());
        ByteBuf one = payload(6);
        assertFalse(qx.processReply(0, one));
        assertTrue(qx.failCall(1, new ShardException(ShardException.Kind.UNAVAILABLE, 1, "down")));
        qx.completeRound();
        assertTrue(quorum.all().get(0).startsWith("UNAVAILABLE only 1 of 2"), quorum.all().toString());
        assertEquals(0, one.refCnt(), "released when the quorum failed the round");
    }

    @Test
    void aHandlerStillRunningWhenTheDeadlineMergesReleasesItsOwnBuffer() throws Exception {
        // best effort, 300 ms: call 0 answers in time; call 1's handler is still running (another
        // thread, as under Type-2b) when the deadline merges without it and ends the round
        java.util.concurrent.CountDownLatch inHandler = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch mayReturn = new java.util.concurrent.CountDownLatch(1);
        Keeping[] k = new Keeping[1];
        ReplyHandler<String, ByteBuf, ByteBuf> slow = (q, call, reply) -> {
            inHandler.countDown();
            try {
                mayReturn.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return reply;
        };
        k[0] = new Keeping(p -> {
            p.failurePolicy(FailurePolicy.bestEffort());
            p.call(BACKEND, 0, TestRead.readField(0, 0), k[0].keep);
            p.call(BACKEND, 1, TestRead.readField(1, 0), slow);
        });
        Sink sink = new Sink();
        FanoutExchange<String, ByteBuf, String> ex = new FanoutExchange<>(k[0], "q", loop, sink, BACKENDS,
                TimeUnit.MILLISECONDS.toNanos(300), null);
        ex.model(new RoundRecorder());
        ByteBuf early = payload(7);
        loop.submit(() -> {
            assertTrue(ex.plan());
            ex.armDeadline();
            assertFalse(ex.processReply(0, early));
        }).get(10, TimeUnit.SECONDS);
        ByteBuf late = payload(8);
        java.util.concurrent.FutureTask<Boolean> worker = new java.util.concurrent.FutureTask<>(
                () -> ex.processReply(1, late));
        Thread t = new Thread(worker, "late-handler");
        t.start();
        assertTrue(inHandler.await(10, TimeUnit.SECONDS));
        assertEquals("OK q[7,!]", sink.events.poll(10, TimeUnit.SECONDS), "merged at the deadline without call 1");
        assertEquals(0, early.refCnt(), "the merged round's kept reply released");
        assertEquals(1, late.refCnt(), "the running handler's reply untouched while it runs");
        mayReturn.countDown();
        worker.get(10, TimeUnit.SECONDS);
        assertEquals(0, late.refCnt(), "the handler that returned after the round ended released its own buffer");
    }

    @Test
    void servicesSeeViewsNeverTheExchange() {
        CallRef<String> ref = CallRef.named("ref");
        List<Object> given = new ArrayList<>(); // every object handed to service code, in order
        Service[] self = new Service[1];
        self[0] = new Service(p -> {
            given.add(p);
            given.add(p.context());
            p.call(BACKEND, 0, TestRead.readField(0, 0), ref, (call, reply) -> {
                given.add(call);
                given.add(call.context());
                return "c" + call.index();
            });
            p.call(BACKEND, 1, TestRead.readField(1, 0), self[0].handler);
        }) {
            @Override
            public String merge(String request, Replies<String> replies, FanoutPlan<String, String> next) {
                given.add(replies);
                given.add(next);
                given.add(replies.context());
                return super.merge(request, replies, next);
            }
        };
        self[0].nextRound = (m, next) -> next.call(BACKEND, 2, TestRead.readField(2, 0), self[0].handler);
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(self[0], sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertFalse(ex.processReply(ex.tag(0), payload(1)));
        assertTrue(ex.processReply(ex.tag(1), payload(2)));
        ex.completeRound();
        assertTrue(ex.processReply(ex.tag(0), payload(3)));
        ex.completeRound();
        assertTrue(ex.processReply(ex.tag(0), payload(4)));
        ex.completeRound();
        assertEquals(List.of("OK q[c0,r1=2][r0=3][r0=4]"), sink.all());
        assertEquals(13, given.size(), "plan, context, call, its context, and three merges");

        List<String> modelFacing = List.of("plan", "processReply", "completeRound", "tag", "outstanding",
                "processScheduled", "isFinished", "failCall", "finish", "armDeadline", "onDeadline", "calls");
        for (Object o : given) {
            assertFalse(o instanceof FanoutExchange, o.getClass().getName());
            assertFalse(o instanceof io.doubleface.sched.ReplyOwner, o.getClass().getName());
            assertFalse(java.lang.reflect.Modifier.isPublic(o.getClass().getModifiers()),
                    o.getClass().getName() + " is public");
            for (java.lang.reflect.Method m : o.getClass().getMethods()) {
                boolean planCalls = m.getName().equals("calls") && o instanceof FanoutPlan && m.getParameterCount() == 0;
                assertTrue(planCalls || !modelFacing.contains(m.getName()),
                        o.getClass().getName() + " offers " + m.getName());
            }
        }
        // one view of each kind per exchange, whichever round asks
        Object plan = given.get(0);
        Object context = given.get(1);
        assertTrue(given.get(5) == plan && given.get(8) == plan && given.get(11) == plan, "merge's next is the plan view");
        assertTrue(given.get(7) == given.get(4) && given.get(10) == given.get(4), "one replies view for every round");
        assertTrue(given.get(3) == context && given.get(6) == context && given.get(9) == context
                && given.get(12) == context, "one context view");
        assertTrue(given.get(2) instanceof io.doubleface.api.Call<?>);
        assertTrue(given.get(4) instanceof Replies<?> && !(given.get(4) instanceof FanoutPlan<?, ?>),
                "the replies cannot plan");
        assertTrue(!(plan instanceof Replies<?>) && !(plan instanceof io.doubleface.api.RequestContext),
                "the plan is neither the replies nor the context");
    }
}
