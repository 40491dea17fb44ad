package io.doubleface.cli;

import io.doubleface.experiments.ExperimentRunner;
import io.doubleface.experiments.ExternalTopology;
import io.doubleface.experiments.ServiceSpec;
import io.doubleface.model.Configuration;
import io.doubleface.tune.Profile;
import io.doubleface.tune.TuneSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface train}: profiles configurations under open-loop load for the load adapter —
 * the {@code mutune-models} experiment, whose profile is copied to {@code --out} — over a mid-tier it
 * starts, or over a running one ({@code --midtier}).
 */
@Command(name = "train",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Trains a load-adapter profile: open-loop p99 vs load for each threading configuration.",
        description = {
            "Starts the shards (or uses --shards) and a mid-tier with every configuration prepared, measures "
                + "doubleface's closed-loop capacity, then runs open-loop (Poisson) load steps at fractions of it "
                + "(or --loads) under each configuration, interleaved: p50/p99/p99.9, throughput and mid-tier CPU per "
                + "step, saturation marked (under 95%% of the offered load answered, or over 0.1%% errors). Writes the "
                + "profile (JSON, docs/tuning.md) to --out, its plot next to it (.png), and the full experiment report "
                + "under --results. This is `doubleface experiment mutune-models` with a profile as its product.",
            "",
            "With --midtier it profiles a running mid-tier (e.g. docker compose's): nothing is started but the load "
                + "generator, each configuration is activated with PUT /admin/config; the profile is then that "
                + "server's, on its hardware and shards.",
            ""},
        footer = {"", "Examples:",
            "  doubleface train --out profiles/ycsb-kv.json",
            "  doubleface train --configs doubleface,sip,sdb,adb --loads 500,2000,5000,8000 --duration 10s --out my.json",
            "  doubleface train --shards redis://127.0.0.1:7201-7220 --out profiles/ycsb-redis.json",
            "  doubleface train --service hdsearch --shard-count 4 --out profiles/hdsearch.json",
            "  doubleface train --midtier http://127.0.0.1:8080 --admin http://127.0.0.1:9090 --out profiles/compose-redis.json",
            "Then: doubleface serve ycsb --config adaptive --profile FILE",
            "Exit codes: 0 done, 1 a process or run failed, 2 usage error."})
final class TrainCommand implements Callable<Integer> {

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Option(names = "--service", paramLabel = "NAME", description = "The service to profile: ycsb (the YCSB fanout "
            + "query, fanout 5, small replies), or hdsearch, router, setalgebra, recommend (the μSuite services over "
            + "--shard-count of their gRPC leaves with their default data), social (--shard-count redis-server and "
            + "MongoDB shards, --records users), each with the requests of experiment --service; "
            + "--driver, --shards and --records apply to ycsb only). serve SERVICE --config adaptive reads "
            + "profiles/SERVICE.json by default.")
    String service = "ycsb";

    @Mixin
    ExternalMidTierOptions external;

    @Option(names = "--driver", paramLabel = "kv|redis|mongo|grpc",
            description = "Store of the embedded leaf started for training (without --shards).")
    String driver = "kv";

    @Option(names = "--shards", paramLabel = "URI", description = "Train against these running shards instead of "
            + "starting a leaf (kv://, redis://, mongodb://, grpc:// as serve ycsb --shards takes them).")
    String shards;

    @Option(names = "--shard-count", paramLabel = "N", description = "Shards of the embedded leaf.")
    int shardCount = 20;

    @Option(names = "--records", paramLabel = "N", description = "Records per shard.")
    long records = 1000;

    @Option(names = "--configs", paramLabel = "LIST|all", split = ",",
            description = "Configurations to profile; all = doubleface, doubleface-poll and μTune's sib, sip, sdb, sdp, "
                + "aib, aip, adb, adp.")
    List<String> configs = List.of("all");

    @Option(names = "--loads", paramLabel = "RATE,…|auto", split = ",",
            description = "Offered loads in req/s; auto = 10%%, 20%%, 35%%, 50%%, 65%%, 80%%, 90%%, 100%% of doubleface's "
                + "measured closed-loop capacity.")
    List<String> loads = List.of("auto");

