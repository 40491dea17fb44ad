package io.doubleface.tune;

import io.doubleface.model.Configuration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Options of the load adapter. Immutable; start from {@link #of(TuneStrategy, Profile)} and change
 * with the {@code with…} methods, each of which validates its argument. Besides the built-in
 * detectors and policies chosen by name, takes your own {@link LoadDetector} and
 * {@link Decider} as factories ({@link #withDetector(Supplier)}, {@link #withDecider}):
 * settings are a value that may start several adapters, each with its own detector and decider.
 *
 * @param strategy how to choose
 * @param profile the trained profile, or {@code null}: explore with live measurements only
 * @param detector load detector name ({@link LoadDetector#create}); {@code null} = the strategy's (or the
 *     {@code detectorFactory}'s)
 * @param interval how often the adapter re-estimates the load and decides
 * @param margin a configuration is feasible at load L if L × (1 + margin) ≤ its profiled capacity
 * @param hysteresis switch only if the predicted p99 improves by more than this fraction
 * @param dwell minimum time between two switches (ignored when the active configuration becomes infeasible)
 * @param minSamples live latencies per (configuration, load bucket) before they count
 * @param candidates without a profile: the configurations to explore, the first being the safe
 *     anchor (assumed peak-sustaining); with a profile: ignored. Names, kept canonical;
 *     {@link #choices()} gives them as {@link Configuration}s
 * @param smoothing the adapter decides on the median of the detector's estimates over this window
 *     (zero: on each raw estimate)
 * @param countWindow the load the adapter acts on is at most the admissions counted over this
 *     window divided by it (zero: the detector's smoothed estimate alone); see {@link LoadAdapter}
 * @param saturation an I/O loop busy for at least this share of the saturation window marks the
 *     active configuration saturated (0: the signal is off); see {@link LoadAdapter}
 * @param saturationWindow the window over which the I/O loops' busy share is measured
 * @param detectorFactory makes the load detector of each adapter started with these settings
 *     (your own {@link LoadDetector}), or {@code null}: the one named by {@code detector}; at most
 *     one of the two is set
 * @param deciderFactory makes the decider of each adapter started with these settings
 *     (your own {@link Decider}), or {@code null}: the built-in one
 *     ({@link #newDecider()}); {@code strategy} still sets the choices and the default detector
 */
public record TuneSettings(TuneStrategy strategy, Profile profile, String detector, Duration interval, double margin,
        double hysteresis, Duration dwell, int minSamples, List<String> candidates, Duration smoothing,
        Duration countWindow, double saturation, Duration saturationWindow,
        Supplier<? extends LoadDetector> detectorFactory, Supplier<? extends Decider> deciderFactory) {

    /** Default decision interval: {@value} µs. */
    public static final long DEFAULT_INTERVAL_MICROS = 10_000;
    /** Default feasibility margin: {@value}. */
    public static final double DEFAULT_MARGIN = 0.10;
    /** Default hysteresis: {@value}. */
    public static final double DEFAULT_HYSTERESIS = 0.10;
    /**
     * Default dwell: {@value} ms. A better configuration must stay better for this long before
     * the adapter moves, and two such moves are at least this far apart. (50 ms made the adapter
     * switch hundreds of times per minute on estimate noise: docs/experiments.md.)
     */
    public static final long DEFAULT_DWELL_MS = 500;
    /** Default live samples per (configuration, load bucket) before they count: {@value}. */
    public static final int DEFAULT_MIN_SAMPLES = 1000;
    /** Default smoothing window of the load estimate: {@value} ms. */
    public static final long DEFAULT_SMOOTHING_MS = 20;
    /**
     * Default count window: {@value} ms. Long enough that a loop admitting a few milliseconds of
     * backlog at once moves the count by a few percent, short enough that a step from 1,000 to
     * 12,000 req/s crosses a 4,000-req/s capacity within ~30 ms.
     */
    public static final long DEFAULT_COUNT_WINDOW_MS = 100;
    /**
     * Default saturation threshold: {@value}. An I/O loop below saturation waits for I/O between
     * bursts; one that is not keeping up finds I/O ready at every poll, and its waits shrink to the
     * cost of the {@code epoll_wait} call itself.
     */
    public static final double DEFAULT_SATURATION = 0.98;
    /**
     * Default saturation window: {@value} ms. Long enough that a loop keeping up on a noisy shared
     * core almost never reads saturated over a whole window, short enough that one that has
     * become the bottleneck does within a fraction of a second (the calibration: docs/tuning.md,
     * "Saturation").
     */
    public static final long DEFAULT_SATURATION_WINDOW_MS = 200;
    /** Configurations explored without a profile, the anchor first. */
    public static final List<String> DEFAULT_CANDIDATES = List.of(
            "doubleface", "doubleface-poll", "sip", "sdb", "aip", "adb");

    public TuneSettings {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(interval, "interval");
        Objects.requireNonNull(dwell, "dwell");
        Objects.requireNonNull(smoothing, "smoothing");
        Objects.requireNonNull(countWindow, "countWindow");
        if (countWindow.isNegative() || countWindow.toMillis() > 10_000) {
            throw new IllegalArgumentException("count window: " + countWindow.toMillis() + " ms (expected: 0 .. 10 s)");
        }
        Objects.requireNonNull(saturationWindow, "saturationWindow");
        if (!(saturation == 0 || (saturation >= 0.5 && saturation <= 1))) {
            throw new IllegalArgumentException("saturation: " + saturation + " (expected: 0 = off, or 0.5 .. 1)");
        }
        if (saturationWindow.toMillis() < 10 || saturationWindow.toMillis() > 10_000) {
            throw new IllegalArgumentException("saturation window: " + saturationWindow.toMillis() + " ms (expected: 10 ms .. 10 s)");
        }
        if (smoothing.isNegative() || smoothing.toMillis() > 10_000) {
            throw new IllegalArgumentException("smoothing: " + smoothing.toMillis() + " ms (expected: 0 .. 10 s)");
        }
        if (interval.toNanos() < 100_000 || interval.toMillis() > 1000) {
            throw new IllegalArgumentException("tune interval: " + interval.toNanos() / 1000 + " µs (expected: 100 µs .. 1 s)");
        }
        if (!(margin >= 0 && margin <= 1)) {
            throw new IllegalArgumentException("margin: " + margin + " (expected: 0..1)");
        }
        if (!(hysteresis >= 0 && hysteresis < 1)) {
            throw new IllegalArgumentException("hysteresis: " + hysteresis + " (expected: 0 <= h < 1)");
        }
        if (dwell.isNegative() || dwell.toSeconds() > 3600) {
            throw new IllegalArgumentException("dwell: " + dwell + " (expected: 0 .. 1 h)");
        }
        if (minSamples < 1 || minSamples > 1_000_000) {
            throw new IllegalArgumentException("minSamples: " + minSamples + " (expected: 1..1000000)");
        }
        if (detector != null) {
            if (detectorFactory != null) {
                throw new IllegalArgumentException("detector: both a name (" + detector + ") and a factory (expected: one)");
            }
            LoadDetector.create(detector); // fail fast
        }
        List<String> canon = new ArrayList<>();
        for (String c : Objects.requireNonNullElse(candidates, DEFAULT_CANDIDATES)) {
            String n = Configuration.parse(c).name();
            if (!canon.contains(n)) {
                canon.add(n);
            }
        }
        if (canon.isEmpty()) {
            throw new IllegalArgumentException("candidates: empty (expected at least the anchor configuration)");
        }
        candidates = List.copyOf(canon);
    }

    /** The defaults for {@code strategy} with {@code profile} (may be {@code null}). */
    public static TuneSettings of(TuneStrategy strategy, Profile profile) {
        return new TuneSettings(strategy, profile, null, Duration.ofNanos(DEFAULT_INTERVAL_MICROS * 1000), DEFAULT_MARGIN,
                DEFAULT_HYSTERESIS, Duration.ofMillis(DEFAULT_DWELL_MS), DEFAULT_MIN_SAMPLES, DEFAULT_CANDIDATES,
                Duration.ofMillis(DEFAULT_SMOOTHING_MS), Duration.ofMillis(DEFAULT_COUNT_WINDOW_MS), DEFAULT_SATURATION,
                Duration.ofMillis(DEFAULT_SATURATION_WINDOW_MS), null, null);
    }

    /**
     * The settings without the two factories (the shape before they existed).
     *
     * @see #TuneSettings(TuneStrategy, Profile, String, Duration, double, double, Duration, int, List, Duration,
     *     Duration, double, Duration, Supplier, Supplier)
     */
    public TuneSettings(TuneStrategy strategy, Profile profile, String detector, Duration interval, double margin,
            double hysteresis, Duration dwell, int minSamples, List<String> candidates, Duration smoothing,
            Duration countWindow, double saturation, Duration saturationWindow) {
        this(strategy, profile, detector, interval, margin, hysteresis, dwell, minSamples, candidates, smoothing,
                countWindow, saturation, saturationWindow, null, null);
    }

    /** The built-in detector named {@code d} ({@link LoadDetector#create}; {@code null}: the strategy's), replacing a factory. */
    public TuneSettings withDetector(String d) {
        return new TuneSettings(strategy, profile, d, interval, margin, hysteresis, dwell, minSamples, candidates, smoothing, countWindow, saturation, saturationWindow, null, deciderFactory);
    }

    /**
     * Your own load detector, replacing the named one: {@code factory} is called once per adapter
     * (settings are a value that may start several servers; a detector holds the state of one),
     * e.g. {@code withDetector(MyDetector::new)}. See {@link LoadDetector} for its contract.
     *
     * @throws NullPointerException if {@code factory} is {@code null}
     */
    public TuneSettings withDetector(Supplier<? extends LoadDetector> factory) {
        Objects.requireNonNull(factory, "factory");
        return new TuneSettings(strategy, profile, null, interval, margin, hysteresis, dwell, minSamples, candidates, smoothing, countWindow, saturation, saturationWindow, factory, deciderFactory);
    }

    /**
     * Your own decider instead of the built-in one: {@code factory} is called once per
     * adapter (a decider keeps the state of one), e.g. {@code withDecider(MyDecider::new)};
     * {@code null} goes back to the built-in one. The {@link #strategy()} still sets the choices and
     * the default detector. See {@link Decider} for its contract.
     */
    public TuneSettings withDecider(Supplier<? extends Decider> factory) {
        return new TuneSettings(strategy, profile, detector, interval, margin, hysteresis, dwell, minSamples, candidates, smoothing, countWindow, saturation, saturationWindow, detectorFactory, factory);
    }

    public TuneSettings withInterval(Duration d) {
        return new TuneSettings(strategy, profile, detector, d, margin, hysteresis, dwell, minSamples, candidates, smoothing, countWindow, saturation, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withMargin(double m) {
        return new TuneSettings(strategy, profile, detector, interval, m, hysteresis, dwell, minSamples, candidates, smoothing, countWindow, saturation, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withHysteresis(double h) {
        return new TuneSettings(strategy, profile, detector, interval, margin, h, dwell, minSamples, candidates, smoothing, countWindow, saturation, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withDwell(Duration d) {
        return new TuneSettings(strategy, profile, detector, interval, margin, hysteresis, d, minSamples, candidates, smoothing, countWindow, saturation, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withMinSamples(int n) {
        return new TuneSettings(strategy, profile, detector, interval, margin, hysteresis, dwell, n, candidates, smoothing, countWindow, saturation, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withCandidates(List<String> c) {
        return new TuneSettings(strategy, profile, detector, interval, margin, hysteresis, dwell, minSamples, c, smoothing, countWindow, saturation, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withSmoothing(Duration d) {
        return new TuneSettings(strategy, profile, detector, interval, margin, hysteresis, dwell, minSamples, candidates, d, countWindow, saturation, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withCountWindow(Duration d) {
        return new TuneSettings(strategy, profile, detector, interval, margin, hysteresis, dwell, minSamples, candidates, smoothing, d, saturation, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withSaturation(double u) {
        return new TuneSettings(strategy, profile, detector, interval, margin, hysteresis, dwell, minSamples, candidates, smoothing,
                countWindow, u, saturationWindow, detectorFactory, deciderFactory);
    }

    public TuneSettings withSaturationWindow(Duration d) {
        return new TuneSettings(strategy, profile, detector, interval, margin, hysteresis, dwell, minSamples, candidates, smoothing,
                countWindow, saturation, d, detectorFactory, deciderFactory);
    }

    /** The detector name in effect; {@code null} when a {@link #detectorFactory()} makes it. */
    public String detectorName() {
        if (detectorFactory != null) {
            return null;
        }
        return detector != null ? detector : strategy.defaultDetector();
    }

    /** A new load detector for one adapter: the factory's, or the named one's. */
    public LoadDetector newDetector() {
        if (detectorFactory != null) {
            return Objects.requireNonNull(detectorFactory.get(), "detector factory returned null");
        }
        return LoadDetector.create(detectorName());
    }

    /**
     * A new decider for one adapter: the factory's; else, with a profile,
     * {@link Decider#profileDriven()}, without one {@link Decider#exploring()}.
     */
    public Decider newDecider() {
        if (deciderFactory != null) {
            return Objects.requireNonNull(deciderFactory.get(), "decider factory returned null");
        }
        return profile != null ? Decider.profileDriven() : Decider.exploring();
    }

    /**
     * The configurations the adapter may choose from: the profile's (FM: only the peak-sustaining
     * configuration's family), or the candidates without a profile, parsed.
     */
    public List<Configuration> choices() {
        if (profile == null) {
            return candidates.stream().map(Configuration::parse).toList();
        }
        if (strategy != TuneStrategy.FM) {
            return profile.configurations();
        }
        String family = profile.peakSustaining().family();
        return profile.configurations().stream().filter(c -> c.family().equals(family)).toList();
    }

    /** Where the adapter starts: the profile's peak-sustaining configuration, or the anchor. */
    public Configuration initial() {
        return profile != null ? profile.peakSustaining() : Configuration.parse(candidates.get(0));
    }
}
