package io.doubleface.jmh.engine;

import io.doubleface.api.Backend;
import io.doubleface.driver.Command;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.CallRef;
import io.doubleface.api.ReplyHandler;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.internal.engine.FanoutExchange;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.ResponseSink;
import io.doubleface.jmh.BenchmarkBase;
import io.netty.channel.EventLoop;
import io.netty.channel.nio.NioEventLoopGroup;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The engine's own cost per request, without I/O: one {@link FanoutExchange} planned with
 * {@code fanout} calls on one backend, every reply handed to it in order (as the DoubleFace
 * scheduler does on the request's loop), merged, and completed into a sink. The service is the
 * shape of the YCSB one: a command object per call, one shared reply handler, a merge that returns
 * the list of processed replies. What is left out: the deadline timer (its cost is Netty's
 * {@code schedule}), the HTTP codec and the drivers.
 *
 * <p>Run with {@code -prof gc} for the bytes allocated per request ({@code gc.alloc.rate.norm}):
 * {@code java -jar jmh/target/benchmarks.jar 'engine.ExchangeBenchmark' -prof gc -rf json -rff exchange.json}
 */
@State(Scope.Benchmark)
public class ExchangeBenchmark extends BenchmarkBase {

    @Param({"1", "5", "20"})
    public int fanout;

    /** A command with no store behind it (the benchmark never sends it). */
    record Get(long key) implements Command<Object> {}

    /** A driver of 20 shards that opens no client. */
    static final class NoDriver implements ShardDriver<Get> {
        @Override
        public int shardCount() {
            return 20;
        }

        @Override
        public String describe() {
            return "none://20";
        }

        @Override
        public LoopClient<Get> openOn(EventLoop loop) {
            throw new UnsupportedOperationException();
        }

        @Override
        public BlockingClient<Get> openBlocking() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {}
    }

    static final class Service implements FanoutService<Long, Object, List<Object>> {
        final Backend<Get> shards;
        final ReplyHandler<Long, Object, Object> handler = (q, call, reply) -> reply;
        /** The same reply named by a typed reference instead of a handler. */
        static final CallRef<Object> VALUE = CallRef.named("value");
        int fanout;
        boolean byRef;

        Service(Backend<Get> shards) {
            this.shards = shards;
        }

        @Override
        public void plan(Long key, FanoutPlan<Long, Object> plan) {
            long k = key;
            for (int i = 0; i < fanout; i++) {
                if (byRef) {
                    plan.call(shards, (int) ((k + i) % 20), new Get(k + i), VALUE);
                } else {
                    plan.call(shards, (int) ((k + i) % 20), new Get(k + i), handler);
                }
            }
        }

        @Override
        public List<Object> merge(Long key, Replies<Object> replies, FanoutPlan<Long, Object> next) {
            return replies.values();
        }
    }

    static final class Sink implements ResponseSink<List<Object>> {
        Blackhole bh;

        @Override
        public void complete(List<Object> response) {
            bh.consume(response);
        }

        @Override
        public void fail(Outcome outcome, String reason) {
            throw new IllegalStateException(outcome + ": " + reason);
        }
    }

    NioEventLoopGroup group;
    EventLoop loop;
    final Object owner = new Object();
    List<Backend<?>> backends; // the server's backends: the only ones a plan may call
    Service service;
    Service byRef;
    final Sink sink = new Sink();
    final Object reply = new Object();
    long key;

    @Setup(Level.Trial)
    @SuppressWarnings("deprecation")
    public void setUp() {
        group = new NioEventLoopGroup(1);
        loop = group.next();
        Backend<Get> shards = new Backend<>("shards", 0, new NoDriver(), owner);
        backends = List.of(shards);
        service = new Service(shards);
        service.fanout = fanout;
        byRef = new Service(service.shards);
        byRef.fanout = fanout;
        byRef.byRef = true;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    /** Plan, {@code fanout} replies, merge, complete: one request. */
    @Benchmark
    public void request(Blackhole bh) {
        run(service, bh);
    }

    /** {@link #request} with every call's reply named by a {@link CallRef} constant instead of a handler. */
    @Benchmark
    public void requestByRef(Blackhole bh) {
        run(byRef, bh);
    }

    private void run(Service s, Blackhole bh) {
        sink.bh = bh;
        FanoutExchange<Long, Object, List<Object>> ex = new FanoutExchange<>(s, key++ & 1023, loop, sink,
                backends, TimeUnit.SECONDS.toNanos(1), null);
        ex.plan();
        boolean last = false;
        for (int c = 0, n = s.fanout; c < n; c++) {
            last = ex.processReply(ex.tag(c), reply);
        }
        if (last) {
            ex.completeRound();
        }
    }
}
