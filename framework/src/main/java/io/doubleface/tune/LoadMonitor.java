package io.doubleface.tune;

import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * The load adapter's readings: turns admissions and the I/O loops' busy time into the numbers a
 * {@link Decider} decides on.
 *
 * <pre>
 *   I/O loops ─ admitted(t) ─▶ detector.arrival(t)  +  admissions.increment()
 *   adapter thread, sample(now):
 *      fastLoad    = median of detector.rate(now) over the smoothing window
 *      load        = min(fastLoad, admissions over the count window / count window)
 *      risingLoad  = min(fastLoad, admissions over the last quarter of the count window / that time)
 *      utilization = highest busy share of the loops over the saturation window
 *      bucket      = LiveLatency.bucket(load), and since when it has not changed
 * </pre>
 *
 * <p>Why the median and the count (a ring of 16 arrivals wanders across load buckets; a loop
 * sharing its core admits in bursts), and how the saturation threshold was calibrated:
 * docs/tuning.md, "Decisions" and "Saturation".
 *
 * <p>Threading: {@link #admitted} from every I/O loop at once, lock-free and allocation-free;
 * {@link #sample} and {@link #busyMeter} from one thread at a time (the adapter's); the reading
 * accessors from any thread (volatile snapshots of the latest sample).
 */
final class LoadMonitor {

    /** Raw estimates kept for the smoothing median (at most): {@value}. */
    static final int SMOOTHING_SLOTS = 256;
    /** Admission-count samples kept (two count windows at one sample per window/64): {@value}. */
    static final int COUNT_SLOTS = 128;
    /** Snapshots of the loops' busy/idle time kept for the saturation window: {@value}. */
    static final int BUSY_SLOTS = 128;
    /** A loop's busy share counts only if completed iterations cover at least this share of the window: {@value}. */
    static final double MIN_COVERAGE = 0.25;

    private final LoadDetector detector;
    private final long smoothingNanos;
    private final long countWindowNanos;
    private final double saturation;
    private final long saturationWindowNanos;
    private final LongAdder admissions = new LongAdder();

    // sampling-thread state: (time, admissions) samples for the counted rate, one per window/64
    private final long[] countAt = new long[COUNT_SLOTS];
    private final long[] countValue = new long[COUNT_SLOTS];
    private int counts;
    private int countHead;
    // sampling-thread state: recent raw estimates for the smoothing median
    private final long[] estimateAt = new long[SMOOTHING_SLOTS];
    private final double[] estimate = new double[SMOOTHING_SLOTS];
    private final double[] scratch = new double[SMOOTHING_SLOTS];
    private int estimates;
    private int estimateHead;
    // sampling-thread state: busy/idle snapshots for the saturation signal
    private LoadAdapter.BusyMeter meter;
    private long[] busyAt;
    private long[][] busyValue;
    private long[][] idleValue;
    private int busySamples;
    private int busyHead;
    private int stableBucket = -1;
    private long stableSince;

    // published readings
    private volatile double load;
    private volatile double fastLoad;
    private volatile double risingLoad;
    private volatile double utilization = Double.NaN;
    private volatile int bucket;

    LoadMonitor(LoadDetector detector, TuneSettings settings) {
        this.detector = detector;
        this.smoothingNanos = settings.smoothing().toNanos();
        this.countWindowNanos = settings.countWindow().toNanos();
        this.saturation = settings.saturation();
        this.saturationWindowNanos = settings.saturationWindow().toNanos();
    }

    LoadDetector detector() {
        return detector;
    }

    /** Reads the busy/idle time of {@code m}'s loops from now on (see {@link #utilization()}). */
    void busyMeter(LoadAdapter.BusyMeter m) {
        int n = m.loops();
        this.busyAt = new long[BUSY_SLOTS];
        this.busyValue = new long[BUSY_SLOTS][n];
        this.idleValue = new long[BUSY_SLOTS][n];
        this.busySamples = 0;
        this.meter = m;
    }

    /** One admission at {@code nanoTime} (request path). */
    void admitted(long nanoTime) {
        detector.arrival(nanoTime);
        if (countWindowNanos > 0) {
            admissions.increment();
        }
    }

    /** Takes the readings at {@code now}. */
    void sample(long now) {
        double fast = smoothed(now, detector.rate(now));
        double counted = counted(now, countWindowNanos);
        double recent = counted(now, countWindowNanos / RISE_FRACTION);
        utilization = utilization(now);
        double l = Double.isNaN(counted) ? fast : Math.min(fast, counted);
        int b = LiveLatency.bucket(l);
        load = l;
        fastLoad = fast;
        risingLoad = Double.isNaN(recent) ? l : Math.max(l, Math.min(fast, recent));
        bucket = b;
        if (b != stableBucket) {
            stableBucket = b;
            stableSince = now;
        }
    }

    /** The smaller of {@link #fastLoad()} and the counted admission rate, requests/s. */
    double load() {
        return load;
    }

    /** The smoothed detector estimate, requests/s. */
    double fastLoad() {
        return fastLoad;
    }

    /**
     * The load as it is rising, requests/s: the smaller of {@link #fastLoad()} and the admissions
     * counted over the last {@value #RISE_FRACTION}th of the count window, and never below
     * {@link #load()}. On a step up it reads the new load {@value #RISE_FRACTION}× sooner than the
     * count; admissions bunched by a shared core move it only by the bursts a quarter window
     * holds, where the detector alone reads many times the load.
     */
    double risingLoad() {
        return risingLoad;
    }

    /** The share of the count window {@link #risingLoad()} counts over: one {@value}th. */
    static final int RISE_FRACTION = 4;

    /** The live-table load bucket of {@link #load()}. */
    int bucket() {
        return bucket;
    }

    /** When {@link #load()} entered its current bucket (sampling thread). */
    long stableSince() {
        return stableSince;
    }

    /** The highest busy share of the loops over the saturation window (0..1); NaN when not measured. */
    double utilization() {
        return utilization;
    }

    /**
     * Whether the loops read saturated: a loop busy for at least the threshold share of a window
     * that began at least a dwell after the last switch ({@code sinceSwitch ≥ dwell + window}),
     * so that neither the previous configuration nor the drain of its backlog is blamed on the
     * active one.
     */
    boolean saturated(long sinceSwitch, long dwellNanos) {
        double u = utilization;
        return !Double.isNaN(u) && u >= saturation && sinceSwitch >= dwellNanos + saturationWindowNanos;
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
        Arrays.sort(scratch, 0, n);
        return (n & 1) == 1 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
    }

    /**
     * Admissions counted over the last {@code window} (or since the first sample, while younger)
     * per second; NaN when counting is off or no time has passed yet. Samples are kept for the
     * count window; {@code window} is at most that.
     */
    private double counted(long now, long window) {
        if (window == 0) {
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
            if (now - countAt[k] >= window) {
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
        LoadAdapter.BusyMeter m = meter;
        if (m == null || saturation == 0) {
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
}
