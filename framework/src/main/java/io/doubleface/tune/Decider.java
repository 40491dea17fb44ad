package io.doubleface.tune;

import io.doubleface.model.Configuration;
import java.util.List;
import java.util.Objects;

/**
 * How the load adapter chooses the configuration to run: given the load readings, the active
 * configuration and what is known of each configuration at each load, the configuration to run
 * next and why. A pluggable axis of the adapter; the built-in ones are
 * {@link #profileDriven()} (μTune's, for {@code adaptive}, {@code adaptive-window} and
 * {@code fm}, which differ only in detector and choice set) and {@link #exploring()} (no
 * profile). {@link TuneSettings#withDecider} plugs in your own.
 *
 * <p>The adapter measures and switches; the policy only decides. Switching, the switch log, the
 * counts by reason and the metrics are the adapter's: a policy returns a {@link Decision} and the
 * adapter carries it out. Rules about <em>when</em> to move — hysteresis, dwell times,
 * confirmation — are the policy's own state, because each policy applies them differently (the
 * profile-driven one leaves an infeasible configuration at once but a merely worse one only
 * after a dwell; the exploring one times its probes by the dwell); the adapter keeps only the
 * time of the last switch ({@link Context#lastSwitch()}).
 *
 * <p>Threading: one instance serves one adapter, and {@link #decide} is called on that adapter's
 * thread ({@code tune-0}; in tests, the thread that calls {@link LoadAdapter#evaluate}), one call
 * at a time, so a policy may keep plain mutable fields. {@code decide} runs every
 * {@link TuneSettings#interval()} (1 ms by default) while the server is up: it must not block,
 * sleep, do I/O or take locks other threads hold, and should not allocate when it stays (the
 * built-in ones allocate only the {@code Decision} of a switch). It must not call
 * {@code FanoutEngine.switchTo} itself. An exception it throws is logged and the configuration
 * stays as it is until the next interval.
 *
 * <p>Configurations are {@link Configuration} values throughout: {@link Context#active()},
 * {@link Context#choices()} and the table lookups take and give them, and a {@link Decision}
 * carries one (its {@link Decision#Decision(String, String) name constructor} parses a name, for a
 * policy that keeps names, e.g. read from its own settings).
 *
 * <p>Example, the core of a threshold policy (whole, with a detector of its own and the settings
 * that plug both in: docs/tuning.md, "Plugging in your own detector or policy"):
 *
 * <pre>{@code
 * public Decision decide(Context ctx) {
 *     if (ctx.now() - ctx.lastSwitch() < ctx.settings().dwell().toNanos()) {
 *         return null; // the dwell is the policy's to apply
 *     }
 *     boolean low = ctx.load() < threshold;
 *     Configuration want = low ? quiet : busy;   // e.g. Configuration.parse("sip"), parsed once
 *     return want.equals(ctx.active()) ? null : new Decision(want, low ? "quiet" : "busy");
 * }
 * }</pre>
 */
public interface Decider {

    /**
     * One decision, at {@link Context#now()}. Called only once there is a load estimate
     * ({@link Context#load()} {@code > 0}).
     *
     * @param ctx the readings and tables; valid during this call only
     * @return the configuration to run (one of {@link Context#choices()}) and why, or
     *     {@code null} (or a decision naming the active configuration) to stay
     */
    Decision decide(Context ctx);

    /**
     * The reasons this policy may give beyond the built-in ones ({@code better},
     * {@code far-better}, {@code infeasible}, {@code saturated}, {@code probe},
     * {@code probe-abort}, {@code unknown-load}, {@code noise}, {@code rising}), so that {@code /metrics} has a
     * {@code doubleface_tune_switches_total{reason=…}} counter for each from the start. A reason
     * not listed is still logged and counted in {@link LoadAdapter#switchesByReason()}, but has
     * no metric. Called once, when the adapter is created.
     */
    default List<String> reasons() {
        return List.of();
    }

    /** A short description for banners and stats; by default the class's simple name. */
    default String describe() {
        return getClass().getSimpleName();
    }

    /**
     * μTune's decisions over a trained profile, refined by live latencies: the lowest predicted
     * p99 among the feasible configurations, left at once when infeasible or saturated, after a
     * smoothing window when 3× worse than one rated for more load, after a dwell otherwise
     * (docs/tuning.md, "Decisions"). The built-in policy whenever {@link TuneSettings#profile()}
     * is set; a new instance each call (a policy keeps per-adapter state).
     */
    static Decider profileDriven() {
        return new ProfileDecider();
    }

    /**
     * Decisions without a profile: start on the anchor, probe one unexplored candidate at a time
     * while the load stays in one bucket, keep the best one measured live (docs/tuning.md,
     * "Without a profile"). The built-in policy when {@link TuneSettings#profile()} is
     * {@code null}; a new instance each call.
     */
    static Decider exploring() {
        return new ExploringDecider();
    }

    /**
     * A switch a policy asks for.
     *
     * @param configuration the configuration to run, one of {@link Context#choices()}
     * @param reason why, a short label for the switch log and the counts by reason (e.g. {@code better})
     */
    record Decision(Configuration configuration, String reason) {
        public Decision {
            Objects.requireNonNull(configuration, "configuration");
            Objects.requireNonNull(reason, "reason");
            if (reason.isBlank()) {
                throw new IllegalArgumentException("reason: blank (expected: a short label)");
            }
        }

