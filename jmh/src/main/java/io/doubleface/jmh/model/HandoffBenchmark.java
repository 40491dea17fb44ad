package io.doubleface.jmh.model;

import io.doubleface.driver.Transport;
import io.doubleface.jmh.BenchmarkBase;
import io.doubleface.jmh.Signal;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.internal.loop.Threads;
import io.netty.channel.EventLoop;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The cost of the cross-thread hand-offs the threading models pay per shard reply, against none:
 *
 * <pre>
 *   none          loop: step ─▶ step ─▶ …                                  (DoubleFace: same thread)
 *   loopPoolLoop  loop ─▶ pool worker ─▶ loop ─▶ …                         (Type-1, Type-2b)
 *   loopLoopLoop  loop ─▶ other loop ─▶ loop ─▶ …                          (Type-2a backend → frontend)
 * </pre>
 *
 * <p>All three run entirely on event loops of an {@link LoopGroup}: one operation is one round
 * trip of a trivial step, measured as {@value #ROUND_TRIPS} round trips per invocation so that the
 * benchmark thread's own hand-off to the loop (one per invocation) costs under 1/{@value #ROUND_TRIPS}
 * of it. {@code inflight} chains run concurrently: 1 = the latency of one hop pair with idle
 * threads (each hop wakes a sleeping thread); 16 = many requests in flight, where the receiving
 * thread is often already awake and hand-offs batch. Result: average ns per round trip (with
 * {@code inflight=16}, per round trip of the aggregate, i.e. the inverse throughput).
 *
 * <p>Pools ({@code pool}): {@code fixed} = 4 prestarted threads and a bounded queue (Type-1,
 * {@code type2b-fixed}); {@code cached} = SynchronousQueue, threads on demand (Type-2b default).
 *
 * <p>Run: {@code java -jar jmh/target/benchmarks.jar 'model.HandoffBenchmark' -f 1 -wi 3 -w 2s -i 5 -r 2s -rf json -rff handoff.json}
 */
@State(Scope.Benchmark)
public class HandoffBenchmark extends BenchmarkBase {

    /** Round trips per benchmark invocation: {@value}. */
    static final int ROUND_TRIPS = 1024;

    @Param({"1", "16"})
    public int inflight;

    LoopGroup loops;
    EventLoop home;
    EventLoop other;
    final Signal signal = new Signal();
    long sink;

    @Setup(Level.Trial)
    public void setUp() {
        loops = new LoopGroup("jmh-loop", 2, Transport.AUTO);
        home = loops.loops().get(0);
        other = loops.loops().get(1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        loops.close();
    }

    /** The pool of {@link #loopPoolLoop}. */
    @State(Scope.Benchmark)
    public static class PoolState {
        @Param({"fixed", "cached"})
        public String pool;

        ThreadPoolExecutor executor;

        @Setup(Level.Trial)
        public void setUp() {
            executor = switch (pool) {
                case "fixed" -> new ThreadPoolExecutor(4, 4, 0, TimeUnit.SECONDS,
                        new ArrayBlockingQueue<>(4096), Threads.platform("jmh-pool"));
                case "cached" -> new ThreadPoolExecutor(0, 4096, 60, TimeUnit.SECONDS,
                        new SynchronousQueue<>(), Threads.platform("jmh-pool"));
                default -> throw new IllegalArgumentException("pool: " + pool + " (expected: fixed or cached)");
            };
            executor.prestartAllCoreThreads();
        }

        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException {
            executor.shutdown();
            executor.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * A chain of round trips started on the home loop; each round trip does a trivial step (the
     * stand-in for onReply) at the far side and continues on the home loop.
     */
    abstract static class Chain implements Runnable {
        final HandoffBenchmark b;
        final Batch batch;
        int left;

        Chain(HandoffBenchmark b, Batch batch, int roundTrips) {
            this.b = b;
            this.batch = batch;
            this.left = roundTrips;
        }

        /** On the home loop: start the next round trip or finish. */
        final void next() {
            if (left-- == 0) {
                batch.chainDone();
                return;
            }
            hop();
        }

        /** Hand {@link #run} to the far side. */
        abstract void hop();

        /** Far side: the step, then back home. */
        @Override
        public final void run() {
            b.sink++; // racy on purpose across chains: it only has to be observable
            b.home.execute(this::next);
        }
    }

    /** The chains of one invocation; the last one to finish releases the benchmark thread. */
    static final class Batch {
        final Signal signal;
        int chains; // touched only on the home loop

        Batch(Signal signal, int chains) {
            this.signal = signal;
            this.chains = chains;
        }

        void chainDone() {
            if (--chains == 0) {
                signal.complete();
            }
        }
    }

    interface ChainFactory {
        Chain create(Batch batch, int roundTrips);
    }

    private void runChains(ChainFactory factory) {
        int k = inflight;
        signal.arm();
        home.execute(() -> {
            Batch batch = new Batch(signal, k);
            for (int i = 0; i < k; i++) {
                int share = ROUND_TRIPS / k + (i < ROUND_TRIPS % k ? 1 : 0);
                factory.create(batch, share).next();
            }
        });
        signal.await();
    }

    /** Baseline: the step and its continuation run inline on the home loop. */
    @Benchmark
    @OperationsPerInvocation(ROUND_TRIPS)
    public long none() {
        signal.arm();
        home.execute(() -> {
            for (int i = 0; i < ROUND_TRIPS; i++) {
                step();
            }
            signal.complete();
        });
        signal.await();
        return sink;
    }

    private void step() {
        sink++;
    }

    /** Loop → thread pool → loop: what Type-1 (per shard call) and Type-2b (per reply) pay. */
    @Benchmark
    @OperationsPerInvocation(ROUND_TRIPS)
    public long loopPoolLoop(PoolState p) {
        ThreadPoolExecutor pool = p.executor;
        runChains((batch, n) -> new Chain(this, batch, n) {
            @Override
            void hop() {
                pool.execute(this);
            }
        });
        return sink;
    }

    /** Loop → another loop → loop: what Type-2a pays per reply (backend loop → frontend loop). */
    @Benchmark
    @OperationsPerInvocation(ROUND_TRIPS)
    public long loopLoopLoop() {
        EventLoop far = other;
        runChains((batch, n) -> new Chain(this, batch, n) {
            @Override
            void hop() {
                far.execute(this);
            }
        });
        return sink;
    }
}
