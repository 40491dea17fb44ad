package io.doubleface.tune;

import io.doubleface.api.Internal;
import io.doubleface.internal.engine.EngineListener;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.loop.Threads;
import io.doubleface.internal.engine.ThreadingModel;
import io.doubleface.model.Configuration;
import io.doubleface.tune.Decider.Decision;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load adapter: estimates the offered load and switches the engine to the configuration its
 * decider chooses for that load — by default μTune's run-time adaptation (the lowest
 * predicted p99), plus online refinement with live latencies and a no-profile mode that explores
 * safely.
 *
 * <pre>
 *   I/O loops ─ admitted(t) ───────────▶ LoadMonitor: detector + admission count
 *   any thread ─ finished(model, latency) ─▶ LatencyTable: live p99 [config][load bucket]
 *   tune-0, every interval:
 *      monitor.sample(now)             load, fastLoad, utilization, saturated
 *      policy.decide(context)          Decider: profile-driven, exploring, or the user's
 *        └ reads the monitor and the table (predicted p99, feasible, best feasible)
 *      a Decision naming another choice ─▶ engine.switchTo(it), switch log, counts by reason
 * </pre>
 *
 * <p>Three parts, each replaceable on its own: the {@link LoadDetector} inside the monitor turns
 * arrivals into a rate ({@link TuneSettings#withDetector(java.util.function.Supplier)}); the
 * monitor turns rates, admission counts and the loops' busy time into the readings; the
 * {@link Decider} turns readings and tables into a configuration
 * ({@link TuneSettings#withDecider}). This class owns what they share: the thread, the
 * switch itself with its time (the one fact every policy's dwell rule needs), the switch log and
 * the statistics. Hysteresis and dwell bookkeeping live in the policies, which apply them
 * differently. The rules and the runs that showed why: docs/tuning.md.
 *
 * <p>Threading: {@link #admitted} and {@link #finished} from any thread, lock-free;
 * {@link #evaluate} (and so the policy) from one thread at a time (the adapter's own
 * {@code tune-0} thread, created once by {@link #start}, or a test with a fake clock); the
 * accessors are thread-safe snapshots.
 */
@Internal
public final class LoadAdapter implements EngineListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LoadAdapter.class);

    /** Switches kept in {@link #switchLog()}: {@value}. */
    public static final int LOG_LIMIT = 256;

    /**
     * Cumulative busy and idle time of the I/O loops that admit requests — in production the
     * engine's upstream loops ({@link io.doubleface.internal.loop.LoopStats#busyNanos()}); tests give fakes.
     */
    public interface BusyMeter {
        /** The number of loops; fixed. */
        int loops();

        /** Cumulative nanoseconds loop {@code i} was busy (processing I/O, tasks, timers). */
        long busyNanos(int i);

        /** Cumulative nanoseconds loop {@code i} waited for I/O. */
        long idleNanos(int i);
    }

    /** What the adapter needs of an engine (a fake in tests). */
    public interface Switcher {
        /** The active configuration. */
        Configuration active();

        /** Makes {@code configuration} active. */
        void switchTo(Configuration configuration);
    }

    /**
     * One switch the adapter made.
     *
     * @param at wall-clock time
     * @param load the estimated load (requests/s) that triggered it
     * @param from previous configuration's name
     * @param to new configuration's name
     * @param predictedP99Micros the new configuration's predicted p99 at that load ({@code NaN} if unknown)
     * @param reason {@code better}, {@code far-better}, {@code infeasible}, {@code saturated}, {@code probe},
     *     {@code probe-abort}, {@code unknown-load}, {@code noise}, {@code rising}, or a reason of your own {@link Decider}
     */
    public record SwitchEvent(Instant at, double load, String from, String to, double predictedP99Micros, String reason) {}

    /**
     * What the adapter has measured live for one configuration in one load bucket.
     *
     * @param config the configuration's name
     * @param load the lowest load of the bucket (requests/s; buckets are 1.25× wide)
     * @param samples requests recorded (after fading)
     * @param errors failed requests among them
     * @param p99Micros live p99 (µs, upper bound of its histogram bin); {@code NaN} below the minimum samples
     * @param profileP99Micros the profile's p99 at {@code load} ({@code NaN} without a profile)
     */
    public record LiveCell(String config, double load, long samples, long errors, double p99Micros,
            double profileP99Micros) {}

    /** How often the adapter thread publishes {@link #liveTable()}: {@value} ms. */
    static final long LIVE_SNAPSHOT_MS = 1000;

    /** The built-in policies' reasons, in the order of {@link #switchesByReason()}. */
    enum Reason {
        BETTER("better"), FAR_BETTER("far-better"), INFEASIBLE("infeasible"), SATURATED("saturated"), PROBE("probe"),
        PROBE_ABORT("probe-abort"), UNKNOWN_LOAD("unknown-load"), NOISE("noise"), RISING("rising");

        final String label;

        Reason(String label) {
            this.label = label;
        }
    }

    private final Switcher switcher;
    private final TuneSettings settings;
    private final List<Configuration> choices;
    private final LongSupplier clock;
    private final LoadMonitor monitor;
    private final LatencyTable table;
    private final Decider policy;
    private final DeciderContext context;

    private volatile List<LiveCell> liveTable = List.of();
    private long liveSnapshotAt = Long.MIN_VALUE / 2;
    private volatile double predictedActive = Double.NaN;
    private volatile long switches;
    private final ArrayDeque<SwitchEvent> switchLog = new ArrayDeque<>();
    private final Map<String, Long> switchesByReason = new LinkedHashMap<>();

    /** The time of the latest evaluation, for {@link #feasible}. */
    private volatile long evaluatedAt;

    private volatile boolean closed;
    private Thread thread;
    /** Index into {@link #table} of each prepared model, so the completion path does no string work. */
    private volatile Map<ThreadingModel, Integer> modelIndex = Map.of();

    /**
     * An adapter that is not yet running ({@link #start} / {@link #attach} run it). Creates its
     * detector ({@link TuneSettings#newDetector()}) and policy ({@link TuneSettings#newDecider()}).
     *
     * @param clock {@link System#nanoTime} or a test's fake clock
     * @throws IllegalArgumentException if the profile-driven policy is asked for without a profile
     */
    public LoadAdapter(Switcher switcher, TuneSettings settings, LongSupplier clock) {
        this.switcher = switcher;
        this.settings = settings;
        this.choices = settings.choices();
        this.clock = clock;
        this.monitor = new LoadMonitor(settings.newDetector(), settings);
        this.table = new LatencyTable(settings);
        this.policy = settings.newDecider();
        this.context = new DeciderContext(switcher, settings, monitor, table);
        if (policy instanceof ProfileDecider && settings.profile() == null) {
            throw new IllegalArgumentException("decider: profile-driven without a profile (expected: a profile, or Decider.exploring())");
        }
        for (Reason r : Reason.values()) {
            switchesByReason.put(r.label, 0L);
        }
        for (String r : policy.reasons()) {
            switchesByReason.putIfAbsent(r, 0L);
        }
    }

    /**
     * Gives the adapter the busy/idle time of the loops that admit requests: its saturation
     * signal (see {@link #utilization()}). Call before {@link #start}; without one, or with
     * {@link TuneSettings#saturation()} 0, the adapter decides on the load estimates alone.
     */
    public synchronized LoadAdapter busyMeter(BusyMeter m) {
        monitor.busyMeter(m);
        return this;
    }

    /**
     * Attaches an adapter to {@code engine}: builds every configuration it may choose now (so no
     * switch creates a thread), switches to the initial one, starts listening to the engine and
     * starts the {@code tune-0} thread.
     */
    public static LoadAdapter attach(FanoutEngine engine, TuneSettings settings) {
        List<Configuration> choices = settings.choices();
        engine.prepare(choices);
        LoadAdapter a = new LoadAdapter(new Switcher() {
            @Override
            public Configuration active() {
                return engine.active();
            }

            @Override
            public void switchTo(Configuration configuration) {
                engine.switchTo(configuration);
            }
        }, settings, System::nanoTime);
        engine.switchTo(settings.initial());
        // by the engine's model of each choice: a choice whose twin (the same threads spelt another
        // way) was built first shares that model
        Map<ThreadingModel, Integer> index = new IdentityHashMap<>();
        for (Configuration c : choices) {
            ThreadingModel m = engine.model(c);
            if (m != null) {
                index.putIfAbsent(m, a.table.index(c));
            }
        }
        a.modelIndex = index;
        List<io.doubleface.internal.loop.LoopStats> loops = engine.context().io().stats();
        a.busyMeter(new BusyMeter() {
            @Override
            public int loops() {
                return loops.size();
            }

            @Override
            public long busyNanos(int i) {
                return loops.get(i).busyNanos();
            }

            @Override
            public long idleNanos(int i) {
                return loops.get(i).idleNanos();
            }
        });
        engine.listener(a);
        a.start();
        return a;
    }

    /** Starts the adapter thread, which evaluates every {@link TuneSettings#interval()}. */
    public synchronized void start() {
        if (thread != null) {
            return;
        }
        long interval = settings.interval().toNanos();
        thread = Threads.platform("tune").newThread(() -> {
            while (!closed) {
                try {
                    evaluate(clock.getAsLong());
                } catch (RuntimeException e) {
                    log.error("load adapter: evaluation failed", e);
                }
                LockSupport.parkNanos(interval);
            }
        });
        thread.start();
    }

    // ---- engine hooks (request path) -------------------------------------------------------------

    @Override
    public void admitted(long nanoTime) {
        monitor.admitted(nanoTime);
    }

    @Override
    public void finished(ThreadingModel model, long latencyNanos, Outcome outcome) {
        Integer i = modelIndex.get(model); // null: a configuration the adapter does not choose (a manual switch)
        if (i != null) {
            table.record(i, monitor.bucket(), latencyNanos, outcome == Outcome.OK);
        }
    }

    /** Records one answered request of {@code config} at the current load (tests; the engine hook in production). */
    public void finished(Configuration config, long latencyNanos, boolean ok) {
        table.record(table.index(config), monitor.bucket(), latencyNanos, ok);
    }

    // ---- decisions --------------------------------------------------------------------------------

    /**
     * The predicted p99 (µs) of {@code config} at {@code load}: without a profile the live p99 of
     * its load bucket; with one, the profile's, raised when the live p99 exceeds it by more than
     * the drift limit ({@value LatencyTable#DRIFT_LIMIT}×) — live numbers only demote; NaN if
     * nothing is known.
     */
    public double predictedP99(Configuration config, double load) {
        return table.predictedP99(config, load);
    }

    /** Whether {@code config} may run at {@code load}: within its profiled capacity with the margin, and not failing live. */
    public boolean feasible(Configuration config, double load) {
        return table.feasible(config, load, evaluatedAt);
    }

    /**
     * One decision at time {@code now}: take the monitor's readings, ask the policy, maybe switch.
     *
     * @return the configuration active afterwards
     * @throws IllegalStateException if the policy chose a configuration outside {@link #choices()}
     */
    public Configuration evaluate(long now) {
        evaluatedAt = now;
        context.now = now;
        monitor.sample(now);
        double l = monitor.load();
        if (now - liveSnapshotAt >= LIVE_SNAPSHOT_MS * 1_000_000) {
            liveSnapshotAt = now;
            liveTable = table.snapshot();
        }
        Configuration current = switcher.active();
        if (!(l > 0)) {
            return current; // no estimate yet (or an empty window): no information to act on
        }
        Decision d = policy.decide(context);
        Configuration next = current;
        if (d != null && !d.configuration().equals(current)) {
            if (!choices.contains(d.configuration())) {
                throw new IllegalStateException("decider " + policy.describe() + " chose '"
                        + d.configuration() + "' (expected: one of " + choices + ")");
            }
            next = switchTo(current, d, l, now);
        }
        predictedActive = table.predictedP99(switcher.active(), l);
        return next;
    }

    private Configuration switchTo(Configuration from, Decision d, double l, long now) {
        Configuration to = d.configuration();
        switcher.switchTo(to);
        context.lastSwitch = now;
        double predicted = table.predictedP99(to, l);
        SwitchEvent e = new SwitchEvent(Instant.now(), l, from.name(), to.name(), predicted, d.reason());
        synchronized (switchLog) {
            if (switchLog.size() == LOG_LIMIT) {
                switchLog.removeFirst();
            }
            switchLog.addLast(e);
            switchesByReason.merge(d.reason(), 1L, Long::sum);
            switches++;
        }
        log.info("adapter: {} -> {} at {} req/s (predicted p99 {} µs, {})", from, to, Math.round(l),
                Double.isNaN(predicted) ? "unknown" : Math.round(predicted), d.reason());
        return to;
    }

    // ---- observability --------------------------------------------------------------------------------

    /**
     * The live measurements per (configuration, load bucket) with at least one sample, as the
     * adapter thread last published them (every {@value #LIVE_SNAPSHOT_MS} ms while it decides).
     */
    public List<LiveCell> liveTable() {
        return liveTable;
    }

    /**
     * The latest load estimate the adapter acted on, requests per second: the smaller of the
     * smoothed detector estimate ({@link #fastLoad()}) and the admission count over the count window.
     */
    public double load() {
        return monitor.load();
    }

    /** The latest smoothed detector estimate, requests per second (before the count caps it). */
    public double fastLoad() {
        return monitor.fastLoad();
    }

    /** The latest rising-load reading, requests per second ({@link Decider.Context#risingLoad()}). */
    public double risingLoad() {
        return monitor.risingLoad();
    }

    /** The active configuration's predicted p99 at the latest load, µs ({@code NaN} if unknown). */
    public double predictedActiveP99() {
        return predictedActive;
    }

    /**
     * The highest busy share of the I/O loops over the last saturation window (0..1), as of the
     * latest evaluation; NaN when not measured (no busy meter, the signal off, or no loop had
     * completed iterations covering a quarter of the window).
     */
    public double utilization() {
        return monitor.utilization();
    }

    /** Switches made by the adapter. */
    public long switches() {
        return switches;
    }

    /**
     * Switches by reason label: the built-in reasons (in this order: {@code better},
     * {@code far-better}, {@code infeasible}, {@code saturated}, {@code probe},
     * {@code probe-abort}, {@code unknown-load}, {@code noise}, {@code rising}), the policy's {@link Decider#reasons()},
     * then any other reason it gave, in order of first use.
     */
    public Map<String, Long> switchesByReason() {
        synchronized (switchLog) {
            return new LinkedHashMap<>(switchesByReason);
        }
    }

    /** The last {@value #LOG_LIMIT} switches, oldest first. */
    public List<SwitchEvent> switchLog() {
        synchronized (switchLog) {
            return new ArrayList<>(switchLog);
        }
    }

    /** The configurations it chooses from. */
    public List<Configuration> choices() {
        return choices;
    }

    public TuneSettings settings() {
        return settings;
    }

    /** The load detector the adapter's monitor reads. */
    public LoadDetector detector() {
        return monitor.detector();
    }

    /** The decider the adapter asks. */
    public Decider decider() {
        return policy;
    }

    /** Live samples of {@code config} in the load bucket of {@code load}. */
    public long liveSamples(Configuration config, double load) {
        return table.liveSamples(config, LiveLatency.bucket(load));
    }

    /** Stops the adapter thread (the engine keeps its active configuration). */
    @Override
    public void close() {
        closed = true;
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
