package io.doubleface.internal.engine;

import io.doubleface.api.Backend;
import io.doubleface.driver.Command;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ShardDriver;
import io.netty.channel.EventLoop;
import io.netty.channel.nio.NioEventLoopGroup;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What per-stage tracing ({@code --trace-stages}, {@link StageStats}) costs one request in the
 * engine, without I/O: the exchange of {@code io.doubleface.jmh.engine.ExchangeBenchmark} (plan
 * with {@code fanout} calls, every reply handled, merge, complete) with the engine's sampling
 * decision at admission and, for a sampled request, the six time points and the per-stage records
 * at the end. {@code trace}: {@code off} (0), {@code sampled:100} (100), {@code all} (1).
 *
 * <p>In package {@code io.doubleface.internal.engine} because the hooks are package-private (the engine sets
 * them in {@code submit}); this mirrors {@code FanoutEngine.submit}'s two lines.
 * Run with {@code -prof gc} for the bytes per request:
 * {@code java -jar jmh/target/benchmarks.jar 'StageTracingBenchmark' -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class StageTracingBenchmark {

    @Param({"0", "100", "1"})
    public int trace;

    @Param({"5"})
    public int fanout;

    record Get(long key) implements Command<Object> {}

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
        int fanout;

        Service(Backend<Get> shards) {
            this.shards = shards;
        }

        @Override
        public void plan(Long key, FanoutPlan<Long, Object> plan) {
            long k = key;
            for (int i = 0; i < fanout; i++) {
                plan.call(shards, (int) ((k + i) % 20), new Get(k + i), handler);
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

    /** A model that only names the stages' row (the benchmark drives the exchange itself). */
    record NamedModel(io.doubleface.model.Configuration configuration) implements ThreadingModel {
        @Override
        public List<EventLoop> frontendLoops() {
            return List.of();
        }

        @Override
        public void execute(FanoutExchange<?, ?, ?> exchange) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void sendRound(FanoutExchange<?, ?, ?> exchange) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void activate() {}

        @Override
        public void park() {}

        @Override
        public void close() {}
    }

    NioEventLoopGroup group;
    EventLoop loop;
    final Object owner = new Object();
    List<Backend<?>> backends; // the server's backends: the only ones a plan may call
    Service service;
    final Sink sink = new Sink();
    final Object reply = new Object();
    StageStats stages;
    ThreadingModel model;
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
        stages = new StageStats(trace);
        model = new NamedModel(io.doubleface.model.Configuration.parse("doubleface"));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    /** Admission's sampling decision, plan, {@code fanout} replies, merge, complete: one request. */
    @Benchmark
    public void request(Blackhole bh) {
        sink.bh = bh;
        FanoutExchange<Long, Object, List<Object>> ex = new FanoutExchange<>(service, key++ & 1023, loop, sink,
                backends, TimeUnit.SECONDS.toNanos(1), null);
        ex.model(model);
        if (stages.sample()) {
            ex.trace(stages);
        }
        ex.plan();
        boolean last = false;
        for (int c = 0, n = ex.calls(); c < n; c++) {
            last = ex.processReply(ex.tag(c), reply);
        }
        if (last) {
            ex.completeRound();
        }
    }
}
