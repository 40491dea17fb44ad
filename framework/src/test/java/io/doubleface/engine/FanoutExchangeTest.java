package io.doubleface.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.ShardRequest;
import io.doubleface.driver.ShardException;
import io.doubleface.loop.LoopGroup;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
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

    private static LoopGroup group;
    private static EventLoop loop;

    @BeforeAll
    static void start() {
        group = new LoopGroup("fx", 1, LoopGroup.Transport.AUTO);
        loop = group.loops().get(0);
    }

    @AfterAll
    static void stop() {
        group.close();
    }

    /** A service whose plan is given per test; records onReply and merge calls. */
    private static final class Service implements FanoutService<String, String, String> {
        final Consumer<FanoutPlan> planner;
        final List<Integer> replied = new CopyOnWriteArrayList<>();
        final AtomicInteger merges = new AtomicInteger();
        volatile boolean failOnReply;
        volatile boolean failMerge;

        Service(Consumer<FanoutPlan> planner) {
            this.planner = planner;
        }

        @Override
        public void plan(String request, FanoutPlan plan) {
            planner.accept(plan);
        }

        @Override
        public String onReply(String request, int call, ByteBuf reply) {
            if (failOnReply) {
                throw new IllegalStateException("bad reply");
            }
            replied.add(call);
            return "r" + call + "=" + reply.readableBytes();
        }

        @Override
        public String merge(String request, List<String> processed) {
            merges.incrementAndGet();
            if (failMerge) {
                throw new IllegalStateException("cannot merge");
            }
            return request + "[" + String.join(",", processed) + "]";
        }
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

    private static Consumer<FanoutPlan> calls(int... shards) {
        return p -> {
            for (int s : shards) {
                p.call(s, ShardRequest.readField(s, 0));
            }
        };
    }

    private static ByteBuf payload(int bytes) {
        return Unpooled.buffer(bytes).writeZero(bytes);
    }

    private static FanoutExchange<String, String, String> exchange(Service service, Sink sink, AtomicInteger finished) {
        return new FanoutExchange<>(service, "q", loop, sink, SHARDS, LONG_DEADLINE, finished::incrementAndGet);
    }

    @Test
    void replyForEveryCallIsMergedOnceInPlanOrder() {
        Service service = new Service(calls(2, 0, 1));
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = exchange(service, sink, finished);

        assertTrue(ex.plan());
        assertEquals(3, ex.calls());
        assertEquals(2, ex.shard(0));
        assertEquals(0, ex.shard(1));
        assertEquals(ShardRequest.readField(1, 0), ex.request(2));
        assertEquals(3, ex.outstanding());

        ByteBuf p2 = payload(30);
        ByteBuf p0 = payload(10);
        ByteBuf p1 = payload(20);
        assertFalse(ex.processReply(2, p2));
        assertFalse(ex.processReply(0, p0));
        assertEquals(1, ex.outstanding());
        assertFalse(ex.isFinished());
        assertTrue(ex.processReply(1, p1), "the last reply asks for the merge");
        ex.mergeAndComplete();
        ex.mergeAndComplete(); // a second merge request is a no-op

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
        Service service = new Service(calls(0, 1));
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
        Service service = new Service(calls(0));
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = exchange(service, sink, finished);
        assertTrue(ex.plan());
        assertTrue(ex.processReply(0, payload(5)));
        ex.mergeAndComplete();

        ex.fail(0, new ShardException(ShardException.Kind.UNAVAILABLE, 0, "late failure"));
        ex.finish(Outcome.TIMEOUT, "late deadline");

        assertEquals(List.of("OK q[r0=5]"), sink.all());
        assertEquals(1, finished.get());
    }

    @Test
    void replyAfterFailureIsReleasedAndDropped() {
        Service service = new Service(calls(0, 1, 2));
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = exchange(service, sink, finished);
        assertTrue(ex.plan());
        assertFalse(ex.processReply(0, payload(3)));

        ex.fail(1, new ShardException(ShardException.Kind.UNAVAILABLE, 1, "connection refused"));
        ByteBuf late = payload(4);
        assertFalse(ex.processReply(2, late));
        ex.mergeAndComplete();

        assertEquals(List.of("UNAVAILABLE shard 1 unavailable: connection refused"), sink.all());
        assertEquals(0, late.refCnt(), "late reply released");
        assertEquals(List.of(0), service.replied, "onReply not run for a reply after the failure");
        assertEquals(0, service.merges.get());
        assertEquals(1, finished.get());
    }

    @Test
    void shardTimeoutAnswers504AndOtherShardFailures503() {
        for (ShardException.Kind kind : ShardException.Kind.values()) {
            Sink sink = new Sink();
            FanoutExchange<String, String, String> ex = exchange(new Service(calls(0)), sink, new AtomicInteger());
            assertTrue(ex.plan());
            ex.fail(0, new ShardException(kind, 0, "x"));
            Outcome expected = kind == ShardException.Kind.TIMEOUT ? Outcome.TIMEOUT : Outcome.UNAVAILABLE;
            assertTrue(sink.all().get(0).startsWith(expected + " "), kind + ": " + sink.all());
        }
    }

    @Test
    void planAddingNoCallsIsAnInternalError() {
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(new Service(p -> { }), sink, new AtomicInteger());
        assertFalse(ex.plan());
        assertEquals(List.of("INTERNAL_ERROR plan added no shard calls"), sink.all());
        assertTrue(ex.isFinished());
    }

    @Test
    void planThrowingIsAnInternalErrorNamingTheCause() {
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(new Service(p -> {
            throw new IllegalStateException("no plan today");
        }), sink, new AtomicInteger());
        assertFalse(ex.plan());
        String event = sink.all().get(0);
        assertTrue(event.startsWith("INTERNAL_ERROR plan failed") && event.contains("no plan today"), event);
    }

    @Test
    void callToAShardOutOfRangeIsRejected() {
        FanoutExchange<String, String, String> ex = exchange(new Service(p -> { }), new Sink(), new AtomicInteger());
        assertEquals(SHARDS, ex.shardCount());
        IllegalArgumentException high = assertThrows(IllegalArgumentException.class,
                () -> ex.call(SHARDS, ShardRequest.readRecord(1)));
        assertTrue(high.getMessage().contains("shard: " + SHARDS) && high.getMessage().contains("0.." + (SHARDS - 1)),
                high.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ex.call(-1, ShardRequest.readRecord(1)));
        assertThrows(IllegalArgumentException.class, () -> ex.call(0, null));
        assertEquals(0, ex.calls(), "rejected calls are not planned");
    }

    @Test
    void planCallingAShardOutOfRangeAnswers500() {
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(new Service(calls(0, 9)), sink, new AtomicInteger());
        assertFalse(ex.plan());
        String event = sink.all().get(0);
        assertTrue(event.startsWith("INTERNAL_ERROR") && event.contains("shard: 9"), event);
    }

    @Test
    void fanoutIsLimited() {
        FanoutExchange<String, String, String> ex = exchange(new Service(p -> { }), new Sink(), new AtomicInteger());
        for (int i = 0; i < FanoutExchange.MAX_FANOUT; i++) {
            assertEquals(i, ex.call(i % SHARDS, ShardRequest.readRecord(i)));
        }
        assertThrows(IllegalArgumentException.class, () -> ex.call(0, ShardRequest.readRecord(0)));
    }

    @Test
    void onReplyThrowingAnswers500AndReleasesEveryPayload() {
        Service service = new Service(calls(0, 1));
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
        Service service = new Service(calls(0));
        service.failMerge = true;
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = exchange(service, sink, new AtomicInteger());
        assertTrue(ex.plan());
        assertTrue(ex.processReply(0, payload(1)));
        ex.mergeAndComplete();
        assertEquals(1, sink.all().size());
        assertTrue(sink.all().get(0).startsWith("INTERNAL_ERROR merge failed"), sink.all().get(0));
    }

    @Test
    void deadlineAnswers504ListingTheMissingReplies() throws Exception {
        Service service = new Service(calls(0, 1, 2));
        Sink sink = new Sink();
        AtomicInteger finished = new AtomicInteger();
        FanoutExchange<String, String, String> ex = new FanoutExchange<>(service, "q", loop, sink, SHARDS,
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
        Service service = new Service(calls(0));
        Sink sink = new Sink();
        FanoutExchange<String, String, String> ex = new FanoutExchange<>(service, "q", loop, sink, SHARDS,
                TimeUnit.MILLISECONDS.toNanos(20), null);
        loop.submit(() -> {
            assertTrue(ex.plan());
            ex.armDeadline();
            assertTrue(ex.processReply(0, payload(1)));
            ex.mergeAndComplete();
        }).get(10, TimeUnit.SECONDS);
        // let a (cancelled) deadline pass: it must not answer a second time
        loop.schedule(() -> { }, 60, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
        assertEquals(List.of("OK q[r0=1]"), sink.all());
    }
}
