package io.doubleface.sched;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.internal.loop.LoopStats;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ReplySchedulerTest {

    private static LoopGroup group;
    private static EventLoop loop;
    private static LoopStats stats;

    @BeforeAll
    static void start() {
        group = new LoopGroup("rs", 1, Transport.AUTO);
        loop = group.loops().get(0);
        stats = group.stats().get(0);
    }

    @AfterAll
    static void stop() {
        group.close();
    }

    private static <T> T onLoop(Callable<T> task) throws Exception {
        return loop.submit(task).get(10, TimeUnit.SECONDS);
    }

    /**
     * Waits until the loop has run the tail tasks registered so far: a task registers a tail-task
     * marker behind them and we wait for the marker (twice, for tail tasks added while those ran).
     */
    private static void drain() throws Exception {
        for (int i = 0; i < 2; i++) {
            java.util.concurrent.CompletableFuture<Void> marker = new java.util.concurrent.CompletableFuture<>();
            loop.execute(() -> ((SingleThreadEventLoop) loop).executeAfterEventLoopIteration(() -> marker.complete(null)));
            marker.get(10, TimeUnit.SECONDS);
        }
    }

    /** Records, per processed reply, its owner and call, and checks each payload arrives once. */
    private static final class Recorder {
        final List<String> log = new ArrayList<>();
    }

    private static class Owner extends TestOwner {
        private final Recorder rec;
        final List<ByteBuf> payloads = new ArrayList<>();

        Owner(String name, int outstanding, Recorder rec) {
            super(name, outstanding);
            this.rec = rec;
        }

        @Override
        protected void processScheduled(int call, Object value) {
            ByteBuf payload = (ByteBuf) value;
            rec.log.add(name + ":" + call);
            payloads.add(payload);
            assertEquals(1, payload.refCnt(), "payload handed over once, unreleased");
            super.processScheduled(call, payload);
        }
    }

    @Test
    void repliesEnqueuedByATaskAreProcessedAfterItInPolicyOrderOnTheLoop() throws Exception {
        ReplyScheduler s = new ReplyScheduler((SingleThreadEventLoop) loop, new CompletionFirstOrder(), stats);
        Recorder rec = new Recorder();
        Owner a = new Owner("a", 2, rec);
        Owner b = new Owner("b", 3, rec);
        Owner c = new Owner("c", 2, rec);
        long batchesBefore = stats.batches();
        long repliesBefore = stats.batchedReplies();
        List<ByteBuf> sent = new ArrayList<>();

        int processedDuringTask = onLoop(() -> {
            Object[][] order = {{a, 1}, {b, 1}, {c, 1}, {a, 2}, {c, 2}};
            for (Object[] r : order) {
                ByteBuf p = Unpooled.buffer(8).writeInt((Integer) r[1]);
                sent.add(p);
                s.enqueue((Owner) r[0], (Integer) r[1], p);
            }
            assertEquals(5, s.pending());
            return rec.log.size();
        });
        drain();

        assertEquals(0, processedDuringTask, "nothing is processed before the enqueuing task ends");
        assertEquals(List.of("a:1", "a:2", "c:1", "c:2", "b:1"), rec.log);
        assertEquals(0, onLoop(s::pending));
        for (Owner o : List.of(a, b, c)) {
            for (Thread t : o.threads) {
                assertTrue(loop.inEventLoop(t), "processed on the loop thread");
            }
        }
        List<ByteBuf> received = new ArrayList<>();
        received.addAll(a.payloads);
        received.addAll(b.payloads);
        received.addAll(c.payloads);
        assertEquals(sent.size(), received.size());
        for (ByteBuf p : sent) {
            assertTrue(received.stream().anyMatch(r -> r == p), "every payload passed on");
            assertEquals(0, p.refCnt(), "released by the owner");
        }
        assertEquals(batchesBefore + 1, stats.batches());
        assertEquals(repliesBefore + 5, stats.batchedReplies());
        assertTrue(stats.maxBatch() >= 5);
    }

    @Test
    void batchesLargerThanThePoolAreProcessedWholeAndThePoolGrowsToABound() throws Exception {
        ReplyScheduler s = new ReplyScheduler((SingleThreadEventLoop) loop, new FifoOrder(), null);
        for (int size : new int[] {300, 300, ReplyScheduler.MAX_POOLED + 500}) {
            TestOwner[] owners = new TestOwner[size / 20];
            onLoop(() -> {
                for (int i = 0; i < owners.length; i++) {
                    owners[i] = new TestOwner("r" + i, 20);
                }
                for (int call = 0; call < 20; call++) { // the fanout-20 pattern: each request's n-th reply in turn
                    for (TestOwner o : owners) {
                        s.enqueue(o, call, null);
                    }
                }
                return null;
            });
            drain();
            List<Integer> inOrder = java.util.stream.IntStream.range(0, 20).boxed().toList();
            for (TestOwner o : owners) {
                assertEquals(0, o.outstanding, "every reply of every request processed");
                assertEquals(inOrder, o.processed, "each reply once, a request's replies in arrival order");
            }
            int pooled = onLoop(s::pooled);
            assertEquals(Math.min(owners.length * 20, ReplyScheduler.MAX_POOLED), pooled,
                    "every processed reply kept for reuse, up to the bound (batch of " + size + ")");
        }
    }

    @Test
    void fifoSchedulerProcessesInArrivalOrder() throws Exception {
        ReplyScheduler s = new ReplyScheduler((SingleThreadEventLoop) loop, new FifoOrder(), null);
        assertEquals("fifo", s.order().name());
        Recorder rec = new Recorder();
        Owner a = new Owner("a", 2, rec);
        Owner b = new Owner("b", 1, rec);
        onLoop(() -> {
            s.enqueue(a, 0, Unpooled.buffer(1));
            s.enqueue(b, 0, Unpooled.buffer(1));
            s.enqueue(a, 1, Unpooled.buffer(1));
            return null;
        });
        drain();
        assertEquals(List.of("a:0", "b:0", "a:1"), rec.log);
    }

    @Test
    void replyEnqueuedWhileProcessingGoesToANewBatchAndIsProcessed() throws Exception {
        ReplyScheduler s = new ReplyScheduler((SingleThreadEventLoop) loop, new CompletionFirstOrder(), stats);
        Recorder rec = new Recorder();
        Owner late = new Owner("late", 1, rec);
        Owner first = new Owner("first", 2, rec) {
            @Override
            protected void processScheduled(int call, Object payload) {
                super.processScheduled(call, payload);
                if (call == 0) {
                    s.enqueue(late, 0, Unpooled.buffer(1)); // e.g. a synchronous failure path
                }
            }
        };
        long batchesBefore = stats.batches();
        long repliesBefore = stats.batchedReplies();
        onLoop(() -> {
            s.enqueue(first, 0, Unpooled.buffer(1));
            s.enqueue(first, 1, Unpooled.buffer(1));
            return null;
        });
        drain();
        assertEquals(List.of("first:0", "first:1", "late:0"), rec.log);
        assertEquals(batchesBefore + 2, stats.batches(), "the late reply is a batch of its own");
        assertEquals(repliesBefore + 3, stats.batchedReplies());
        assertEquals(0, onLoop(s::pending));
    }

    @Test
    void batchesLargerThanTheInitialArraysAreProcessedCompletelyAndRepeatedly() throws Exception {
        ReplyScheduler s = new ReplyScheduler((SingleThreadEventLoop) loop, new CompletionFirstOrder(), stats);
        Recorder rec = new Recorder();
        for (int round = 0; round < 3; round++) {
            int n = 100 + round * 150;
            List<Owner> owners = new ArrayList<>();
            for (int i = 0; i < n / 4; i++) {
                owners.add(new Owner("r" + round + "o" + i, 4, rec));
            }
            rec.log.clear();
            onLoop(() -> {
                for (int k = 0; k < 4; k++) {
                    for (Owner o : owners) {
                        s.enqueue(o, k, Unpooled.buffer(1));
                    }
                }
                return null;
            });
            drain();
            assertEquals(owners.size() * 4, rec.log.size());
            for (Owner o : owners) {
                assertEquals(List.of(0, 1, 2, 3), o.processed);
                assertEquals(0, o.outstanding);
            }
            assertTrue(stats.maxBatch() >= owners.size() * 4L);
        }
    }

    @Test
    void schedulerUsedOnlyOnItsLoopKeepsLoopIdentity() throws Exception {
        ReplyScheduler s = new ReplyScheduler((SingleThreadEventLoop) loop, new FifoOrder(), null);
        Recorder rec = new Recorder();
        Owner a = new Owner("a", 1, rec);
        onLoop(() -> {
            s.enqueue(a, 0, Unpooled.buffer(1));
            return null;
        });
        drain();
        assertEquals(1, a.threads.size());
        assertSame(a.threads.get(0), onLoop(Thread::currentThread));
    }
}
