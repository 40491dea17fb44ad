package io.doubleface.server.internal;

import io.doubleface.api.Backend;
import io.doubleface.driver.spi.ResilientDriver;
import io.doubleface.internal.engine.AdmissionLimiter;
import io.doubleface.internal.engine.ErrorLog;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.RouteStats;
import io.doubleface.internal.engine.StageStats;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.internal.loop.LoopStats;
import io.doubleface.internal.loop.ThreadStats;
import io.doubleface.internal.engine.ThreadingModel;
import io.doubleface.model.Configuration;
import io.doubleface.tune.LoadAdapter;
import io.doubleface.tune.TuneSettings;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The server's counters, as a typed snapshot for {@code /admin/stats} ({@link #snapshot()}) and as
 * Prometheus text (via Micrometer) for {@code /metrics}. Reads are racy snapshots of single-writer counters: good for monitoring,
 * and exact once the load has stopped.
 *
 * <p>Threading: called from the admin loop only (meters are registered lazily under a lock).
 */
public final class ServerMetrics {

    private final FanoutEngine engine;
    private final Supplier<List<LoopGroup>> loopGroups;
    /** What {@code /metrics} serves. */
    private final PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** Where meters are registered: {@link #prometheus}, and the application's registry if given. */
    private final MeterRegistry registry;
    private final Set<String> registeredLoops = new HashSet<>();
    private final long startMillis = System.currentTimeMillis();
    private final LoadAdapter adapter;
    private final List<RouteStats> routes;

    public ServerMetrics(FanoutEngine engine, Supplier<List<LoopGroup>> loopGroups) {
        this(engine, loopGroups, null, List.of());
    }

    /**
     * @param adapter the load adapter, or {@code null}
     * @param routes the server's routes (HTTP routes, then gRPC methods)
     */
    public ServerMetrics(FanoutEngine engine, Supplier<List<LoopGroup>> loopGroups, LoadAdapter adapter,
            List<RouteStats> routes) {
        this(engine, loopGroups, adapter, routes, List.of());
    }

    /**
     * @param adapter the load adapter, or {@code null}
     * @param routes the server's routes (HTTP routes, then gRPC methods)
     * @param backends the server's backends: those on a {@link ResilientDriver} get its counters
     */
    public ServerMetrics(FanoutEngine engine, Supplier<List<LoopGroup>> loopGroups, LoadAdapter adapter,
            List<RouteStats> routes, List<Backend<?>> backends) {
        this(engine, loopGroups, adapter, routes, backends, null);
    }

    /**
     * @param adapter the load adapter, or {@code null}
     * @param routes the server's routes (HTTP routes, then gRPC methods)
     * @param backends the server's backends: those on a {@link ResilientDriver} get its counters
     * @param application the application's registry every meter is also registered in, or {@code null}
     */
    public ServerMetrics(FanoutEngine engine, Supplier<List<LoopGroup>> loopGroups, LoadAdapter adapter,
            List<RouteStats> routes, List<Backend<?>> backends, MeterRegistry application) {
        this.registry = application == null ? prometheus : new CompositeMeterRegistry().add(prometheus).add(application);
        this.engine = engine;
        this.loopGroups = loopGroups;
        this.adapter = adapter;
        this.routes = List.copyOf(routes);
        for (RouteStats r : this.routes) {
            for (Outcome o : Outcome.values()) {
                FunctionCounter.builder("doubleface.route.requests", r, x -> x.count(o))
                        .tag("route", r.name()).tag("outcome", o.label()).tag("status", statusTag(o))
                        .description("requests of one route answered, by outcome").register(registry);
            }
            FunctionTimer.builder("doubleface.route.latency", r, RouteStats::answered, RouteStats::totalNanos,
                            TimeUnit.NANOSECONDS)
                    .tag("route", r.name())
                    .description("time from dispatch (request decoded) to answer, of one route's answered requests")
                    .register(registry);
        }
        for (Backend<?> b : backends) {
            if (b.driver() instanceof ResilientDriver<?> d) {
                resilience(b.name(), d);
            }
            for (java.util.Map.Entry<String, Object> e : b.driver().topology().entrySet()) {
                if (e.getValue() instanceof Number) {
                    String entry = e.getKey();
                    Gauge.builder("doubleface.backend.topology", b.driver(), d -> d.topology().get(entry) instanceof Number n
                                    ? n.doubleValue() : Double.NaN)
                            .tag("backend", b.name()).tag("entry", entry)
                            .description("a number of the backend's current topology (e.g. a Redis Cluster's "
                                    + "slot_map_version, refreshes, moved_redirects)").register(registry);
                }
            }
        }
        if (adapter != null) {
            for (String reason : adapter.switchesByReason().keySet()) {
                FunctionCounter.builder("doubleface.tune.switches", adapter,
                                a -> a.switchesByReason().getOrDefault(reason, 0L))
                        .tag("reason", reason)
                        .description("configuration switches made by the load adapter, by reason").register(registry);
            }
            Gauge.builder("doubleface.tune.load", adapter, LoadAdapter::load).baseUnit("requests_per_second")
                    .description("the load adapter's latest load estimate").register(registry);
            Gauge.builder("doubleface.tune.predicted.p99", adapter, a -> {
                double p = a.predictedActiveP99();
                return Double.isNaN(p) ? Double.NaN : p / 1e6;
            }).baseUnit("seconds").description("predicted p99 of the active configuration at the estimated load")
                    .register(registry);
            Gauge.builder("doubleface.tune.utilization", adapter, LoadAdapter::utilization)
                    .description("highest busy share of the I/O loops over the saturation window (the saturation signal)")
                    .register(registry);
        }
        for (Outcome o : Outcome.values()) {
            FunctionCounter.builder("doubleface.requests", engine.stats(), s -> s.count(o))
                    .tag("outcome", o.label()).tag("status", statusTag(o))
                    .description("upstream requests answered, by outcome").register(registry);
        }
        for (ErrorLog e : engine.stats().errorLogs()) {
            FunctionCounter.builder("doubleface.errors", e, ErrorLog::count).tag("kind", e.kind())
                    .description("per-request errors of the service's own code (decode, encode, execute): "
                            + "answered 500 / INTERNAL").register(registry);
            FunctionCounter.builder("doubleface.errors.unlogged", e, ErrorLog::unlogged)
                    .tag("kind", e.kind())
                    .description("of those, not logged: at most one log line per kind per 10 s").register(registry);
        }
        AdmissionLimiter adm = engine.admission();
        if (adm != null) {
            Gauge.builder("doubleface.admission.limit", adm, AdmissionLimiter::limit)
                    .description("admission control: the current limit of requests in flight").register(registry);
            FunctionCounter.builder("doubleface.admission.refused", adm, AdmissionLimiter::refused)
                    .description("requests refused by admission control (503, gRPC RESOURCE_EXHAUSTED)")
                    .register(registry);
        }
        FunctionCounter.builder("doubleface.connections.slow.readers", engine.stats(), s -> s.slowReadersClosed())
                .description("upstream connections closed because their client left responses unread "
                        + "(HttpLimits.maxQueuedBytes, slowReaderTimeout)").register(registry);
        FunctionCounter.builder("doubleface.connections.slow.readers.server.bound", engine.stats(),
                        s -> s.serverQueueFullCount())
                .description("of those, closed because the server-wide bound on bytes held for clients "
                        + "that are behind was reached (FanoutServer.Builder.maxQueuedBytesTotal)").register(registry);
        Gauge.builder("doubleface.connections.behind.bytes", engine.stats(), s -> s.behindBytes())
                .description("response bytes queued on upstream connections whose client is behind "
                        + "(above the high water mark)").baseUnit("bytes").register(registry);
        FunctionCounter.builder("doubleface.connections.refused", engine.stats(), s -> s.connectionsRefused())
                .description("upstream connections closed on accept because the server had its most open "
                        + "(FanoutServer.Builder.maxConnections)").register(registry);
        FunctionCounter.builder("doubleface.config.switches", engine, FanoutEngine::switches)
                .description("run-time configuration switches").register(registry);
        Gauge.builder("doubleface.requests.inflight", engine, FanoutEngine::inFlight)
                .description("requests admitted and not yet answered").register(registry);
    }

    private static long unadmitted(FanoutEngine e) {
        // answered without reaching the engine: refused by the HTTP layer
        return e.stats().count(Outcome.NOT_FOUND) + e.stats().count(Outcome.METHOD_NOT_ALLOWED)
                + e.stats().count(Outcome.URI_TOO_LONG) + e.stats().count(Outcome.HEADERS_TOO_LARGE)
                + e.stats().count(Outcome.BODY_TOO_LARGE) + e.stats().count(Outcome.BAD_REQUEST)
                + e.stats().count(Outcome.REQUEST_TIMEOUT) + e.stats().count(Outcome.VERSION_NOT_SUPPORTED);
    }

    /** Registers the meters of loops not registered yet (those of configurations built since). */
    public synchronized void registerLoops() {
        for (LoopGroup g : loopGroups.get()) {
            for (LoopStats s : g.stats()) {
                if (registeredLoops.add(s.name())) {
                    FunctionCounter.builder("doubleface.loop.iterations", s, LoopStats::iterations)
                            .tag("loop", s.name()).tag("group", s.group())
                            .description("I/O handler iterations (epoll_wait calls)").register(registry);
                    FunctionCounter.builder("doubleface.loop.wakeups", s, LoopStats::wakeups)
                            .tag("loop", s.name()).tag("group", s.group())
                            .description("iterations allowed to block").register(registry);
                    FunctionCounter.builder("doubleface.loop.events", s, LoopStats::events)
                            .tag("loop", s.name()).tag("group", s.group())
                            .description("I/O events handled").register(registry);
                    FunctionCounter.builder("doubleface.loop.busy.seconds", s, x -> x.busyNanos() / 1e9)
                            .tag("loop", s.name()).tag("group", s.group())
                            .description("time processing I/O, tasks and timers").register(registry);
                    FunctionCounter.builder("doubleface.loop.idle.seconds", s, x -> x.idleNanos() / 1e9)
                            .tag("loop", s.name()).tag("group", s.group())
                            .description("time waiting for I/O (blocked or busy-polling)").register(registry);
                    FunctionCounter.builder("doubleface.loop.tail.batches", s, LoopStats::batches)
                            .tag("loop", s.name()).tag("group", s.group())
                            .description("DoubleFace tail batches").register(registry);
                    FunctionCounter.builder("doubleface.loop.tail.replies", s, LoopStats::batchedReplies)
                            .tag("loop", s.name()).tag("group", s.group())
                            .description("replies processed by DoubleFace tail batches").register(registry);
                }
            }
        }
    }

    // ---- per-stage service times (docs/tracing.md), registered once tracing has recorded them ----

    /**
     * How long one snapshot of the stage histograms serves the meters: {@value} ms, so a scrape takes
     * one snapshot rather than one per meter (a {@code /metrics} scrape takes a fresh one first).
     */
    static final long STAGE_SNAPSHOT_MILLIS = 1000;
    private static final double[] STAGE_QUANTILES = {0.5, 0.99, 0.999};
    private final Set<String> registeredStages = new HashSet<>();
    private Map<String, Map<StageStats.Stage, StageStats.Summary>> stageSnapshot; // under this
    private long stageSnapshotAt; // under this

    private synchronized Map<String, Map<StageStats.Stage, StageStats.Summary>> stageSnapshot(boolean fresh) {
        long now = System.nanoTime();
        if (fresh || stageSnapshot == null
                || now - stageSnapshotAt > TimeUnit.MILLISECONDS.toNanos(STAGE_SNAPSHOT_MILLIS)) {
            stageSnapshot = engine.stages().snapshot();
            stageSnapshotAt = now;
        }
        return stageSnapshot;
    }

    private StageStats.Summary stage(String config, StageStats.Stage stage) {
        StageStats.Summary s = stageSnapshot(false).getOrDefault(config, Map.of()).get(stage);
        return s != null ? s : new StageStats.Summary(0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    /**
     * Registers the meters of each (configuration, stage) that traced requests have reached and that
     * has none yet: {@code doubleface.stage} (count and sum; Prometheus {@code doubleface_stage_seconds_count},
     * {@code _sum}), {@code doubleface.stage.quantile} (p50, p99, p99.9), {@code doubleface.stage.stddev}
     * and {@code doubleface.stage.cv2}. Nothing while tracing has recorded nothing. Takes a fresh
     * snapshot, which the meters then read.
     */
    public synchronized void registerStages() {
        stageSnapshot(true).forEach((config, stages) -> stages.keySet().forEach(st -> {
            if (!registeredStages.add(config + "/" + st.label())) {
                return;
            }
            Tags tags = Tags.of("configuration", config, "stage", st.label());
            FunctionTimer.builder("doubleface.stage", this, m -> m.stage(config, st).count(),
                            m -> m.stage(config, st).meanMicros() * m.stage(config, st).count(), TimeUnit.MICROSECONDS)
                    .tags(tags).description("per-stage service time of traced requests since start (--trace-stages)")
                    .register(registry);
            for (double q : STAGE_QUANTILES) {
                Gauge.builder("doubleface.stage.quantile", this, m -> quantileMicros(m.stage(config, st), q) / 1e6)
                        .tags(tags).tag("quantile", Double.toString(q)).baseUnit("seconds")
                        .description("per-stage service time of traced requests: percentile since start (HdrHistogram)")
                        .register(registry);
            }
            Gauge.builder("doubleface.stage.stddev", this, m -> m.stage(config, st).stddevMicros() / 1e6)
                    .tags(tags).baseUnit("seconds")
                    .description("per-stage service time of traced requests: standard deviation since start")
                    .register(registry);
            Gauge.builder("doubleface.stage.cv2", this, m -> m.stage(config, st).cv2())
                    .tags(tags)
                    .description("per-stage service time of traced requests: squared coefficient of variation "
                            + "(variance / mean squared), the variability paper's measure")
                    .register(registry);
        }));
    }

    private static long quantileMicros(StageStats.Summary s, double q) {
        return q == 0.5 ? s.p50Micros() : q == 0.99 ? s.p99Micros() : s.p999Micros();
    }

    // ---- end of per-stage meters ----

    /** Prometheus text exposition. */
    public String prometheus() {
        registerLoops();
        registerStages();
        StringBuilder b = new StringBuilder(prometheus.scrape());
        b.append("# HELP doubleface_config_active the active threading configuration\n");
        b.append("# TYPE doubleface_config_active gauge\n");
        b.append("doubleface_config_active{config=\"").append(engine.active().name()).append("\"} 1\n");
        Map<String, ThreadStats.Group> threads = ThreadStats.snapshot();
        b.append("# HELP doubleface_thread_context_switches_total context switches per thread group\n");
        b.append("# TYPE doubleface_thread_context_switches_total counter\n");
        threads.forEach((name, g) -> {
            b.append("doubleface_thread_context_switches_total{group=\"").append(name)
                    .append("\",kind=\"voluntary\"} ").append(g.voluntarySwitches()).append('\n');
            b.append("doubleface_thread_context_switches_total{group=\"").append(name)
                    .append("\",kind=\"involuntary\"} ").append(g.involuntarySwitches()).append('\n');
        });
        b.append("# HELP doubleface_thread_cpu_seconds_total CPU time per thread group\n");
        b.append("# TYPE doubleface_thread_cpu_seconds_total counter\n");
        threads.forEach((name, g) -> b.append("doubleface_thread_cpu_seconds_total{group=\"").append(name)
                .append("\"} ").append(g.cpuMillis() / 1000.0).append('\n'));
        return b.toString();
    }

    /**
     * doubleface's version, from the framework jar's manifest ({@code Implementation-Version}, also in
     * the shaded CLI jar); {@code null} when the classes run from a directory (tests, an IDE).
     */
    static final String VERSION = ServerMetrics.class.getPackage().getImplementationVersion();

    /** The {@code status} tag of an outcome: its HTTP status, or {@code service} where the service chose it. */
    static String statusTag(Outcome o) {
        return o == Outcome.SERVICE_STATUS ? "service" : Integer.toString(o.status());
    }

    /** The URI scheme a driver's description starts with ({@code redis} of {@code redis://h:p}), or {@code null}. */
    static String scheme(String description) {
        int i = description == null ? -1 : description.indexOf("://");
        return i > 0 && description.substring(0, i).matches("[A-Za-z][A-Za-z0-9+.-]*") ? description.substring(0, i)
                : null;
    }

    /**
     * {@return the counters now, typed: what {@code /admin/stats} serves ({@link ServerStats#toJson()})}
     * Reads {@code /proc} for the thread groups: a few hundred microseconds.
     */
    public ServerStats snapshot() {
        String config = engine.active().name();
        long uptimeMs = System.currentTimeMillis() - startMillis;
        List<ServerStats.Backend> backends = new ArrayList<>();
        for (Backend<?> be : engine.context().backends()) {
            ServerStats.Resilience resilience = be.driver() instanceof ResilientDriver<?> d
                    ? new ServerStats.Resilience(d.resilience().toString(), d.stats()) : null;
            backends.add(new ServerStats.Backend(be.name(), be.describe(), scheme(be.describe()), be.shardCount(),
                    be.driver().topology(), resilience));
        }
        List<ServerStats.Route> routeStats = new ArrayList<>();
        for (RouteStats r : routes) {
            long answered = r.answered();
            Map<Outcome, Long> counts = new EnumMap<>(Outcome.class);
            for (Outcome o : Outcome.values()) {
                counts.put(o, r.count(o));
            }
            routeStats.add(new ServerStats.Route(r.name(), answered, counts,
                    answered == 0 ? 0.0 : r.totalNanos() / 1e6 / answered));
        }
        long admitted = engine.stats().admittedCount();
        Map<Outcome, Long> outcomes = new EnumMap<>(Outcome.class);
        for (Outcome o : Outcome.values()) {
            outcomes.put(o, engine.stats().count(o));
        }
        AdmissionLimiter adm = engine.admission();
        ServerStats.Admission admission = adm == null ? ServerStats.Admission.OFF
                : new ServerStats.Admission(adm.mode(), adm.limit(), adm.inFlight(), adm.refused());
        List<ServerStats.ErrorCount> errors = new ArrayList<>();
        for (ErrorLog e : engine.stats().errorLogs()) {
            errors.add(new ServerStats.ErrorCount(e.kind(), e.count(), e.unlogged()));
        }
        StageStats stages = engine.stages();
        int oneIn = stages.every();
        ServerStats.Stages traced = oneIn > 0 ? new ServerStats.Stages(oneIn, stages.snapshot()) : null;
        ServerStats.Connections connections = new ServerStats.Connections(engine.stats().slowReadersClosed(),
                engine.stats().serverQueueFullCount(), engine.stats().behindBytes(),
                engine.stats().connectionsRefused());
        List<ServerStats.Loop> loops = new ArrayList<>();
        for (LoopGroup g : loopGroups.get()) {
            for (LoopStats s : g.stats()) {
                loops.add(loop(s));
            }
        }
        List<String> configurations = new ArrayList<>();
        for (ThreadingModel m : engine.models()) {
            configurations.add(m.configuration().name());
        }
        return new ServerStats(config, VERSION, uptimeMs, engine.deadlineMillis(), backends, routeStats,
                new ServerStats.Requests(admitted, outcomes), admission, errors, traced, connections, loops, List.copyOf(ThreadStats.snapshot().values()), configurations,
                engine.switches(), engine.switchLog(), adapter == null ? null : adapterStats());
    }

    private static ServerStats.Loop loop(LoopStats s) {
        long[] h = s.batchHistogram();
        int last = h.length - 1;
        while (last > 0 && h[last] == 0) {
            last--;
        }
        List<Long> histogram = new ArrayList<>(last + 1);
        for (int i = 0; i <= last; i++) {
            histogram.add(h[i]);
        }
        return new ServerStats.Loop(s.name(), s.group(), s.iterations(), s.wakeups(), s.events(), s.busyNanos(),
                s.idleNanos(), s.batches(), s.batchedReplies(), s.maxBatch(), histogram);
    }

    private ServerStats.Adapter adapterStats() {
        TuneSettings t = adapter.settings();
        return new ServerStats.Adapter(t.strategy().label(),
                t.deciderFactory() != null ? adapter.decider().describe() : null, // the user's own only
                adapter.detector().describe(),
                t.profile() == null ? "none" : t.profile().metadata().service() + " " + t.profile().metadata().date(),
                adapter.load(), adapter.fastLoad(), t.countWindow().toMillis(), t.saturation(),
                t.saturationWindow().toMillis(), adapter.utilization(), adapter.predictedActiveP99(),
                adapter.choices().stream().map(Configuration::name).toList(), adapter.switches(), adapter.switchesByReason(), adapter.liveTable(),
                adapter.switchLog());
    }

    private void resilience(String backend, ResilientDriver<?> d) {
        FunctionCounter.builder("doubleface.backend.retries", d, x -> x.stats().retries()).tag("backend", backend)
                .tag("outcome", "sent").description("retries sent by the backend's resilience settings").register(registry);
        FunctionCounter.builder("doubleface.backend.retries", d, x -> x.stats().retriesDenied()).tag("backend", backend)
                .tag("outcome", "denied").description("retries not sent: the retry budget was empty").register(registry);
        FunctionCounter.builder("doubleface.backend.hedges", d, x -> x.stats().hedges()).tag("backend", backend)
                .tag("outcome", "sent").description("hedged copies sent").register(registry);
        FunctionCounter.builder("doubleface.backend.hedges", d, x -> x.stats().hedgeWins()).tag("backend", backend)
                .tag("outcome", "won").description("calls answered by their hedged copy first").register(registry);
        FunctionCounter.builder("doubleface.backend.hedges", d, x -> x.stats().hedgesDenied()).tag("backend", backend)
                .tag("outcome", "denied").description("hedges not sent: the hedge budget was empty").register(registry);
        FunctionCounter.builder("doubleface.backend.circuit.opened", d, x -> x.stats().circuitsOpened())
                .tag("backend", backend).description("times a shard's circuit opened").register(registry);
        FunctionCounter.builder("doubleface.backend.circuit.rejected", d, x -> x.stats().rejected())
                .tag("backend", backend).description("calls failed at once: their shard's circuit was open")
                .register(registry);
        Gauge.builder("doubleface.backend.circuit.open", d, x -> x.stats().openCircuits()).tag("backend", backend)
                .description("shards whose circuit is open or half-open").register(registry);
    }
}
