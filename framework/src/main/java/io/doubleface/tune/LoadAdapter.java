package io.doubleface.tune;

import io.doubleface.engine.EngineListener;
import io.doubleface.engine.FanoutEngine;
import io.doubleface.engine.Outcome;
import io.doubleface.loop.Threads;
import io.doubleface.model.ThreadingModel;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load adapter: estimates the offered load and switches the engine to the configuration with
 * the lowest predicted p99 at that load — μTune's run-time adaptation, plus online refinement
 * with live latencies and a no-profile mode that explores safely.
 *
 * <pre>
 *   I/O loops ─ admitted(t) ─▶ LoadDetector (lock-free ring / windows) + admission count
 *   any thread ─ finished(model, latency) ─▶ LiveLatency[config][load bucket]
 *   tune-0, every interval:  fast = median of detector.rate() over the smoothing window
 *                            load = min(fast, admissions counted over the count window / window)
 *        for each choice c:   p99(c) = profile p99(c, load) × max(1, (live / profile) / 2)
 *                             feasible(c) = load·(1+margin) ≤ capacity(c) and live errors ≤ 1%
 *        best = lowest p99 among feasible (none: the peak-sustaining one)
 *        switch if the active one fails live or is over its capacity (at once; the destination
 *        must be feasible at the fast estimate too), if best has beaten it 3× for a smoothing
 *        window, or if best has beaten it by the
 *        hysteresis for a whole dwell time, a dwell after the last switch ─▶ engine.switchTo(best)
 * </pre>
 *
 * <p>Why the smoothing and the confirmation (a ring of 16 arrivals wanders across load buckets),
 * why live latencies may only demote a configuration and only beyond {@value #DRIFT_LIMIT}× its
 * profile, and why the load is the minimum of the ring's rate and an admission count (a loop
 * that shares its core admits in bursts): docs/tuning.md, with the runs that showed each.
 *
 * <p>Decisions: see docs/tuning.md. Without a profile, the adapter starts on the anchor (the
 * first candidate, assumed to sustain peak load) and, while the load stays in one bucket,
 * probes one unexplored candidate at a time until it has enough live samples; a probe is
 * abandoned at its first failed request, when its live p99 exceeds {@value #PROBE_ABORT_FACTOR}×
 * the anchor's, when the load leaves the bucket, or after {@value #PROBE_MAX_DWELLS} dwell times.
 * A load bucket with no live knowledge runs on the anchor.
 *
 * <p>Threading: {@link #admitted} and {@link #finished} from any thread, lock-free;
 * {@link #evaluate} from one thread at a time (the adapter's own {@code tune-0} thread, created
 * once by {@link #start}, or a test with a fake clock); the accessors are thread-safe snapshots.
 */
public final class LoadAdapter implements EngineListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LoadAdapter.class);

    /** Switches kept in {@link #switchLog()}: {@value}. */
    public static final int LOG_LIMIT = 256;
    /** Live failure rate above which a configuration is infeasible in a load bucket: {@value}. */
    static final double MAX_ERROR_RATE = 0.01;
    /**
     * Live p99s up to this multiple of the profile's count as drift (a noisy or busier machine,
     * run-to-run noise), not as evidence against the profile: {@value}. The same static
     * configuration at the same load differed by 1.2–1.4× (up to 14× at 8,000 req/s) between
     * the two passes of one mutune-steady run (docs/experiments.md); a live p99 is measured
     * inside the server and so smaller than the profile's for the same behaviour.
     */
    static final double DRIFT_LIMIT = 2.0;
    /**
     * An active configuration predicted this many times the best one's p99 is left after one
     * smoothing window instead of a dwell ({@code far-better}): {@value}. In mutune-flash with
     * the sip/doubleface pair, sip saturated at about 2,200 req/s during a 6,000-req/s spike,
     * admitted no more, and the adapter, waiting for the estimate to reach sip's profiled 4,000 or
     * for a dwell, left it after 1.4 s with a 1.6-s p99 (results/mutune-flash-20261124T170619Z).
     */
    static final double FAR_FACTOR = 3.0;
    /** A probe whose live p99 exceeds this multiple of the anchor's is abandoned: {@value}. */
    static final double PROBE_ABORT_FACTOR = 2.0;
    /** A probe lasts at most this many dwell times: {@value}. */
    static final int PROBE_MAX_DWELLS = 20;
    /** Raw estimates kept for the smoothing median (at most): {@value}. */
    static final int SMOOTHING_SLOTS = 256;
    /** Admission-count samples kept (two count windows at one sample per window/64): {@value}. */
    static final int COUNT_SLOTS = 128;
    /** Snapshots of the loops' busy/idle time kept for the saturation window. */
    static final int BUSY_SLOTS = 128;
    /** A loop's busy share counts only if completed iterations cover at least this share of the window. */
    static final double MIN_COVERAGE = 0.25;
    /** How long a configuration found saturated at load L stays capped at L: {@value} s. */
    static final long SATURATION_MEMORY_S = 30;

    /**
     * Cumulative busy and idle time of the I/O loops that admit requests — in production the
     * engine's upstream loops ({@link io.doubleface.loop.LoopStats#busyNanos()}); tests give fakes.
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
        /** Canonical name of the active configuration. */
        String active();

        /** Makes {@code name} active. */
        void switchTo(String name);
    }

    /**
     * One switch the adapter made.
     *
     * @param at wall-clock time
     * @param load the estimated load (requests/s) that triggered it
     * @param from previous configuration
     * @param to new configuration
     * @param predictedP99Micros the new configuration's predicted p99 at that load ({@code NaN} if unknown)
     * @param reason {@code better}, {@code far-better}, {@code infeasible}, {@code saturated}, {@code probe},
     *     {@code probe-abort}, {@code unknown-load}
     */
    public record SwitchEvent(Instant at, double load, String from, String to, double predictedP99Micros, String reason) {}

    /**
     * What the adapter has measured live for one configuration in one load bucket.
     *
     * @param config the configuration
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

    private final Switcher switcher;
    private final TuneSettings settings;
    private final Profile profile;
    private final LoadDetector detector;
    private final List<String> choices;
    private final String anchor;
    private final LiveLatency live;
    private final LongSupplier clock;
    private final long dwellNanos;

    private final long smoothingNanos;
    private final long countWindowNanos;
    private final LongAdder admissions = new LongAdder();
    // adapter-thread state: (time, admissions) samples for the counted rate, one per window/64
    private final long[] countAt = new long[COUNT_SLOTS];
    private final long[] countValue = new long[COUNT_SLOTS];
    private int counts;
    private int countHead;
    // adapter-thread state: recent raw estimates for the smoothing median
    private final long[] estimateAt = new long[SMOOTHING_SLOTS];
    private final double[] estimate = new double[SMOOTHING_SLOTS];
    private final double[] scratch = new double[SMOOTHING_SLOTS];
    private int estimates;
    private int estimateHead;
    private long beatenSince = -1;
    private long farSince = -1;

    private volatile int bucket;
    private volatile double load;
    private volatile double fastLoad;
    private volatile List<LiveCell> liveTable = List.of();
    private long liveSnapshotAt = Long.MIN_VALUE / 2;
    private volatile double predictedActive = Double.NaN;
    private volatile long switches;
    private final ArrayDeque<SwitchEvent> switchLog = new ArrayDeque<>();
    private final long[] switchesByReason = new long[Reason.values().length];

    // adapter-thread state
    private long lastSwitch = Long.MIN_VALUE / 2;
    private int stableBucket = -1;
    private long stableSince;
    private String probe;
    private int probeBucket;
    private long probeStart;
    private final long[] rejectedUntil;

    // saturation signal (adapter thread, except the published values)
    private BusyMeter meter;
    private long[] busyAt;
    private long[][] busyValue;
    private long[][] idleValue;
    private int busySamples;
    private int busyHead;
    private final long saturationWindowNanos;
    private volatile double utilization = Double.NaN;
    /** Per choice: load at which it was found saturated (NaN: never) and until when that caps it. */
    private final double[] saturatedAt;
    private final long[] saturatedUntil;
    /** The time of the latest evaluation, for {@link #feasible}. */
    private volatile long evaluatedAt;

    private volatile boolean closed;
    private Thread thread;
    /** Index into {@link #live} of each prepared model, so the completion path does no string work. */
    private volatile Map<ThreadingModel, Integer> modelIndex = Map.of();

    private enum Reason {
        BETTER("better"), FAR_BETTER("far-better"), INFEASIBLE("infeasible"), SATURATED("saturated"), PROBE("probe"),
        PROBE_ABORT("probe-abort"), UNKNOWN_LOAD("unknown-load");

        final String label;

        Reason(String label) {
            this.label = label;
        }
    }

    /**
     * An adapter that is not yet running ({@link #start} / {@link #attach} run it).
     *
     * @param clock {@link System#nanoTime} or a test's fake clock
     */
    public LoadAdapter(Switcher switcher, TuneSettings settings, LongSupplier clock) {
        this.switcher = switcher;
        this.settings = settings;
        this.profile = settings.profile();
        this.detector = LoadDetector.create(settings.detectorName());
        this.choices = settings.choices();
        this.anchor = settings.initial();
        this.live = new LiveLatency(choices, settings.minSamples());
        this.clock = clock;
        this.dwellNanos = settings.dwell().toNanos();
        this.smoothingNanos = settings.smoothing().toNanos();
        this.countWindowNanos = settings.countWindow().toNanos();
        this.rejectedUntil = new long[choices.size() * LiveLatency.BUCKETS];
        this.saturationWindowNanos = settings.saturationWindow().toNanos();
        this.saturatedAt = new double[choices.size()];
        java.util.Arrays.fill(saturatedAt, Double.NaN);
        this.saturatedUntil = new long[choices.size()];
    }

    /**
     * Gives the adapter the busy/idle time of the loops that admit requests: its saturation
     * signal (see {@link #utilization()}). Call before {@link #start}; without one, or with
     * {@link TuneSettings#saturation()} 0, the adapter decides on the load estimates alone.
     */
    public synchronized LoadAdapter busyMeter(BusyMeter m) {
        int n = m.loops();
        this.busyAt = new long[BUSY_SLOTS];
        this.busyValue = new long[BUSY_SLOTS][n];
        this.idleValue = new long[BUSY_SLOTS][n];
        this.busySamples = 0;
        this.meter = m;
        return this;
    }

    /**
     * Attaches an adapter to {@code engine}: builds every configuration it may choose now (so no
     * switch creates a thread), switches to the initial one, starts listening to the engine and
     * starts the {@code tune-0} thread.
     */
    public static LoadAdapter attach(FanoutEngine engine, TuneSettings settings) {
        List<String> choices = settings.choices();
        engine.prepare(choices);
        LoadAdapter a = new LoadAdapter(new Switcher() {
            @Override
            public String active() {
                return engine.active().name();
            }

            @Override
            public void switchTo(String name) {
                engine.switchTo(name);
            }
        }, settings, System::nanoTime);
        engine.switchTo(settings.initial());
        Map<ThreadingModel, Integer> index = new IdentityHashMap<>();
        for (ThreadingModel m : engine.models()) {
            int i = a.live.index(m.configuration().name());
            if (i >= 0) {
                index.put(m, i);
            }
        }
        a.modelIndex = index;
        List<io.doubleface.loop.LoopStats> loops = engine.context().io().stats();
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
        detector.arrival(nanoTime);
        if (countWindowNanos > 0) {
            admissions.increment();
        }
    }

    @Override
    public void finished(ThreadingModel model, long latencyNanos, Outcome outcome) {
        Integer i = modelIndex.get(model); // null: a configuration the adapter does not choose (a manual switch)
        if (i != null) {
            live.record(i, bucket, latencyNanos, outcome == Outcome.OK);
        }
    }

    /** Records one answered request of {@code config} at the current load (tests; the engine hook in production). */
    public void finished(String config, long latencyNanos, boolean ok) {
        live.record(live.index(config), bucket, latencyNanos, ok);
    }

    // ---- decisions --------------------------------------------------------------------------------

    /**
     * The predicted p99 (µs) of {@code config} at {@code load}: without a profile the live p99 of
     * its load bucket; with one, the profile's, raised when the live p99 exceeds it by more than
     * the drift limit: {@code profile × max(1, (live / profile) / }{@value #DRIFT_LIMIT}{@code )}
     * — live numbers only demote; NaN if nothing is known.
     */
    public double predictedP99(String config, double load) {
        double l = live.p99(live.index(config), LiveLatency.bucket(load));
        if (profile == null) {
            return l;
        }
        double p = profile.p99(config, load);
        if (Double.isNaN(p)) {
            return l;
        }
        return Double.isNaN(l) || !(p > 0) ? p : p * Math.max(1, (l / p) / DRIFT_LIMIT);
    }

    /** Whether {@code config} may run at {@code load}: within its profiled capacity with the margin, and not failing live. */
    public boolean feasible(String config, double load) {
        if (failingLive(config, load)) {
            return false;
        }
        int i = choices.indexOf(config);
        double cap = i >= 0 && evaluatedAt - saturatedUntil[i] < 0 ? saturatedAt[i] : Double.POSITIVE_INFINITY;
        if (profile == null) {
            return load * (1 + settings.margin()) <= cap;
        }
        return load * (1 + settings.margin()) <= Math.min(cap, profile.capacity(config));
    }

    /** Whether {@code config} fails more than {@value #MAX_ERROR_RATE} of its live requests in the bucket of {@code load}. */
    private boolean failingLive(String config, double load) {
        int c = live.index(config);
        int b = LiveLatency.bucket(load);
        long n = live.samples(c, b);
        return n >= Math.min(settings.minSamples(), 100) && live.errors(c, b) > MAX_ERROR_RATE * n;
    }

    /**
     * One decision at time {@code now}: estimate the load, maybe switch.
     *
     * @return the configuration active afterwards
     */
    public String evaluate(long now) {
        evaluatedAt = now;
        double fast = smoothed(now, detector.rate(now));
        double counted = counted(now);
        double u = utilization(now);
        utilization = u;
        double l = Double.isNaN(counted) ? fast : Math.min(fast, counted);
        int b = LiveLatency.bucket(l);
        load = l;
        fastLoad = fast;
        bucket = b;
        if (b != stableBucket) {
            stableBucket = b;
            stableSince = now;
        }
        if (now - liveSnapshotAt >= LIVE_SNAPSHOT_MS * 1_000_000) {
            liveSnapshotAt = now;
            liveTable = snapshotLive();
        }
        String current = switcher.active();
        if (!(l > 0)) {
            return current; // no estimate yet (or an empty window): no information to act on
        }
        String next;
        if (saturated(current, u, now)) {
            next = leaveSaturated(current, l, fast, now);
        } else {
            next = profile != null ? decideWithProfile(current, l, fast, now) : decideExploring(current, l, b, now);
        }
        predictedActive = predictedP99(switcher.active(), l);
        return next;
    }

    /**
     * The median of the raw estimates of the last {@link TuneSettings#smoothing()} (the raw
     * estimate itself when smoothing is zero); 0 while there is none.
     */
    private double smoothed(long now, double raw) {
        if (smoothingNanos == 0) {
            return raw;
        }
        if (raw > 0) {
            estimateAt[estimateHead] = now;
            estimate[estimateHead] = raw;
            estimateHead = (estimateHead + 1) % SMOOTHING_SLOTS;
            estimates = Math.min(estimates + 1, SMOOTHING_SLOTS);
        } else {
            estimates = 0; // no estimate (idle or not yet): forget the old ones
            return raw;
        }
        int n = 0;
        for (int i = 1; i <= estimates; i++) {
            int k = Math.floorMod(estimateHead - i, SMOOTHING_SLOTS);
            if (now - estimateAt[k] > smoothingNanos && n > 0) {
                break;
            }
            scratch[n++] = estimate[k];
        }
        java.util.Arrays.sort(scratch, 0, n);
        return (n & 1) == 1 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
    }

    /**
     * Admissions counted over the last {@link TuneSettings#countWindow()} (or since the first
     * sample, while younger) per second; NaN when counting is off or no time has passed yet.
     */
    private double counted(long now) {
        if (countWindowNanos == 0) {
            return Double.NaN;
        }
        long c = admissions.sum();
        int newest = Math.floorMod(countHead - 1, COUNT_SLOTS);
        if (counts == 0 || now - countAt[newest] >= countWindowNanos / 64) {
            countAt[countHead] = now;
            countValue[countHead] = c;
            countHead = (countHead + 1) % COUNT_SLOTS;
            counts = Math.min(counts + 1, COUNT_SLOTS);
        }
        // the newest sample at least a window old, else the oldest there is
        int from = Math.floorMod(countHead - counts, COUNT_SLOTS);
        for (int i = 1; i <= counts; i++) {
            int k = Math.floorMod(countHead - i, COUNT_SLOTS);
            if (now - countAt[k] >= countWindowNanos) {
                from = k;
                break;
            }
        }
        long dt = now - countAt[from];
        return dt <= 0 ? Double.NaN : (c - countValue[from]) * 1e9 / dt;
    }

    /**
     * The highest busy share among the loops over the last saturation window, from completed
     * iterations only; NaN when no loop has iterations covering {@value #MIN_COVERAGE} of the
     * window (a loop blocked in one long wait, or none sampled long enough yet).
     */
    private double utilization(long now) {
        BusyMeter m = meter;
        if (m == null || settings.saturation() == 0) {
            return Double.NaN;
        }
        int n = busyValue[0].length;
        int newest = Math.floorMod(busyHead - 1, BUSY_SLOTS);
        if (busySamples == 0 || now - busyAt[newest] >= saturationWindowNanos / 64) {
            busyAt[busyHead] = now;
            for (int i = 0; i < n; i++) {
                busyValue[busyHead][i] = m.busyNanos(i);
                idleValue[busyHead][i] = m.idleNanos(i);
            }
            newest = busyHead;
            busyHead = (busyHead + 1) % BUSY_SLOTS;
            busySamples = Math.min(busySamples + 1, BUSY_SLOTS);
        }
        int from = -1;
        for (int k = 1; k <= busySamples; k++) {
            int j = Math.floorMod(busyHead - k, BUSY_SLOTS);
            if (now - busyAt[j] >= saturationWindowNanos) {
                from = j;
                break;
            }
        }
        if (from < 0) {
            return Double.NaN; // not a whole window sampled yet
        }
        double worst = Double.NaN;
        for (int i = 0; i < n; i++) {
            long busy = busyValue[newest][i] - busyValue[from][i];
            long idle = idleValue[newest][i] - idleValue[from][i];
            long covered = busy + idle;
            if (covered >= MIN_COVERAGE * saturationWindowNanos) {
                double share = (double) busy / covered;
                if (!(share <= worst)) {
                    worst = share;
                }
            }
        }
        return worst;
    }

    /**
     * Whether the active configuration is saturated: a loop busy for at least the threshold share
     * of the window, the window wholly after the last switch and a dwell (so neither the previous
     * configuration nor the drain of its backlog is blamed on this one).
     */
    private boolean saturated(String current, double u, long now) {
        return !Double.isNaN(u) && u >= settings.saturation() && choices.contains(current)
                && now - lastSwitch >= dwellNanos + saturationWindowNanos;
    }

    /**
     * Leaves a saturated configuration. It admits only what it serves, so the offered load is
     * unknown but at least the admitted one: move to the best configuration the profile rates for
     * more than the saturated one's profiled capacity — without a profile, back to the anchor —
     * and cap the one left at the load it admitted for {@value #SATURATION_MEMORY_S} s (so the
     * adapter does not come back while the load stays). When nothing is rated for more it stays,
     * uncapped.
     */
    private String leaveSaturated(String current, double l, double fast, long now) {
        String to;
        if (profile != null) {
            double cap = profile.capacity(current);
            to = bestFeasible(Math.max(Math.max(l, fast), cap), l);
            if (to == null && profile.capacity(anchor) > cap) {
                to = anchor;
            }
        } else {
            to = anchor;
        }
        if (to == null || to.equals(current)) {
            // nowhere better: stay, and do not cap it — a capped configuration with nowhere to go
            // is "infeasible", and leaving it for one rated lower made the adapter flap between a
            // draining doubleface and a saturating sip in a flash crowd (mutune-flash-20261124T191516Z)
            return current;
        }
        int i = choices.indexOf(current);
        saturatedAt[i] = l;
        saturatedUntil[i] = now + TimeUnit.SECONDS.toNanos(SATURATION_MEMORY_S);
        beatenSince = -1;
        farSince = -1;
        probe = null;
        return switchTo(current, to, l, now, Reason.SATURATED);
    }

    private String decideWithProfile(String current, double l, double fast, long now) {
        if (!choices.contains(current) || !feasible(current, l)) {
            // failing live or over its capacity: leave at once, for one that is feasible at the fast
            // estimate too (on a real step up the count lags and would lead from one too-small
            // configuration to the next); when nothing is, the peak-sustaining one copes best
            beatenSince = -1;
            String to = bestFeasible(Math.max(l, fast), l);
            to = to == null ? anchor : to;
            return to.equals(current) ? current : switchTo(current, to, l, now, Reason.INFEASIBLE);
        }
        String best = bestFeasible(l, l);
        if (best == null || best.equals(current)) {
            beatenSince = -1;
            return current;
        }
        double pc = predictedP99(current, l);
        double pb = predictedP99(best, l);
        if (!(Double.isNaN(pc) || pb < pc * (1 - settings.hysteresis()))) {
            beatenSince = -1;
            farSince = -1;
            return current;
        }
        // beaten: move only once it has been beaten for a whole dwell (noise does not stay put)
        if (beatenSince < 0) {
            beatenSince = now;
        }
        if (now - beatenSince >= dwellNanos && now - lastSwitch >= dwellNanos) {
            beatenSince = -1;
            farSince = -1;
            return switchTo(current, best, l, now, Reason.BETTER);
        }
        // beaten FAR_FACTOR× over by one rated for more is not noise but a configuration past its
        // knee — typically one saturating below its profiled capacity, which admits only what it
        // serves, so the load estimate never reaches that capacity: leave once it has lasted a
        // smoothing window. Only towards more capacity: a move down (to a low-load specialist)
        // waits for the dwell like any other, else the estimate's noise on a steep profile curve
        // flaps between the two every 50-200 ms (mutune-steady-20261124T194031Z: sip and
        // doubleface-poll at 900-1,900 req/s)
        if (!Double.isNaN(pc) && pb * FAR_FACTOR <= pc && profile.capacity(best) > profile.capacity(current)) {
            if (farSince < 0) {
                farSince = now;
            }
            if (now - farSince >= smoothingNanos) {
                beatenSince = -1;
                farSince = -1;
                return switchTo(current, best, l, now, Reason.FAR_BETTER);
            }
        } else {
            farSince = -1;
        }
        return current;
    }

    /**
     * Lowest predicted p99 at {@code l} among the choices with a prediction that are feasible at
     * {@code feasibleAt}; {@code null} if none.
     */
    private String bestFeasible(double feasibleAt, double l) {
        String best = null;
        double bestP = Double.POSITIVE_INFINITY;
        for (String c : choices) {
            if (!feasible(c, feasibleAt)) {
                continue;
            }
            double p = predictedP99(c, l);
            if (!Double.isNaN(p) && p < bestP) {
                best = c;
                bestP = p;
            }
        }
        return best;
    }

    private String decideExploring(String current, double l, int b, long now) {
        if (probe != null) {
            int pc = live.index(probe);
            boolean failed = live.errors(pc, probeBucket) > 0;
            double pp = live.p99(pc, probeBucket);
            double pa = live.p99(live.index(anchor), probeBucket);
            boolean slow = !Double.isNaN(pp) && !Double.isNaN(pa) && pp > PROBE_ABORT_FACTOR * pa;
            boolean moved = Math.abs(b - probeBucket) > 1;
            boolean tooLong = now - probeStart > PROBE_MAX_DWELLS * Math.max(dwellNanos, TimeUnit.MILLISECONDS.toNanos(10));
            if (failed || slow || (tooLong && Double.isNaN(pp)) || !probe.equals(current)) {
                if (failed || slow) {
                    rejectedUntil[pc * LiveLatency.BUCKETS + probeBucket] = Long.MAX_VALUE; // never again here
                } else {
                    rejectedUntil[pc * LiveLatency.BUCKETS + probeBucket] = now + 100 * Math.max(dwellNanos, 1_000_000);
                }
                String to = anchor;
                probe = null;
                return current.equals(to) ? current : switchTo(current, to, l, now, Reason.PROBE_ABORT);
            }
            if (moved) {
                probe = null; // load moved on; what we learned stays
            } else if (Double.isNaN(pp)) {
                return current; // keep probing
            } else {
                probe = null; // learned enough
            }
        }
        // the best known configuration in this bucket (the anchor when nothing is known)
        String best = bestFeasible(l, l);
        if (best == null) {
            best = anchor;
        }
        if (!feasible(current, l)) {
            return current.equals(best) ? current : switchTo(current, best, l, now, Reason.INFEASIBLE);
        }
        if (!current.equals(anchor) && Double.isNaN(live.p99(live.index(current), b))) {
            // the load moved where nothing is known about the current one: back to safety
            return current.equals(best) ? current : switchTo(current, best, l, now, Reason.UNKNOWN_LOAD);
        }
        if (!best.equals(current) && now - lastSwitch >= dwellNanos) {
            double pc = live.p99(live.index(current), b);
            double pb = live.p99(live.index(best), b);
            if (Double.isNaN(pc) || pb < pc * (1 - settings.hysteresis())) {
                return switchTo(current, best, l, now, Reason.BETTER);
            }
        }
        // explore: load steady for a dwell, anchor known here, an unexplored candidate left
        if (now - lastSwitch >= dwellNanos && now - stableSince >= dwellNanos && l > 0
                && !Double.isNaN(live.p99(live.index(anchor), b))) {
            for (String c : choices) {
                int ci = live.index(c);
                if (Double.isNaN(live.p99(ci, b)) && now >= rejectedUntil[ci * LiveLatency.BUCKETS + b]
                        && feasible(c, l)) {
                    probe = c;
                    probeBucket = b;
                    probeStart = now;
                    return switchTo(current, c, l, now, Reason.PROBE);
                }
            }
        }
        return current;
    }

    private String switchTo(String from, String to, double l, long now, Reason reason) {
        switcher.switchTo(to);
        lastSwitch = now;
        double predicted = predictedP99(to, l);
        SwitchEvent e = new SwitchEvent(Instant.now(), l, from, to, predicted, reason.label);
        synchronized (switchLog) {
            if (switchLog.size() == LOG_LIMIT) {
                switchLog.removeFirst();
            }
            switchLog.addLast(e);
            switchesByReason[reason.ordinal()]++;
            switches++;
        }
        log.info("adapter: {} -> {} at {} req/s (predicted p99 {} µs, {})", from, to, Math.round(l),
                Double.isNaN(predicted) ? "unknown" : Math.round(predicted), reason.label);
        return to;
    }

    /** The live table as it is now (adapter thread: {@link LiveLatency#p99} may halve a cell). */
    private List<LiveCell> snapshotLive() {
        List<LiveCell> out = new ArrayList<>();
        for (String c : choices) {
            int ci = live.index(c);
            for (int b = 0; b < LiveLatency.BUCKETS; b++) {
                long n = live.samples(ci, b);
                if (n > 0) {
                    double bl = LiveLatency.bucketLoad(b);
                    out.add(new LiveCell(c, bl, n, live.errors(ci, b), live.p99(ci, b),
                            profile == null ? Double.NaN : profile.p99(c, bl)));
                }
            }
        }
        return List.copyOf(out);
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
        return load;
    }

    /** The latest smoothed detector estimate, requests per second (before the count caps it). */
    public double fastLoad() {
        return fastLoad;
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
        return utilization;
    }

    /** Switches made by the adapter. */
    public long switches() {
        return switches;
    }

    /** Switches by reason label. */
    public Map<String, Long> switchesByReason() {
        Map<String, Long> m = new LinkedHashMap<>();
        synchronized (switchLog) {
            for (Reason r : Reason.values()) {
                m.put(r.label, switchesByReason[r.ordinal()]);
            }
        }
        return m;
    }

    /** The last {@value #LOG_LIMIT} switches, oldest first. */
    public List<SwitchEvent> switchLog() {
        synchronized (switchLog) {
            return new ArrayList<>(switchLog);
        }
    }

    /** The configurations it chooses from. */
    public List<String> choices() {
        return choices;
    }

    public TuneSettings settings() {
        return settings;
    }

    public LoadDetector detector() {
        return detector;
    }

    /** Live samples of {@code config} in the load bucket of {@code load}. */
    public long liveSamples(String config, double load) {
        return live.samples(live.index(config), LiveLatency.bucket(load));
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
