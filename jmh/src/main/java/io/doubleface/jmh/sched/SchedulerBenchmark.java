package io.doubleface.jmh.sched;

import io.doubleface.driver.Transport;
import io.doubleface.jmh.BenchmarkBase;
import io.doubleface.jmh.Signal;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.sched.PendingReply;
import io.doubleface.sched.ReplyOwner;
import io.doubleface.sched.ReplyScheduler;
import io.doubleface.sched.ReplyOrder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.SingleThreadEventLoop;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Cost of the DoubleFace reply scheduler per tail batch: {@link ReplyOrder#order} for
 * {@code fifo} and {@code completion-first} over batches of 1–256 replies, and (optionally) the
 * whole {@link ReplyScheduler} path — enqueue on the loop, tail task, policy, dispatch.
 *
 * <p>Batches: replies of fanout-5 requests; each request has 1–5 of its replies in the batch and
 * is, with probability ½, completed by them (otherwise 1–4 of its replies are still to come);
 * arrival order is shuffled across requests. {@value #VARIANTS} different batches of each size are
 * cycled through so the branch predictor cannot learn one batch.
 *
 * <p>{@code order}: average ns per batch; divide by {@code batch} for ns per reply.
 * {@code enqueueAndTailRun}: one operation = the benchmark thread hands the loop a task that
 * enqueues the batch, then waits for the tail task's last {@code processScheduled}; it therefore
 * also contains one benchmark-thread↔loop round trip (compare with {@code batch=1}).
 *
 * <p>Run: {@code java -jar jmh/target/benchmarks.jar 'sched.SchedulerBenchmark' -f 1 -wi 3 -w 2s -i 5 -r 2s -rf json -rff sched.json}
 */
@State(Scope.Benchmark)
public class SchedulerBenchmark extends BenchmarkBase {

    /** Distinct pre-built batches per size: {@value}. */
    static final int VARIANTS = 32;
    /** Shard calls per request: {@value}. */
    static final int FANOUT = 5;

    @Param({"fifo", "completion-first"})
    public String policy;

    @Param({"1", "4", "16", "64", "256"})
    public int batch;

    private ReplyOrder instance;
    private PendingReply[][] batches;
    private BenchOwner[][] owners;
    private PendingReply[] out;
    private int next;

    /** A request as the policies see it; counts down its outstanding replies as they are processed. */
    static final class BenchOwner extends ReplyOwner {
        final int initialOutstanding;
        int outstanding;
        Signal lastOf; // set on the owner of the batch's final processed reply
        Counter counter;

        BenchOwner(int outstanding) {
            this.initialOutstanding = outstanding;
            this.outstanding = outstanding;
        }

        @Override
        public int outstanding() {
            return outstanding;
        }

        @Override
        protected void processScheduled(int call, Object payload) {
            outstanding--;
            counter.processed(call);
        }
    }

    /** Counts processed replies of one batch and signals the benchmark thread after the last. */
    static final class Counter {
        int remaining;
        long checksum;
        Signal signal;

        void processed(int call) {
            checksum += call;
            if (--remaining == 0) {
                signal.complete();
            }
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        instance = ReplyOrder.create(policy);
        SplittableRandom rnd = new SplittableRandom(42 + batch);
        batches = new PendingReply[VARIANTS][];
        owners = new BenchOwner[VARIANTS][];
        for (int v = 0; v < VARIANTS; v++) {
            List<PendingReply> replies = new ArrayList<>(batch);
            List<BenchOwner> os = new ArrayList<>();
            int call = 0;
            while (replies.size() < batch) {
                int inBatch = 1 + rnd.nextInt(Math.min(FANOUT, batch - replies.size()));
                boolean completes = inBatch == FANOUT || rnd.nextBoolean();
                int outstanding = completes ? inBatch : inBatch + 1 + rnd.nextInt(FANOUT - inBatch);
                BenchOwner o = new BenchOwner(outstanding);
                os.add(o);
                for (int i = 0; i < inBatch; i++) {
                    replies.add(new PendingReply(o, call++, null));
                }
            }
            Collections.shuffle(replies, new java.util.Random(rnd.nextLong()));
            batches[v] = replies.toArray(new PendingReply[0]);
            owners[v] = os.toArray(new BenchOwner[0]);
        }
        out = new PendingReply[batch];
    }

    @Benchmark
    public PendingReply[] order() {
        int v = next++ & (VARIANTS - 1);
        instance.order(batches[v], batch, out);
        return out;
    }

    /** One loop, one {@link ReplyScheduler} on it, for {@link #enqueueAndTailRun}. */
    @State(Scope.Benchmark)
    public static class LoopState {
        LoopGroup loops;
        SingleThreadEventLoop loop;
        ReplyScheduler scheduler;
        final Signal signal = new Signal();
        final Counter counter = new Counter();

        @Setup(Level.Trial)
        public void setUp(SchedulerBenchmark b) throws Exception {
            loops = new LoopGroup("jmh-sched", 1, Transport.AUTO);
            loop = (SingleThreadEventLoop) loops.loops().get(0);
            scheduler = loop.submit(() -> new ReplyScheduler(loop, ReplyOrder.create(b.policy), null)).get();
            counter.signal = signal;
            for (BenchOwner[] os : b.owners) {
                for (BenchOwner o : os) {
                    o.counter = counter;
                }
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            loops.close();
        }
    }

    @Benchmark
    public long enqueueAndTailRun(LoopState s) {
        PendingReply[] replies = batches[next++ & (VARIANTS - 1)];
        int v = (next - 1) & (VARIANTS - 1);
        BenchOwner[] os = owners[v];
        int n = batch;
        s.counter.remaining = n;
        s.signal.arm();
        s.loop.execute(() -> {
            for (BenchOwner o : os) {
                o.outstanding = o.initialOutstanding;
            }
            ReplyScheduler sched = s.scheduler;
            for (int i = 0; i < n; i++) {
                PendingReply r = replies[i];
                sched.enqueue(r.owner(), r.call(), null);
            }
        });
        s.signal.await();
        return s.counter.checksum;
    }
}
