package io.doubleface.internal.engine;

import io.doubleface.driver.spi.CallTrace;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.internal.loop.Threads;
import io.doubleface.model.Configuration;
import io.netty.channel.EventLoop;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** What the models have in common: frontend loops, busy-poll of the I/O loops, pools, hops. */
abstract class AbstractModel implements ThreadingModel {

    final Configuration config;
    final ModelContext ctx;
    private final List<EventLoop> frontends;
    /** The first connections of this model's clients; set once by {@link #connect()}. */
    private volatile List<ClientWarmup> warmups = List.of();

    AbstractModel(Configuration config, ModelContext ctx) {
        this.config = config;
        this.ctx = ctx;
        int io = ctx.io().size();
        int f = config.frontends() == 0 ? io : config.frontends();
        if (f > io) {
            throw new IllegalArgumentException("configuration '" + config.name() + "': " + f
                    + " frontend loops but the server has " + io + " I/O loops (raise --io-threads)");
        }
        this.frontends = ctx.io().loops().subList(0, f);
    }

    @Override
    public final Configuration configuration() {
        return config;
    }

    @Override
    public final List<EventLoop> frontendLoops() {
        return frontends;
    }

    /**
     * Opens this model's clients that are not open yet and starts connecting them (warm start):
     * called once by the engine when it builds the model, before the model takes traffic. Never
     * on the request path.
     */
    final void connect() {
        warmups = List.copyOf(startConnects());
    }

    /** Opens the clients and starts their first connections ({@link ModelContext} or the model's own). */
    abstract List<ClientWarmup> startConnects();

    /** {@return the first connections of this model's clients (empty before {@link #connect()})} */
    final List<ClientWarmup> warmups() {
        return warmups;
    }

    /** Stops retrying the first connections of the model's own clients, as the model closes. */
    final void cancelWarmups() {
        for (ClientWarmup w : warmups) {
            w.cancel();
        }
    }

    @Override
    public void activate() {
        ctx.io().setBusyPoll(config.busyPoll());
    }

    @Override
    public void park() {
        // the I/O loops' poll mode is set by whichever model is activated next
    }

    @Override
    public void close() {
    }

    /**
     * Sends call {@code c} of {@code ex}'s current round on {@code client}; with OpenTelemetry on,
     * the call's trace headers go with it ({@link CallTrace}).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static void send(LoopClient client, FanoutExchange<?, ?, ?> ex, int c, ReplyListener listener) {
        java.util.Map<String, String> h = ex.callHeaders(c);
        if (h == null) {
            client.send(ex.shard(c), ex.command(c), listener, ex.tag(c));
            return;
        }
        CallTrace.set(List.of(h));
        try {
            client.send(ex.shard(c), ex.command(c), listener, ex.tag(c));
        } finally {
            CallTrace.clear();
        }
    }

    /** Runs the exchange's merge on its upstream loop (a hop unless we are already there). */
    static void mergeOnUpstream(FanoutExchange<?, ?, ?> ex) {
        EventLoop loop = ex.upstreamLoop();
        if (loop.inEventLoop()) {
            ex.completeRound();
        } else {
            loop.execute(ex::completeRound);
        }
    }

    /** Runs {@code task} on {@code pool}, answering 503 if the pool refuses it. */
    static boolean submit(ExecutorService pool, Runnable task, FanoutExchange<?, ?, ?> ex, String what) {
        try {
            pool.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            ex.finish(Outcome.OVERLOADED, "overloaded: " + what + " queue full");
            return false;
        }
    }

    /**
     * A fixed pool of {@code n} named platform threads, all started now (no thread is created on
     * the request path), with a queue of at most {@code queueLimit} tasks.
     */
    static ThreadPoolExecutor fixedPool(String name, int n, int queueLimit) {
        ThreadPoolExecutor p = new ThreadPoolExecutor(n, n, 0, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queueLimit), Threads.platform(name), new ThreadPoolExecutor.AbortPolicy());
        p.prestartAllCoreThreads();
        return p;
    }

    /** An on-demand pool like the JDK's default AIO group: a thread per task when none is idle, idle threads live 60 s. */
    static ThreadPoolExecutor cachedPool(String name) {
        return new ThreadPoolExecutor(0, Configuration.MAX_THREADS, 60, TimeUnit.SECONDS,
                new SynchronousQueue<>(), Threads.platform(name), new ThreadPoolExecutor.AbortPolicy());
    }

    static void shutdown(ExecutorService pool) {
        pool.shutdownNow();
    }

    @Override
    public String toString() {
        return config.name();
    }
}