        /**
         * A decision naming its configuration: {@code name} is parsed ({@link Configuration#parse}),
         * so {@code new Decision("sip", "quiet")} is {@code new Decision(Configuration.parse("sip"), "quiet")}.
         * Parsing allocates: a policy deciding every interval keeps its configurations parsed.
         *
         * @throws IllegalArgumentException if {@code name} is not a configuration
         */
        public Decision(String configuration, String reason) {
            this(Configuration.parse(Objects.requireNonNull(configuration, "configuration")), reason);
        }
    }

    /**
     * What a policy sees at one decision: the load monitor's readings, the active configuration
     * and the choices, and the table of predicted p99s and feasibility (the profile's, refined by
     * live latencies, with the saturation caps). Loads are requests per second, latencies
     * microseconds, times {@link System#nanoTime()} values (or a test's fake clock).
     *
     * <p>Threading: the adapter's thread, during {@link Decider#decide} only.
     */
    interface Context {

        /** The time of this decision. */
        long now();

        /** The active configuration (may be outside {@link #choices()} after a manual switch). */
        Configuration active();

        /** The configurations the policy may choose from ({@link TuneSettings#choices()}). */
        List<Configuration> choices();

        /**
         * The safe configuration: where the adapter started ({@link TuneSettings#initial()}), the
         * profile's peak-sustaining one or, without a profile, the first candidate.
         */
        Configuration anchor();

        /** The adapter's settings (dwell, hysteresis, margin, …). */
        TuneSettings settings();

        /** The trained profile, or {@code null}. */
        Profile profile();

        /**
         * The load estimate to act on: the smaller of {@link #fastLoad()} and the admissions
         * counted over {@link TuneSettings#countWindow()}.
         */
        double load();

        /** The detector's estimate, median over {@link TuneSettings#smoothing()}. */
        double fastLoad();

        /**
         * The load as it is rising: the smaller of {@link #fastLoad()} and the admissions counted
         * over the last quarter of {@link TuneSettings#countWindow()}, never below {@link #load()}
         * — a step up shows here four times sooner than in {@link #load()}. By default
         * {@link #load()}.
         */
        default double risingLoad() {
            return load();
        }

        /**
         * The highest busy share (0..1) of the I/O loops over {@link TuneSettings#saturationWindow()};
         * NaN when not measured.
         */
        double utilization();

        /**
         * Whether the active configuration reads saturated: one of the choices, and an I/O loop
         * busy for at least {@link TuneSettings#saturation()} of a window that began a dwell
         * after the last switch.
         */
        boolean saturated();

        /**
         * The live table's load bucket of {@code load}: buckets are logarithmic, 1.25× wide,
         * numbered from 0 (below 1.25 req/s) to 63.
         */
        int bucketOf(double load);

        /** When {@link #load()} entered its current bucket (the load has stayed there since). */
        long loadStableSince();

        /**
         * When the adapter last switched; far enough in the past before its first switch that
         * {@code now() - lastSwitch()} is larger than any dwell (and does not overflow).
         */
        long lastSwitch();

        /**
         * The predicted p99 of {@code config} at {@code load}, µs: the profile's, raised where
         * the live p99 exceeds it by more than 2×; without a profile the live p99; NaN if unknown.
         */
        double predictedP99(Configuration config, double load);

        /**
         * Whether {@code x} beats {@code than} at {@code load} by more than the measured noise:
         * its predicted p99 better by the hysteresis and, where the profile has repeats behind
         * both, the highest repeat of {@code x} below the lowest of {@code than} (both raised by
         * their live latencies as in {@link #predictedP99}). By default, the hysteresis alone.
         */
        default boolean beyondNoise(Configuration x, Configuration than, double load) {
            return predictedP99(x, load) < predictedP99(than, load) * (1 - settings().hysteresis());
        }

        /**
         * Whether {@code config} may run at {@code load}: {@code load × (1 + margin)} within its
         * profiled capacity and its saturation cap, and at most 1% live failures in that bucket.
         */
        boolean feasible(Configuration config, double load);

        /**
         * The choice with the lowest {@link #predictedP99} at {@code load} among those feasible
         * at {@code feasibleAt}, or {@code null} if none has a prediction.
         */
        Configuration bestFeasible(double feasibleAt, double load);

        /** The live p99 of {@code config} in {@code bucket}, µs; NaN below {@link TuneSettings#minSamples()}. */
        double liveP99(Configuration config, int bucket);

        /** Live requests of {@code config} recorded in {@code bucket}. */
        long liveSamples(Configuration config, int bucket);

        /** Failed live requests of {@code config} in {@code bucket}. */
        long liveErrors(Configuration config, int bucket);

        /**
         * Remembers that {@code config} saturated at the current {@link #load()}: it is
         * infeasible above that load for the next 30 s (so the adapter does not come back while
         * the load stays).
         */
        void capSaturated(Configuration config);
    }
}
