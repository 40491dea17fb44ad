package io.doubleface.internal.engine;

import io.doubleface.api.Backend;
import io.doubleface.api.FanoutService;
import io.doubleface.model.Configuration;
import io.netty.channel.EventLoop;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits upstream requests and runs them under the active threading configuration; switches the
 * active configuration at run time.
 *
 * <p>Switching: the active model is one atomic reference, read once when a request is admitted;
 * the request keeps that model to the end. A switch builds the new model on first use (its
 * threads start then, and are never created on the request path, and its clients start
 * connecting to every shard: warm start; the switch does not wait for them), parks the old one (threads
 * and connections stay, so its in-flight requests finish normally) and publishes the new one.
 * Switches are serialized by a lock; admission takes no lock. {@link #prepare} builds
 * configurations ahead of time, so that later switches to them create no thread at all (the load
 * adapter prepares every configuration it may pick).
 *
 * <pre>
 *   submit ─▶ model = active.get() ─▶ exchange(model) ─▶ model.execute ─▶ … ─▶ sink (once)
 *   switchTo(b):  create b if new ─▶ a.park() ─▶ b.activate() ─▶ active.set(b)
 * </pre>
 *
 * <p>One engine serves every route of a server: each {@link #submit} names the service that runs
 * the request, and all services share the server's backends, models and configuration.
 *
 * <p>Models are keyed by the threads a configuration runs, not by its spelling: a μTune name and
 * the plain name of the same threads (e.g. {@code sdb-1n-8w} and {@code thread-1f-8}, see
 * {@link Configuration}) are one model. Switching from one spelling to its twin is no switch (no
 * park, no count, no {@link #switchLog()} entry); {@link #active()} then reports the spelling
 * switched to last, while the model keeps the spelling it was built under
 * ({@link ThreadingModel#configuration()}, which request contexts and traces report).
 *
 * <p>Threading: {@link #submit} from any upstream loop; {@link #switchTo} from any thread.
 */
public final class FanoutEngine implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FanoutEngine.class);

    /** The server's backends, by index: the only ones a plan may call. */
    private final List<Backend<?>> backends;
    private final ModelContext ctx;
    private final long deadlineNanos;
    private final RequestStats stats = new RequestStats();
    /** The models built, by {@link #threadsOf} their configuration, in creation order. */
    private final Map<Configuration, ThreadingModel> models = new LinkedHashMap<>();
    private final AtomicReference<ThreadingModel> active = new AtomicReference<>();
    /** The active configuration as last switched to (the active model's, or its twin's spelling). */
    private volatile Configuration activeConfig;
    private final AtomicInteger nextFrontend = new AtomicInteger();
    private final AtomicLong switches = new AtomicLong();
    private final ArrayDeque<SwitchRecord> switchLog = new ArrayDeque<>();
    private volatile EngineListener listener;

    /** Switches kept in {@link #switchLog()} (older ones are only counted): {@value}. */
    public static final int SWITCH_LOG_LIMIT = 1024;

    /**
     * Most configurations built at once (active, parked and prepared): {@value}. Building one more
     * first closes the configuration parked the longest, if it has been parked for longer than the
     * deadline plus a second (so none of its requests is still in flight) and was not prepared;
     * if none can go, the switch is refused. So no sequence of switches can pile up threads.
     */
    public static final int MAX_LIVE_CONFIGURATIONS = 16;

    /**
     * Most pool threads the live configurations may start together (request threads, workers,
     * backend loops and reactors; the server's I/O loops and on-demand pools not counted):
     * {@value}. Building one that would go over first closes long-parked configurations as
     * above; if that is not enough, the switch is refused, so that admin requests for
     * configurations with large pools cannot start threads without bound (docs/reliability.md).
     */
    public static final int MAX_LIVE_POOL_THREADS = 4096;

    private final LongAdder inFlight = new LongAdder();
    /** Stage tracing: off until {@link StageStats#every(int)} is set (FanoutServer.Builder.traceStages). */
    private final StageStats stages = new StageStats(0);
    /** OpenTelemetry spans, or {@code null} (then no OpenTelemetry class is loaded). */
    private volatile OtelTracing otel;
    private final Runnable finishedOne = inFlight::decrement;
    /** Admission control, or {@code null} when unlimited (then nothing is checked per request). */
    private final AdmissionLimiter admission;
    private volatile boolean draining;
    /** Set once every client of the active configuration has connected (see {@link #isConnected()}). */
    private volatile boolean connectedOnce;
    private final Map<Configuration, Long> parkedAt = new HashMap<>(); // parked models: System.nanoTime() when parked
    private final Set<Configuration> prepared = new HashSet<>();

    /** One switch, for {@code /admin/stats}. */
    public record SwitchRecord(Instant at, String from, String to) {}

    /**
     * @param ctx the server's loops and backends; a plan may call those backends only
     * @param initial the configuration to start in
     * @param deadlineNanos per-request deadline; a request not answered by then gets 504
     */
    public FanoutEngine(ModelContext ctx, Configuration initial, long deadlineNanos) {
        this(ctx, initial, deadlineNanos, null);
    }

    /**
     * @param ctx the server's loops and backends; a plan may call those backends only
     * @param initial the configuration to start in
     * @param deadlineNanos per-request deadline; a request not answered by then gets 504
     * @param admission makes the admission limiter from the engine's own "answered" callback, or
     *     {@code null} for no limit
     */
    public FanoutEngine(ModelContext ctx, Configuration initial, long deadlineNanos,
            Function<Runnable, AdmissionLimiter> admission) {
        if (deadlineNanos <= 0) {
            throw new IllegalArgumentException("deadline: " + deadlineNanos + " ns (expected: > 0)");
        }
        this.backends = ctx.backends();
        this.ctx = ctx;
        this.deadlineNanos = deadlineNanos;
        this.admission = admission == null ? null : admission.apply(finishedOne);
        switchTo(initial);
    }

    /**
     * Admits one request of {@code service} on {@code loop} (the loop of its upstream connection)
     * under the active configuration. The outcome goes to {@code sink} exactly once.
     */
    public <Q, R> void submit(EventLoop loop, FanoutService<Q, ?, R> service, Q request, ResponseSink<R> sink) {
        submit(loop, service, request, sink, null, null);
    }

    /**
     * {@link #submit(EventLoop, FanoutService, Object, ResponseSink)} with what OpenTelemetry spans
     * need when the server has them ({@link #openTelemetry}): the route's name and the request's
     * headers (its W3C {@code traceparent}); both may be {@code null}.
     */
    public <Q, R> void submit(EventLoop loop, FanoutService<Q, ?, R> service, Q request, ResponseSink<R> sink,
            String route, TraceCarrier headers) {
        Runnable onFinish = finishedOne;
        AdmissionLimiter a = admission;
        if (a != null) {
            onFinish = a.tryAcquire();
            if (onFinish == null) {
                // refused at once: no exchange, no shard call, not counted as admitted
                sink.fail(Outcome.OVERLOADED, "overloaded: " + a.inFlight() + " requests in flight (limit "
                        + a.limit() + "); retry later");
                return;
            }
        }
        ThreadingModel model = active.get();
        stats.admitted();
        EngineListener l = listener;
        if (l != null) {
            long now = System.nanoTime();
            l.admitted(now);
            sink = new ObservedSink<>(sink, l, model, now);
        }
        inFlight.increment();
        FanoutExchange<Q, ?, R> ex = new FanoutExchange<>(service, request, loop, sink, backends, deadlineNanos,
                onFinish);
        ex.model(model);
        ex.stats(stats);
        if (stages.sample()) {
            ex.trace(stages);
        }
        OtelTracing ot = otel;
        if (ot != null) {
            ex.otel(RequestTrace.start(ot, route, model.configuration().name(), headers, ex.startNanos()));
        }
        ex.armDeadline();
        try {
            model.execute(ex);
        } catch (RuntimeException e) {
            stats.executeErrors.error(log, "model " + model + " failed to run a request", e);
            ex.finish(Outcome.INTERNAL_ERROR, "internal error");
        }
    }

    /**
     * Sends a span per request (and per shard call) to {@code tracing} from now on; {@code null}:
     * none (the default). See {@code FanoutServer.Builder.openTelemetry}.
     */
    public void openTelemetry(OtelTracing tracing) {
        this.otel = tracing;
    }

    /** {@return whether requests get OpenTelemetry spans (then upstreams pass their headers to submit)} */
    public boolean tracesSpans() {
        return otel != null;
    }

    /** {@return the per-stage service times of traced requests ({@code --trace-stages})} */
    public StageStats stages() {
        return stages;
    }

    /** {@return the admission limiter, or {@code null} when admission is unlimited} */
    public AdmissionLimiter admission() {
        return admission;
    }

    /** Requests admitted and not yet answered. */
    public long inFlight() {
        return inFlight.sum();
    }

    /** From now on, upstreams refuse new requests ({@code 503}, connection closed); see {@code FanoutServer.stop}. */
    public void startDrain() {
        draining = true;
    }

    /** Whether the server is draining (stopping): no new request is admitted. */
    public boolean isDraining() {
        return draining;
    }

    /**
     * A client of the active configuration whose first connection is not made yet.
     *
     * @param backend the backend's name
     * @param client where the client runs: a loop's name (e.g. {@code io-0}, {@code t2a-be-1}) or
     *     {@code blocking} (the blocking client of the thread and Type-1 models)
     * @param failure why its last attempt failed (shard, address, cause), or {@code null} while the
     *     first attempt is under way
     */
    public record Waiting(String backend, String client, String failure) {
        @Override
        public String toString() {
            return "backend " + backend + " (" + client + "): " + (failure == null ? "connecting" : failure);
        }
    }

    /**
     * Whether every client of the active configuration has made its first connection to every
     * shard (warm start). Once true it stays true: readiness covers the first connection, and a
     * shard lost later (or a switch to a configuration still connecting) does not make it false
     * again — the drivers reconnect on use.
     *
     * @return whether the server has been connected
     */
    public boolean isConnected() {
        if (connectedOnce) {
            return true;
        }
        for (ClientWarmup w : warmups(active.get())) {
            if (!w.isConnected()) {
                return false;
            }
        }
        connectedOnce = true;
        return true;
    }

    /**
     * {@return a future completed when every client of the configuration active now has made its
     * first connection; it never completes exceptionally (failed attempts are retried)}
     */
    public java.util.concurrent.CompletableFuture<Void> whenConnected() {
        List<ClientWarmup> ws = warmups(active.get());
        java.util.concurrent.CompletableFuture<?>[] fs = new java.util.concurrent.CompletableFuture<?>[ws.size()];
        for (int i = 0; i < fs.length; i++) {
            fs[i] = ws.get(i).whenConnected();
        }
        return java.util.concurrent.CompletableFuture.allOf(fs);
    }

    /** {@return the clients of the active configuration not connected yet (empty once {@link #isConnected()})} */
    public List<Waiting> waiting() {
        if (connectedOnce) {
            return List.of();
        }
        List<Waiting> out = new ArrayList<>();
        for (ClientWarmup w : warmups(active.get())) {
            if (!w.isConnected()) {
                out.add(new Waiting(w.backend(), w.where(), w.failure()));
            }
        }
        return out;
    }

    private static List<ClientWarmup> warmups(ThreadingModel m) {
        return m instanceof AbstractModel a ? a.warmups() : List.of();
    }

    /** Installs (or, with {@code null}, removes) the listener of admissions and answers. */
    public void listener(EngineListener listener) {
        this.listener = listener;
    }

    /**
     * Builds the configurations {@code configurations} now (threads started, every client opened and
     * connecting, see {@link io.doubleface.driver.spi.LoopClient#connect()}) and leaves them parked, so
     * that switching to them later creates no thread. A configuration whose twin (same threads, see
     * the class comment) is built already is not built again.
     *
     * @return the configurations, as given
     * @throws IllegalArgumentException if one does not fit this server
     */
    public synchronized List<Configuration> prepare(List<? extends Configuration> configurations) {
        List<Configuration> out = new ArrayList<>();
        for (Configuration config : configurations) {
            Configuration key = threadsOf(config);
            if (!models.containsKey(key)) {
                ThreadingModel m = create(config);
                if (active.get() != null) {
                    m.park();
                    parkedAt.put(key, System.nanoTime());
                }
            }
            prepared.add(key);
            out.add(config);
        }
        return out;
    }

    /**
     * Makes {@code config} the active configuration. Requests admitted from now on use it; requests
     * in flight finish under theirs. The twin of the active configuration (the same threads spelt
     * another way, see the class comment) is no switch: the model stays, only {@link #active()}
     * reports the new spelling.
     *
     * @param config the configuration, not {@code null}
     * @return the now active configuration ({@code config})
     * @throws IllegalArgumentException if it does not fit this server
     */
    public synchronized Configuration switchTo(Configuration config) {
        Objects.requireNonNull(config, "config");
        Configuration key = threadsOf(config);
        ThreadingModel next = models.get(key);
        if (next == null) {
            next = create(config);
        }
        ThreadingModel prev = active.get();
        Configuration prevConfig = activeConfig;
        if (prev == next) {
            activeConfig = config;
            if (!config.equals(prevConfig)) {
                log.info("configuration {} runs the threads of {}: no switch", config.name(), prevConfig.name());
            }
            return config;
        }
        if (prev != null) {
            prev.park();
            parkedAt.put(threadsOf(prev.configuration()), System.nanoTime());
        }
        next.activate();
        parkedAt.remove(key);
        active.set(next);
        activeConfig = config;
        if (prev != null) {
            switches.incrementAndGet();
            synchronized (switchLog) {
                if (switchLog.size() == SWITCH_LOG_LIMIT) {
                    switchLog.removeFirst();
                }
                switchLog.addLast(new SwitchRecord(Instant.now(), prevConfig.name(), config.name()));
            }
            log.info("configuration switched: {} -> {}", prevConfig.name(), config.name());
        } else {
            log.info("configuration: {}", config.name());
        }
        return config;
    }

    /**
     * The identity of the threads {@code config} runs: the configuration without the μTune style it
     * was written as, so that {@code sdb-1n-8w} and {@code thread-1f-8} have the same one. The
     * engine keys its models by it.
     */
    static Configuration threadsOf(Configuration config) {
        return switch (config) {
            case Configuration.ThreadPerRequest t when t.style() != null ->
                    new Configuration.ThreadPerRequest(t.frontends(), t.threads(), t.virtualThreads(), t.inline(),
                            t.busyPoll(), null);
            case Configuration.Type2a t when t.style() != null ->
                    new Configuration.Type2a(t.frontends(), t.backends(), t.dispatchWorkers(), t.busyPoll(), null);
            default -> config;
        };
    }

    /**
     * {@return the model built for {@code config}'s threads (its own or its twin's, active or parked),
     * or {@code null} if none is built}
     */
    public synchronized ThreadingModel model(Configuration config) {
        return models.get(threadsOf(config));
    }

    /** Builds {@code config}, first closing a long-parked one if {@link #MAX_LIVE_CONFIGURATIONS} are live. */
    private ThreadingModel create(Configuration config) {
        if (models.size() >= MAX_LIVE_CONFIGURATIONS && !evictOne()) {
            throw new IllegalArgumentException("configuration '" + config.name() + "': " + models.size()
                    + " configurations are live, the most a server keeps; switch to one of them ("
                    + liveNames() + "), or retry once one has been parked for longer than "
                    + "the deadline");
        }
        int wanted = poolThreads(config);
        while (livePoolThreads() + wanted > MAX_LIVE_POOL_THREADS) {
            if (!evictOne()) {
                throw new IllegalArgumentException("configuration '" + config.name() + "': it starts " + wanted
                        + " pool threads and the live configurations (" + liveNames()
                        + ") run " + livePoolThreads() + "; at most " + MAX_LIVE_POOL_THREADS
                        + " together (switch to a live one, or retry once one has been parked for longer than the "
                        + "deadline)");
            }
        }
        ThreadingModel m = ThreadingModels.create(config, ctx);
        if (m instanceof AbstractModel a) {
            try {
                a.connect(); // warm start: every client of the configuration connects now
            } catch (RuntimeException e) {
                m.close();
                throw e;
            }
        }
        models.put(threadsOf(config), m);
        return m;
    }

    private String liveNames() {
        List<String> names = new ArrayList<>();
        for (ThreadingModel m : models.values()) {
            names.add(m.configuration().name());
        }
        return String.join(", ", names);
    }

    /** The pool threads a configuration starts (see {@link #MAX_LIVE_POOL_THREADS}). */
    static int poolThreads(Configuration c) {
        return switch (c) {
            case Configuration.ThreadPerRequest t -> t.threads();
            case Configuration.Type1 t -> t.workers();
            case Configuration.Type2a t -> t.dispatchWorkers() + t.backends();
            case Configuration.Type2b t -> t.fixedWorkers() + t.reactors();
            case Configuration.DoubleFace d -> 0;
        };
    }

    private int livePoolThreads() {
        int n = 0;
        for (ThreadingModel m : models.values()) {
            n += poolThreads(m.configuration());
        }
        return n;
    }

    /** Closes the configuration parked the longest, if it may go. */
    private boolean evictOne() {
        long now = System.nanoTime();
        long quiet = deadlineNanos + TimeUnit.SECONDS.toNanos(1);
        Configuration oldest = null;
        long oldestAt = Long.MAX_VALUE;
        for (Map.Entry<Configuration, Long> e : parkedAt.entrySet()) {
            if (!prepared.contains(e.getKey()) && now - e.getValue() > quiet && e.getValue() < oldestAt) {
                oldest = e.getKey();
                oldestAt = e.getValue();
            }
        }
        if (oldest == null) {
            return false;
        }
        parkedAt.remove(oldest);
        ThreadingModel m = models.remove(oldest);
        log.info("closing configuration {} (parked for {} s) to build another", m.configuration().name(),
                TimeUnit.NANOSECONDS.toSeconds(now - oldestAt));
        try {
            m.close();
        } catch (RuntimeException e) {
            log.warn("closing {} failed", m, e);
        }
        return true;
    }

    /**
     * The active configuration, as last switched to: the active model's, or its twin's spelling
     * when the last switch named the twin (see the class comment).
     */
    public Configuration active() {
        return activeConfig;
    }

    /** The loop to register a newly accepted upstream connection on: round-robin over the active frontends. */
    public EventLoop nextFrontendLoop() {
        List<EventLoop> f = active.get().frontendLoops();
        return f.get(Math.floorMod(nextFrontend.getAndIncrement(), f.size()));
    }

    /** Configurations built so far (active or parked), in creation order; one model per distinct threads. */
    public synchronized List<ThreadingModel> models() {
        return List.copyOf(models.values());
    }

    public RequestStats stats() {
        return stats;
    }

    public long switches() {
        return switches.get();
    }

    /** The last {@value #SWITCH_LOG_LIMIT} switches, oldest first. */
    public List<SwitchRecord> switchLog() {
        synchronized (switchLog) {
            return List.copyOf(switchLog);
        }
    }

    public long deadlineMillis() {
        return TimeUnit.NANOSECONDS.toMillis(deadlineNanos);
    }

    public ModelContext context() {
        return ctx;
    }

    /** Tells the listener how each request ended; what the request's context reads passes through. */
    private static final class ObservedSink<R> implements ResponseSink<R> {
        private final ResponseSink<R> sink;
        private final EngineListener listener;
        private final ThreadingModel model;
        private final long start;

        ObservedSink(ResponseSink<R> sink, EngineListener listener, ThreadingModel model, long start) {
            this.sink = sink;
            this.listener = listener;
            this.model = model;
            this.start = start;
        }

        @Override
        public RequestInfo info() {
            return sink.info();
        }

        @Override
        public void complete(R response) {
            try {
                listener.finished(model, System.nanoTime() - start, Outcome.OK);
            } finally {
                sink.complete(response);
            }
        }

        @Override
        public void fail(Outcome outcome, String reason) {
            try {
                listener.finished(model, System.nanoTime() - start, outcome);
            } finally {
                sink.fail(outcome, reason);
            }
        }

        @Override
        public void fail(io.doubleface.api.StatusException answer) {
            try {
                listener.finished(model, System.nanoTime() - start, FanoutExchange.outcomeOf(answer));
            } finally {
                sink.fail(answer);
            }
        }
    }

    /** Closes every model (threads, connections) and the shared clients. */
    @Override
    public synchronized void close() {
        for (ThreadingModel m : models.values()) {
            try {
                m.close();
            } catch (RuntimeException e) {
                log.warn("closing {} failed", m, e);
            }
        }
        ctx.close();
    }
}
