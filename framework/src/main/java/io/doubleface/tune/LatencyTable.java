package io.doubleface.tune;

import io.doubleface.model.Configuration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the load adapter knows of each configuration it chooses from, per load: the profile's
 * p99 and capacity, the live latencies ({@link LiveLatency}), and the saturation caps — which
 * together give a configuration's predicted p99 and whether it is feasible.
 *
 * <p>Why live numbers may only demote a configuration, and only beyond {@value #DRIFT_LIMIT}× its
 * profile: docs/tuning.md, "When live numbers contradict the profile".
 *
 * <p>Threading: {@link #record} from any thread (lock-free, {@link LiveLatency}); everything else
 * from the adapter thread ({@link LiveLatency#p99} may halve a full cell).
 */
final class LatencyTable {

    /** Live failure rate above which a configuration is infeasible in a load bucket: {@value}. */
    static final double MAX_ERROR_RATE = 0.01;
    /**
     * Live p99s up to this multiple of the profile's count as drift (a noisy or busier machine,
     * run-to-run noise; a live p99 is also measured inside the server and so smaller than the
     * profile's), not as evidence against the profile: {@value}.
     */
    static final double DRIFT_LIMIT = 2.0;
    /** How long a configuration found saturated at load L stays capped at L: {@value} s. */
    static final long SATURATION_MEMORY_S = 30;

    private final Profile profile;
    private final List<Configuration> choices;
    private final LiveLatency live;
    private final double margin;
    private final int minSamples;
    /** Per choice: load at which it was found saturated (NaN: never) and until when that caps it. */
    private final double[] saturatedAt;
    private final long[] saturatedUntil;

    LatencyTable(TuneSettings settings) {
        this.profile = settings.profile();
        this.choices = settings.choices();
        this.live = new LiveLatency(choices, settings.minSamples());
        this.margin = settings.margin();
        this.minSamples = settings.minSamples();
        this.saturatedAt = new double[choices.size()];
        Arrays.fill(saturatedAt, Double.NaN);
        this.saturatedUntil = new long[choices.size()];
    }

    Profile profile() {
        return profile;
    }

    List<Configuration> choices() {
        return choices;
    }

    /** Index of {@code config} in the live table, -1 if it is not a choice. */
    int index(Configuration config) {
        return live.index(config);
    }

    /** One answered request of choice {@code c} (an {@link #index}) in load bucket {@code bucket}. */
    void record(int c, int bucket, long latencyNanos, boolean ok) {
        live.record(c, bucket, latencyNanos, ok);
    }

    double liveP99(Configuration config, int bucket) {
        return live.p99(live.index(config), bucket);
    }

    long liveSamples(Configuration config, int bucket) {
        return live.samples(live.index(config), bucket);
    }

    long liveErrors(Configuration config, int bucket) {
        return live.errors(live.index(config), bucket);
    }

    /**
     * The predicted p99 (µs) of {@code config} at {@code load}: without a profile the live p99 of
     * its load bucket; with one, the profile's, raised when the live p99 exceeds it by more than
     * the drift limit: {@code profile × max(1, (live / profile) / }{@value #DRIFT_LIMIT}{@code )}
     * — live numbers only demote; NaN if nothing is known.
     */
    double predictedP99(Configuration config, double load) {
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

    /**
     * How much the live p99 raised {@code config}'s profile prediction at {@code load}
     * ({@link #predictedP99}): 1 when it did not, NaN when there is no live p99 (or no profile
     * point) to tell.
     */
    private double lift(Configuration config, double load) {
        if (profile == null) {
            return Double.NaN;
        }
        double p = profile.p99(config, load);
        double l = live.p99(live.index(config), LiveLatency.bucket(load));
        return Double.isNaN(p) || Double.isNaN(l) || !(p > 0) ? Double.NaN : Math.max(1, (l / p) / DRIFT_LIMIT);
    }

    /**
     * Whether {@code x} beats {@code than} at {@code load} beyond the profile's noise
     * ({@link Profile#beyondNoise}), both raised by their live latencies; without a profile, by
     * the predicted p99s and the hysteresis alone.
     *
     * <p>Live numbers raise both sides alike: where only one of the two has run at this load, the
     * other is raised by the same factor. Only the active configuration gathers live latencies,
     * so raising it alone would make every idle alternative look better than the profile says
     * whenever the machine runs slower than the one trained on (docs/tuning.md, "When live
     * numbers contradict the profile").
     */
    boolean beyondNoise(Configuration x, Configuration than, double load, double hysteresis) {
        if (profile == null) {
            double px = predictedP99(x, load);
            double pt = predictedP99(than, load);
            return px < pt * (1 - hysteresis);
        }
        double liftX = lift(x, load);
        double liftThan = lift(than, load);
        if (Double.isNaN(liftX)) {
            liftX = Double.isNaN(liftThan) ? 1 : liftThan;
        }
        if (Double.isNaN(liftThan)) {
            liftThan = liftX;
        }
        return profile.beyondNoise(x, liftX, than, liftThan, load, hysteresis);
    }

    /**
     * Whether {@code config} may run at {@code load} at time {@code now}: within its profiled
     * capacity and its saturation cap, with the margin, and not failing live.
     */
    boolean feasible(Configuration config, double load, long now) {
        if (failingLive(config, load)) {
            return false;
        }
        int i = choices.indexOf(config);
        double cap = i >= 0 && now - saturatedUntil[i] < 0 ? saturatedAt[i] : Double.POSITIVE_INFINITY;
        if (profile == null) {
            return load * (1 + margin) <= cap;
        }
        return load * (1 + margin) <= Math.min(cap, profile.capacity(config));
    }

    /** Whether {@code config} fails more than {@value #MAX_ERROR_RATE} of its live requests in the bucket of {@code load}. */
    private boolean failingLive(Configuration config, double load) {
        int c = live.index(config);
        int b = LiveLatency.bucket(load);
        long n = live.samples(c, b);
        return n >= Math.min(minSamples, 100) && live.errors(c, b) > MAX_ERROR_RATE * n;
    }

    /**
     * Lowest predicted p99 at {@code load} among the choices with a prediction that are feasible
     * at {@code feasibleAt}; {@code null} if none.
     */
    Configuration bestFeasible(double feasibleAt, double load, long now) {
        Configuration best = null;
        double bestP = Double.POSITIVE_INFINITY;
        for (Configuration c : choices) {
            if (!feasible(c, feasibleAt, now)) {
                continue;
            }
            double p = predictedP99(c, load);
            if (!Double.isNaN(p) && p < bestP) {
                best = c;
                bestP = p;
            }
        }
        return best;
    }

    /** Caps {@code config} at {@code load} for {@value #SATURATION_MEMORY_S} s from {@code now}. */
    void capSaturated(Configuration config, double load, long now) {
        int i = choices.indexOf(config);
        if (i >= 0) {
            saturatedAt[i] = load;
            saturatedUntil[i] = now + TimeUnit.SECONDS.toNanos(SATURATION_MEMORY_S);
        }
    }

    /** The live table as it is now. */
    List<LoadAdapter.LiveCell> snapshot() {
        List<LoadAdapter.LiveCell> out = new ArrayList<>();
        for (Configuration c : choices) {
            int ci = live.index(c);
            for (int b = 0; b < LiveLatency.BUCKETS; b++) {
                long n = live.samples(ci, b);
                if (n > 0) {
                    double bl = LiveLatency.bucketLoad(b);
                    out.add(new LoadAdapter.LiveCell(c.name(), bl, n, live.errors(ci, b), live.p99(ci, b),
                            profile == null ? Double.NaN : profile.p99(c, bl)));
                }
            }
        }
        return List.copyOf(out);
    }
}
