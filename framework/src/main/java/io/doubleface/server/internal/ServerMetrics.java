package io.doubleface.server.internal;

import io.doubleface.api.Backend;
import io.doubleface.driver.ResilientDriver;
import io.doubleface.engine.AdmissionLimiter;
import io.doubleface.engine.ErrorLog;
import io.doubleface.engine.FanoutEngine;
import io.doubleface.engine.Outcome;
import io.doubleface.engine.RouteStats;
import io.doubleface.engine.StageStats;
import io.doubleface.internal.Json;
import io.doubleface.loop.LoopGroup;
import io.doubleface.loop.LoopStats;
import io.doubleface.loop.ThreadStats;
import io.doubleface.engine.ThreadingModel;
import io.doubleface.tune.LoadAdapter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The server's counters, as JSON for {@code /admin/stats} and as Prometheus text (via Micrometer)
 * for {@code /metrics}. Reads are racy snapshots of single-writer counters: good for monitoring,
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

    /** The {@code /admin/stats} document. */
    public String statsJson() {
        Json j = new Json().begin();
        j.field("config", engine.active().name());
        j.field("version", VERSION);
        j.field("uptime_ms", System.currentTimeMillis() - startMillis);
        j.field("deadline_ms", engine.deadlineMillis());
        // the first backend's shard list, as before there were several (scripts read these two)
        j.field("driver", engine.context().backends().get(0).describe());
        j.field("shards", engine.context().backends().get(0).shardCount());
        j.key("backends").beginArray();
        for (Backend<?> be : engine.context().backends()) {
            j.begin();
            j.field("name", be.name());
            j.field("driver", be.describe());
            j.field("scheme", scheme(be.describe()));
            j.field("shards", be.shardCount());
            java.util.Map<String, Object> topology = be.driver().topology();
            if (!topology.isEmpty()) {
                j.key("topology").tree(topology);
            }
            if (be.driver() instanceof ResilientDriver<?> d) {
                ResilientDriver.Stats s = d.stats();
                j.key("resilience").begin();
                j.field("policy", d.policy().toString());
                j.field("retries", s.retries());
                j.field("retries_denied", s.retriesDenied());
                j.field("hedges", s.hedges());
                j.field("hedge_wins", s.hedgeWins());
                j.field("hedges_denied", s.hedgesDenied());
                j.field("circuits_opened", s.circuitsOpened());
                j.field("rejected", s.rejected());
                j.field("open_circuits", s.openCircuits());
                j.end();
            }
            j.end();
        }
        j.endArray();
        j.key("routes").beginArray();
        for (RouteStats r : routes) {
            j.begin();
            j.field("route", r.name());
            long answered = r.answered();
            j.field("answered", answered);
            for (Outcome o : Outcome.values()) {
                long n = r.count(o);
                if (n > 0) {
                    j.field(o.label(), n);
                }
            }
            j.field("mean_ms", answered == 0 ? 0.0 : r.totalNanos() / 1e6 / answered);
            j.end();
        }
        j.endArray();
        j.key("requests").begin();
        j.field("admitted", engine.stats().admittedCount());
        long total = 0;
        for (Outcome o : Outcome.values()) {
            long n = engine.stats().count(o);
            total += n;
            j.field(o.label(), n);
        }
        j.field("answered", total);
        j.end();
        AdmissionLimiter adm = engine.admission();
        j.key("admission").begin();
        j.field("mode", adm == null ? "off" : adm.mode());
        if (adm != null) {
            j.field("limit", adm.limit());
            j.field("in_flight", adm.inFlight());
            j.field("refused", adm.refused());
        }
        j.end();
        j.key("errors").begin();
        for (ErrorLog e : engine.stats().errorLogs()) {
            j.field(e.kind(), e.count());
            j.field(e.kind() + "_unlogged", e.unlogged());
        }
        j.end();
        StageStats stages = engine.stages();
        if (stages.every() > 0) {
            j.key("stages").begin();
            j.field("one_in", stages.every());
            stages.snapshot().forEach((config, m) -> {
                j.key(config).begin();
                m.forEach((stage, x) -> j.key(stage.label()).begin().field("count", x.count())
                        .field("mean_us", x.meanMicros()).field("stddev_us", x.stddevMicros()).field("cv2", x.cv2())
                        .field("p50_us", x.p50Micros()).field("p99_us", x.p99Micros())
                        .field("p999_us", x.p999Micros()).field("sum_us", x.sumMicros())
                        // X² in µs² as an integer: three decimals of a double would overflow the rounding
                        .field("sum_sq_us2", Math.round(x.sumSqMicros2())).end());
                j.end();
            });
            j.end();
        }
        j.field("slow_readers_closed", engine.stats().slowReadersClosed());
        j.field("slow_readers_closed_server_bound", engine.stats().serverQueueFullCount());
        j.field("behind_bytes", engine.stats().behindBytes());
        j.field("connections_refused", engine.stats().connectionsRefused());
        j.key("loops").beginArray();
        for (LoopGroup g : loopGroups.get()) {
            for (LoopStats s : g.stats()) {
                j.begin();
                j.field("name", s.name());
                j.field("group", s.group());
                j.field("iterations", s.iterations());
                j.field("wakeups", s.wakeups());
                j.field("events", s.events());
                j.field("events_per_iteration", s.iterations() == 0 ? 0.0 : (double) s.events() / s.iterations());
                j.field("events_per_wakeup", s.wakeups() == 0 ? 0.0 : (double) s.events() / s.wakeups());
                j.field("busy_ms", s.busyNanos() / 1000 / 1000.0);
                j.field("idle_ms", s.idleNanos() / 1000 / 1000.0);
                j.field("tail_batches", s.batches());
                j.field("tail_replies", s.batchedReplies());
                j.field("tail_batch_mean", s.batches() == 0 ? 0.0 : (double) s.batchedReplies() / s.batches());
                j.field("tail_batch_max", s.maxBatch());
                j.key("tail_batch_histogram_log2").beginArray();
                long[] h = s.batchHistogram();
                int last = h.length - 1;
                while (last > 0 && h[last] == 0) {
                    last--;
                }
                for (int i = 0; i <= last; i++) {
                    j.value(h[i]);
                }
                j.endArray();
                j.end();
            }
        }
        j.endArray();
        j.key("threads").beginArray();
        for (ThreadStats.Group g : ThreadStats.snapshot().values()) {
            j.begin();
            j.field("group", g.name());
            j.field("threads", g.threads());
            j.field("voluntary_switches", g.voluntarySwitches());
            j.field("involuntary_switches", g.involuntarySwitches());
            j.field("cpu_ms", g.cpuMillis());
            j.end();
        }
        j.endArray();
        j.key("configurations").beginArray();
        List<String> names = new ArrayList<>();
        for (ThreadingModel m : engine.models()) {
            names.add(m.configuration().name());
        }
        names.forEach(j::value);
        j.endArray();
        j.field("switches", engine.switches());
        j.key("switch_log").beginArray();
        for (FanoutEngine.SwitchRecord r : engine.switchLog()) {
            j.begin().field("at", r.at().toString()).field("from", r.from()).field("to", r.to()).end();
        }
        j.endArray();
        if (adapter != null) {
            adapterJson(j);
        }
        j.end();
        return j.toString();
    }

    private void adapterJson(Json j) {
        j.key("adapter").begin();
        j.field("policy", adapter.settings().policy().label());
        if (adapter.settings().policyFactory() != null) {
            j.field("decision_policy", adapter.policy().describe()); // the user's own: absent with the built-in ones
        }
        j.field("detector", adapter.detector().describe());
        j.field("profile", adapter.settings().profile() == null ? "none"
                : adapter.settings().profile().metadata().service() + " " + adapter.settings().profile().metadata().date());
        j.field("load", adapter.load());
        j.field("fast_load", adapter.fastLoad());
        j.field("count_window_ms", adapter.settings().countWindow().toMillis());
        j.field("saturation", adapter.settings().saturation());
        j.field("saturation_window_ms", adapter.settings().saturationWindow().toMillis());
        double u = adapter.utilization();
        if (!Double.isNaN(u)) {
            j.field("utilization", u);
        }
        double p = adapter.predictedActiveP99();
        if (!Double.isNaN(p)) {
            j.field("predicted_p99_us", p);
        }
        j.key("choices").beginArray();
        adapter.choices().forEach(j::value);
        j.endArray();
        j.field("switches", adapter.switches());
        j.key("switches_by_reason").begin().fields(adapter.switchesByReason()).end();
        j.key("live").beginArray();
        for (LoadAdapter.LiveCell c : adapter.liveTable()) {
            j.begin().field("config", c.config()).field("load", Math.round(c.load())).field("samples", c.samples())
                    .field("errors", c.errors());
            if (!Double.isNaN(c.p99Micros())) {
                j.field("p99_us", c.p99Micros());
            }
            if (!Double.isNaN(c.profileP99Micros())) {
                j.field("profile_p99_us", c.profileP99Micros());
            }
            j.end();
        }
        j.endArray();
        j.key("switch_log").beginArray();
        for (LoadAdapter.SwitchEvent e : adapter.switchLog()) {
            j.begin().field("at", e.at().toString()).field("load", e.load()).field("from", e.from()).field("to", e.to());
            if (!Double.isNaN(e.predictedP99Micros())) {
                j.field("predicted_p99_us", e.predictedP99Micros());
            }
            j.field("reason", e.reason()).end();
        }
        j.endArray();
        j.end();
    }

    private void resilience(String backend, ResilientDriver<?> d) {
        FunctionCounter.builder("doubleface.backend.retries", d, x -> x.stats().retries()).tag("backend", backend)
                .tag("outcome", "sent").description("retries sent by the backend's resilience policy").register(registry);
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
