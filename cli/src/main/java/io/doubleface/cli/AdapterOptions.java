package io.doubleface.cli;

import io.doubleface.server.FanoutServer;
import io.doubleface.tune.LoadAdapter;
import io.doubleface.tune.Profile;
import io.doubleface.tune.RingBufferDetector;
import io.doubleface.tune.TuneStrategy;
import io.doubleface.tune.TuneSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The load adapter's options of every {@code doubleface serve SERVICE} (a picocli mixin): the
 * profile, the detector and decision settings, the configurations to prepare. They apply when
 * {@code --config} names an adapter policy ({@code adaptive}, {@code adaptive-window}, {@code fm});
 * {@link #resolve} turns them into {@link TuneSettings} and {@link #configure} sets them on the
 * builder. See docs/tuning.md.
 */
final class AdapterOptions {

    /** {@code --profile} value that runs the adapter without a profile: {@value}. */
    static final String NO_PROFILE = "none";

    @Option(names = "--profile", paramLabel = "FILE",
            description = "Trained profile of the load adapter (--config adaptive|adaptive-window|fm), or "
                + NO_PROFILE + " to explore without one (see --tune-candidates). Default: the service's profile "
                + "(" + ProfileFiles.DEFAULT + " for ycsb, trained over 20 KV shards; profiles/SERVICE.json for the "
                + "others, written by doubleface train --service SERVICE) if it exists in the working directory, "
                + "else the one shipped in the jar, else the adapter explores without one (docs/tuning.md).")
    Path profile;

    @Option(names = "--tune-detector", paramLabel = "NAME",
            description = "Load detector of the adapter: ring, ring-N (last N arrivals), window, window-Nms. "
                + "Default: the policy's (adaptive: ring-" + RingBufferDetector.DEFAULT_SIZE + ", others: window-5ms).")
    String tuneDetector;

    @Option(names = "--tune-dwell", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = TuneSettings.DEFAULT_DWELL_MS + "ms",
            description = "A better configuration must stay better this long before the adapter switches, and "
                + "two switches are this far apart (not applied when the active configuration becomes infeasible).")
    Duration tuneDwell;

    @Option(names = "--tune-interval", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = TuneSettings.DEFAULT_INTERVAL_MICROS / 1000 + "ms",
            description = "How often the adapter thread wakes to estimate the load and decide (1ms to 1s). Each "
                + "wake-up is a context switch; on a server whose I/O loop has the adapter's core to itself it is "
                + "cheap, on one pinned core it competes with the loop (docs/tuning.md).")
    Duration tuneInterval;

    @Option(names = "--tune-smoothing", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = TuneSettings.DEFAULT_SMOOTHING_MS + "ms",
            description = "The adapter decides on the median of the load estimates of this window (0ms: on each "
                + "raw estimate).")
    Duration tuneSmoothing;

    @Option(names = "--tune-count-window", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = TuneSettings.DEFAULT_COUNT_WINDOW_MS + "ms",
            description = "The adapter acts on the smaller of the smoothed estimate and the admissions counted over "
                + "this window, which a loop admitting its backlog in bursts cannot inflate (0ms: the estimate alone).")
    Duration tuneCountWindow;

    @Option(names = "--tune-saturation", paramLabel = "FRACTION",
            description = "An I/O loop busy at least this share of the saturation window marks the active "
                + "configuration saturated: the adapter leaves it for one rated for more, and caps it at the load "
                + "it admitted for 30 s (0: off).")
    double tuneSaturation = TuneSettings.DEFAULT_SATURATION;

    @Option(names = "--tune-saturation-window", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = TuneSettings.DEFAULT_SATURATION_WINDOW_MS + "ms",
            description = "The window over which the I/O loops' busy share is measured.")
    Duration tuneSaturationWindow;

    @Option(names = "--tune-hysteresis", paramLabel = "FRACTION",
            description = "Switch only if the predicted p99 improves by more than this fraction.")
    double tuneHysteresis = TuneSettings.DEFAULT_HYSTERESIS;

    @Option(names = "--tune-margin", paramLabel = "FRACTION",
            description = "Feasible at load L if L x (1 + margin) <= the profiled capacity.")
    double tuneMargin = TuneSettings.DEFAULT_MARGIN;

    @Option(names = "--prepare", paramLabel = "LIST", converter = Converters.ConfigurationListConverter.class,
            description = "Configurations to build at start (threads started, then parked), so that switching to "
                + "them later (PUT /admin/config) creates no thread, e.g. sip,sdb-1n-64w,adb.")
    Converters.ConfigurationList prepare;

    @Option(names = "--tune-candidates", paramLabel = "LIST", split = ",",
            description = "Without a profile (--profile " + NO_PROFILE + "): the configurations to explore, the "
                + "first being the safe anchor. Default: doubleface,doubleface-poll,sip,sdb,aip,adb.")
    List<String> tuneCandidates;

    /**
     * What the options resolve to.
     *
     * @param tune the adapter's settings, {@code null} for a static configuration
     * @param profileSource where the profile came from (for the banner), {@code null} without one
     */
    record Choice(TuneSettings tune, String profileSource) {}

    /**
     * Resolves the options for {@code --config config} of {@code service}: the adapter's settings
     * if {@code config} names an adapter policy, with the given profile, or the service's default
     * one ({@link ProfileFiles}); usage errors as picocli's {@link ParameterException} of
     * {@code command} (the command these options are mixed into, also through another mixin).
     */
    Choice resolve(String config, String service, CommandLine command) {
        TuneStrategy tuneStrategy = TuneStrategy.byLabel(config);
        if (tuneStrategy == null) {
            if (profile != null) {
                throw new ParameterException(command,
                        "--profile applies only to --config adaptive, adaptive-window or fm");
            }
            return new Choice(null, null);
        }
        boolean none = profile != null && profile.toString().equals(NO_PROFILE);
        if (tuneCandidates != null && !none) {
            throw new ParameterException(command, "--tune-candidates applies only without a "
                    + "profile (--profile " + NO_PROFILE + "); with a profile the adapter chooses among its "
                    + "configurations");
        }
        Path file = none ? null : profile;
        if (file == null && !none) {
            file = ProfileFiles.defaultProfile(service);
        }
        Profile p = null;
        String profileSource = null;
        if (none) {
            // explicitly no profile: the adapter explores from the anchor
        } else if (file != null) {
            try {
                p = Profile.read(file);
            } catch (IOException e) {
                throw new ParameterException(command, "--profile: cannot read " + file + ": " + e);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(command, "--profile: " + e.getMessage());
            }
            profileSource = file.toString();
        } else {
            try {
                p = ProfileFiles.shipped(service);
            } catch (IOException | IllegalArgumentException e) {
                throw new ParameterException(command, "the shipped profile "
                        + ProfileFiles.defaultFor(service) + " is unreadable: " + e.getMessage());
            }
            profileSource = p == null ? null : ProfileFiles.defaultFor(service) + " (shipped in the jar)";
        }
        try {
            TuneSettings tune = TuneSettings.of(tuneStrategy, p).withDetector(tuneDetector).withDwell(tuneDwell)
                    .withSmoothing(tuneSmoothing).withCountWindow(tuneCountWindow)
                    .withSaturation(tuneSaturation).withSaturationWindow(tuneSaturationWindow)
                    .withHysteresis(tuneHysteresis).withMargin(tuneMargin).withInterval(tuneInterval);
            if (tuneCandidates != null) {
                tune = tune.withCandidates(tuneCandidates);
            }
            return new Choice(tune, profileSource);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(command, e.getMessage());
        }
    }

    /** Sets the configurations to prepare and the adapter, or else the static {@code config}, on {@code b}. */
    void configure(FanoutServer.Builder b, Choice choice, String config) {
        if (prepare != null) {
            b.prepare(prepare.names());
        }
        if (choice.tune() != null) {
            b.adaptive(choice.tune());
        } else {
            b.configuration(config);
        }
    }

    /** The banner's {@code adapter} line of a running server, or {@code null} if it runs no adapter. */
    static String bannerLine(FanoutServer server, String profileSource) {
        LoadAdapter adapter = server.internals().adapter();
        if (adapter == null) {
            return null;
        }
        return "  adapter  " + adapter.settings().strategy().label() + ", detector "
                + adapter.detector().describe() + ", " + (profileSource == null
                ? "no profile: exploring from " + adapter.settings().initial() + " over " + adapter.choices()
                : "profile " + profileSource + " (" + adapter.choices().size() + " configurations)");
    }
}