    @Option(names = "--duration", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "5s",
            description = "Measured time of each (configuration, load) step, longer where a p99 needs it (10,000 "
                + "samples).")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "3s", description = "Unrecorded warm-up of each step (a fresh load-generator JVM: its "
                + "first ~2 s are not steady).")
    Duration warmup;

    @Option(names = "--global-warmup", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Closed-loop warm-up of each configuration before the first step (docs/measuring.md#warm-up: at least "
                + "10 s or 50k requests).", defaultValue = "10s")
    Duration globalWarmup;

    @Option(names = "--repeats", paramLabel = "N", description = "Passes over all steps, interleaved; the profile "
            + "keeps each step's median p99 and the range of the repeats' p99s, and the adapter leaves the "
            + "peak-sustaining configuration only where another's range lies wholly below its own (with 3 repeats "
            + "each, a 1-in-20 chance when the two do not differ). 1 gives no spread to compare: the adapter then "
            + "switches on the medians alone (--quick: 1).")
    int repeats = 3;

    @Option(names = "--quick", description = "Four configurations, four loads, short steps (a smoke run).")
    boolean quick;

    @Option(names = "--out", paramLabel = "FILE", required = true, description = "Where the profile is written.")
    Path out;

    @Option(names = "--results", paramLabel = "DIR", description = "Where the experiment's results directory goes.")
    Path results = Path.of("results");

    @Option(names = "--mid-cpus", paramLabel = "LIST", description = "CPUs of the mid-tier (taskset -c list).")
    String midCpus;

    @Option(names = "--aux-cpus", paramLabel = "LIST", description = "CPUs of the leaf and the load generator (with "
            + "--midtier: of the load generator, default not pinned).")
    String auxCpus;

    @Option(names = "--keep-raw", description = "Leave the raw files (process logs, logs/, intervals/) as files; by "
            + "default they are packed at the end into raw.tar.xz and intervals.tar.xz (docs/results/README.md).")
    boolean keepRaw;

    @Option(names = "--no-pin", description = "Do not pin anything.")
    boolean noPin;

    /** Options that need processes of the runner's own, and why: refused with {@code --midtier}. */
    private static final Map<String, String> REFUSED_WITH_MIDTIER = Map.of(
            "--shards", "the running mid-tier has its shards; no mid-tier is started over these",
            "--driver", "the store is the running mid-tier's own; no leaf is started",
            "--shard-count", "the shard count is the running mid-tier's (/admin/stats); no leaf is started",
            "--mid-cpus", "nothing of the running mid-tier is pinned");

    TrainCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        ServiceSpec serviceSpec;
        try {
            serviceSpec = ServiceSpec.of(service);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        if (!serviceSpec.isYcsb() && shards != null) {
            throw new ParameterException(spec.commandLine(), "--service " + service + ": training starts the "
                    + "service's own leaves; --shards applies to ycsb only");
        }
        if (!List.of("kv", "redis", "mongo", "grpc").contains(driver)) {
            throw new ParameterException(spec.commandLine(), "--driver: " + driver + " (expected: kv, redis, mongo, grpc)");
        }
        if (quick && spec.commandLine().getParseResult().matchedOption("--repeats") == null) {
            repeats = 1;
        }
        if (shardCount < 1 || records < 1 || repeats < 1) {
            throw new ParameterException(spec.commandLine(), "--shard-count, --records and --repeats must be > 0");
        }
        if (duration.isZero() || duration.isNegative()) {
            throw new ParameterException(spec.commandLine(), "--duration: " + duration + " (expected: > 0)");
        }
        List<String> cs = configs.equals(List.of("all")) ? (quick ? null : ExperimentRunner.taxonomy()) : configs;
        if (cs != null) {
            for (String c : cs) {
                try {
                    Configuration.parse(c);
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "--configs: " + e.getMessage());
                }
            }
        }
        List<Double> ls = null;
        if (!loads.equals(List.of("auto"))) {
            ls = new ArrayList<>();
            for (String l : loads) {
                try {
                    double v = Double.parseDouble(l);
                    if (!(v > 0)) {
                        throw new NumberFormatException();
                    }
                    ls.add(v);
                } catch (NumberFormatException e) {
                    throw new ParameterException(spec.commandLine(), "--loads: " + l + " (expected: req/s > 0, or auto)");
                }
            }
        }
        String externalShards = null;
        String drv = driver;
        if (shards != null) {
            externalShards = shards;
            String scheme = shards.contains("://") ? shards.substring(0, shards.indexOf("://")) : "";
            drv = switch (scheme) {
                case "kv" -> "kv";
                case "redis", "redis-cluster" -> "redis";
                case "mongodb", "mongodb+loop", "mongodb+srv" -> "mongo";
                case "grpc" -> "grpc";
                default -> throw new ParameterException(spec.commandLine(), "--shards: " + shards
                        + " (expected: kv://, redis://, redis-cluster://, mongodb://, grpc://)");
            };
        }
        if (out.getParent() != null && !Files.isDirectory(out.getParent())) {
            throw new ParameterException(spec.commandLine(), "--out: directory " + out.getParent() + " does not exist");
        }
        external.refuse(spec, REFUSED_WITH_MIDTIER);
        ExternalTopology ext = external.connect(spec, serviceSpec);
        // with --midtier only the load generator can be pinned, and only where --aux-cpus says
        String[] pin = ext != null ? ExperimentCommand.pinning(noPin || auxCpus == null, null, auxCpus, env, "train")
                : ExperimentCommand.pinning(noPin, midCpus, auxCpus, env, "train");
        if (ext != null) {
            pin[0] = null;
        }
        List<String> cmdLine = new ArrayList<>(List.of("doubleface"));
        cmdLine.addAll(spec.commandLine().getParseResult().originalArgs());
        ExperimentRunner.Options o = new ExperimentRunner.Options("mutune-models", quick, results, drv,
                ext != null ? ext.shards() : shardCount, records, 1, pin[0], pin[1], warmup, duration, globalWarmup,
                repeats, cs, null, null, null, null, 0.75, null, externalShards, ls, null, "java",
                VersionProvider.version(), cmdLine, serviceSpec, ext);
        try {
            Files.createDirectories(results);
            Path dir = ExperimentRunner.run(o, env.out());
            Path profile = dir.resolve("profile.json");
            if (!Files.isRegularFile(profile)) {
                throw new CliException("train: no profile was produced (no run measured anything); see "
                        + dir.resolve("report.md"), null);
            }
            Profile p = Profile.read(profile);
            Files.copy(profile, out, StandardCopyOption.REPLACE_EXISTING);
            Path plot = dir.resolve("mutune-models-p99.png");
            String name = out.getFileName().toString();
            Path png = out.resolveSibling((name.endsWith(".json") ? name.substring(0, name.length() - 5) : name) + ".png");
            if (Files.isRegularFile(plot)) {
                Files.copy(plot, png, StandardCopyOption.REPLACE_EXISTING);
            }
            env.out().printf(Locale.ROOT, "train: profile %s (%d configurations; peak-sustaining %s), plot %s%n", out,
                    p.configurations().size(), p.peakSustaining(), png);
            for (Profile.Band band : p.bands(TuneSettings.DEFAULT_MARGIN, TuneSettings.DEFAULT_HYSTERESIS)) {
                env.out().printf(Locale.ROOT, "train:   at %.0f req/s: %s — %s%n", band.load(), band.choice(), band.reason());
            }
            if (repeats < 2) {
                env.out().println("train: one repeat per step: the profile has no spread, so the adapter switches on "
                        + "medians that may be noise; train with --repeats 3 for decisions beyond the noise");
            }
            if (!keepRaw) {
                env.out().println("train: " + ExperimentRunner.packRaw(dir));
            }
            env.out().flush();
        } catch (IOException e) {
            throw new CliException(e.getMessage(), e);
        }
        return DoubleFaceCli.EXIT_OK;
    }
}
