package io.doubleface.cli;

import io.doubleface.experiments.ExperimentRunner;
import io.doubleface.experiments.ExternalTopology;
import io.doubleface.experiments.ServiceSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface experiment NAME}: one of the paper's experiments over separate, pinned
 * processes (leaf, mid-tier, load generator), or over a running mid-tier ({@code --midtier}), with
 * a results directory.
 */
@Command(name = "experiment",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs one of the DoubleFaceAD experiments over separate pinned processes and writes a report.",
        description = {
            "NAME is one of:",
            "  concurrency  throughput and closed-loop latency vs concurrency, five models, fanout 5 (Fig. 4/5)",
            "  fanout       throughput vs fanout 1..20 at concurrency 20 and 100, normalized to doubleface (Fig. 7/13)",
            "  imbalance    type2a 1 frontend + 1/2/4 backend loops vs doubleface: wake-ups, events per wake-up, "
                + "context switches, threads, CPU (Tables 1-3)",
            "  priority     open loop, Lfan/Sfan 5/3 and 7/1 mixes with per-reply work: completion-first vs fifo, "
                + "type2a, type2b (Fig. 15)",
            "  mutune-models  open-loop p99 vs load for each configuration of μTune's taxonomy, normalized to the best "
                + "per load; also writes the profile the load adapter uses (μTune Fig. 8/11)",
            "  mutune-steady  loads stepping up then down: static configurations, fm, adaptive-window and adaptive, "
                + "with the configuration the adapter chose per step (μTune Fig. 14)",
            "  mutune-flash   100 req/s, 1 s at 90%% of capacity, 100 req/s: spike latency and recovery (μTune Table 2)",
            "  variability  per-stage mean, variance and C² at 30/60/90%% of capacity, Poisson and H2 arrivals, five "
                + "models; the knob of the top-variance stage swept (flush mode, busy-poll) (WWW'19)",
            "  demo         a short tour: every model, one closed-loop and one open-loop run",
            "",
            "Starts a leaf process (--driver) and the mid-tier, each its own JVM; the mid-tier pinned to --mid-cpus, "
                + "the leaf and every load-generator run to --aux-cpus (taskset). Warms every configuration up, then runs "
                + "each point under each configuration, interleaved, --repeats times; around each run it samples the "
                + "mid-tier's /admin/stats (loop wake-ups, events) and /proc (per-thread context switches, CPU). Writes "
                + "OUT/NAME-<timestamp>/ with report.md, summary.json, environment.json and PNG plots, and the raw files "
                + "(process logs, logs/) in raw.tar.xz, the interval logs in intervals.tar.xz (--keep-raw: as files). "
                + "Prints the estimated time first and one line per run.",
            "",
            "With --midtier (a running mid-tier, e.g. docker compose's) nothing is started but the load generator: "
                + "concurrency, fanout, demo, mutune-models run on it, mutune-steady and mutune-flash with static "
                + "--configs, variability if it runs with --trace-stages all; imbalance and priority need a mid-tier "
                + "of their own.",
            ""},
        footer = {"", "Examples:",
            "  doubleface experiment fanout --quick",
            "  doubleface experiment concurrency --sizes small --concurrency 1,8,64,512",
            "  doubleface experiment priority --reply-work-us 100 --load-fraction 0.8 --out docs/results",
            "  doubleface experiment variability --configs doubleface,doubleface+flush=per-write,doubleface-poll",
            "  doubleface experiment fanout --driver redis --configs doubleface,doubleface@connection=shared,type2a-1f1b",
            "  doubleface experiment fanout --driver mongo --configs doubleface@transport=loop,doubleface,type2b@transport=aio",
            "  doubleface experiment mutune-models --quick --midtier http://127.0.0.1:8080 --admin http://127.0.0.1:9090",
            "Exit codes: 0 done, 1 a process or run failed (the message says which), 2 usage error."})
final class ExperimentCommand implements Callable<Integer> {

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "concurrency, fanout, imbalance, priority, "
            + "mutune-models, mutune-steady, mutune-flash, variability or demo.")
    String name;

    @Option(names = "--quick", description = "Fewer points, shorter runs, one repeat: a few minutes.")
    boolean quick;

    @Mixin
    ExternalMidTierOptions external;

    @Option(names = "--out", paramLabel = "DIR", description = "Where the results directory is created.")
    Path out = Path.of("results");

    @Option(names = "--service", paramLabel = "ycsb|hdsearch|router|setalgebra|recommend|social",
            description = "Service under test (default ycsb). A μSuite service runs its own gRPC leaves (one per "
                    + "--shards) with their default data, and every request of the experiment becomes the service's "
                    + "(docs/experiments.md); social runs leaf social (--shards Redis and as many MongoDB shards, "
                    + "--records users) and asks 9 timeline reads to 1 post; --driver and --reply-work-us apply to "
                    + "ycsb only.")
    String service = "ycsb";

    @Option(names = "--driver", paramLabel = "kv|redis|mongo|grpc",
            description = "Store of the leaf process (doubleface leaf DRIVER).")
    String driver = "kv";

    @Option(names = "--shards", paramLabel = "N", description = "Shards of the leaf.")
    int shards = 20;

    @Option(names = "--records", paramLabel = "N", description = "Records per shard.")
    long records = 1000;

    @Option(names = "--io-threads", paramLabel = "N", description = "I/O event loops of the mid-tier.")
    int ioThreads = 1;

    @Option(names = "--mid-cpus", paramLabel = "LIST",
            description = "CPUs of the mid-tier (taskset -c list). Default: 0 on a machine with 2+ CPUs.")
    String midCpus;

    @Option(names = "--aux-cpus", paramLabel = "LIST",
            description = "CPUs of the leaf and the load generator. Default: the other CPUs; with --midtier: the load "
                + "generator's, default not pinned.")
    String auxCpus;

    @Option(names = "--no-pin", description = "Do not pin anything (taskset not used).")
    boolean noPin;

    @Option(names = "--configs", paramLabel = "NAME[+KNOB=V][@OPTS],…", split = ",",
            description = "Configurations to compare instead of the experiment's own. NAME@OPTS runs NAME on a "
                + "mid-tier whose shard URI has the query OPTS (e.g. doubleface@connection=shared over Redis, "
                + "type2b@transport=aio over MongoDB; several options joined with &): one mid-tier process per "
                + "distinct OPTS, all over the same leaf, compared in the same run. NAME+flush=POLICY and "
                + "NAME+pin=CPUS|off set a run-time knob (PUT /admin/knobs) on the same mid-tier, e.g. "
                + "doubleface+flush=per-write, doubleface+flush=batch:64:20us; without one the knobs are the "
                + "defaults (per-iteration, off). NAME+gc=serial|parallel|g1|zgc runs NAME on a mid-tier JVM of "
                + "its own with that collector (default: none named, the JVM's choice). POLICY+tune=DURATION, "
                + "for a load-adapter policy, runs it with serve's --tune-interval DURATION on a mid-tier of its "
                + "own, e.g. adaptive,adaptive+tune=10ms compares two wake-up intervals in one run.")
    List<String> configs;

    @Option(names = "--shard-options", paramLabel = "OPTS",
            description = "Query of the mid-tier's shard URI for configurations without @OPTS, e.g. transport=loop "
                + "(MongoDB per-loop OP_MSG client) or connection=shared (one Lettuce connection per shard).")
    String shardOptions;

    @Option(names = "--generator", paramLabel = "java|wrk",
            description = "Closed-loop load generator: java (doubleface load, interval logs) or wrk (-t1, C, lighter: "
                + "on a 2-core machine the Java generator and the leaf share one core and can saturate it before the "
                + "mid-tier does). Open-loop runs always use doubleface load.")
    String generator = "java";

    @Option(names = "--loads", paramLabel = "RATE,…", split = ",",
            description = "mutune-models: offered loads in req/s instead of fractions of doubleface's measured capacity; "
                + "mutune-steady: the load steps in order (e.g. 1000,6000,12000,6000,1000), to stay within a profile's "
                + "trained loads); mutune-flash: the spike's rate (one value) instead of 90%% of the measured capacity; "
                + "variability: offered loads in req/s, the same for every configuration, instead of 30/60/90%% of "
                + "each one's capacity.")
    List<Double> loads;

    @Option(names = "--profile", paramLabel = "FILE",
            description = "Profile of the load-adapter configurations (adaptive, adaptive-window, fm). Default: "
                + "profiles/ycsb-kv.json if it exists here, else the one shipped in the jar.")
    Path profile;

    @Option(names = "--concurrency", paramLabel = "N,…", split = ",",
            description = "Closed-loop users instead of the experiment's own list.")
    List<Integer> concurrency;

    @Option(names = "--fanouts", paramLabel = "K,…", split = ",",
            description = "Fanouts instead of the experiment's own list.")
    List<Integer> fanouts;

    @Option(names = "--sizes", paramLabel = "SIZE,…", split = ",",
            description = "Reply sizes (small, medium, large) instead of the experiment's own.")
    List<String> sizes;

    @Option(names = "--repeats", paramLabel = "N", description = "Passes over all points (default: 2, --quick 1).")
    Integer repeats;

    @Option(names = "--warmup", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Unrecorded warm-up of each run (default: 1s for closed-loop experiments, 3s for the "
                + "open-loop ones — priority and mutune-*: a fresh generator JVM stalls for about 2 s at its start; "
                + "--quick 500ms).")
    Duration warmup;

    @Option(names = "--duration", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Measured time of each run (default: the experiment's own).")
    Duration duration;

    @Option(names = "--keep-raw", description = "Leave the raw files (process logs, logs/, intervals/) as files; by "
            + "default they are packed at the end into raw.tar.xz and intervals.tar.xz (docs/results/README.md).")
    boolean keepRaw;

    @Option(names = "--global-warmup", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Closed-loop warm-up of each configuration before the first run (default: 10s, "
                + "--quick 1s; why: docs/measuring.md#warm-up).")
    Duration globalWarmup;

    @Option(names = "--reply-work-us", paramLabel = "MICROS",
            description = "Synthetic CPU work per shard reply in the mid-tier (default: 200 for priority, else 0; the "
                + "paper's servers spent milliseconds of CPU per request, and with 20 µs the mid-tier is not the "
                + "bottleneck on 2 cores).")
    Integer replyWorkMicros;

    @Option(names = "--load-fraction", paramLabel = "F",
            description = "priority: open-loop rate as a fraction of doubleface-fifo's closed-loop capacity.")
    double loadFraction = 0.75;

    ExperimentCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        if (!ExperimentRunner.names().contains(name)) {
            throw new ParameterException(spec.commandLine(), "NAME: " + name + " (expected one of "
                    + ExperimentRunner.names() + ")");
        }
        if (!List.of("kv", "redis", "mongo", "grpc").contains(driver)) {
            throw new ParameterException(spec.commandLine(), "--driver: " + driver + " (expected: kv, redis, mongo, grpc)");
        }
        positive("--shards", shards);
        positive("--records", records);
        positive("--io-threads", ioThreads);
        if (repeats != null) {
            positive("--repeats", repeats);
        }
        if (loadFraction <= 0 || loadFraction > 2) {
            throw new ParameterException(spec.commandLine(), "--load-fraction: " + loadFraction + " (expected: 0 < F <= 2)");
        }
        if (configs != null) {
            for (String c : configs) {
                try {
                    ExperimentRunner.checkConfig(c);
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "--configs: " + e.getMessage());
                }
            }
        }
        external.refuse(spec, REFUSED_WITH_MIDTIER);
        external.refuseConfigs(spec, configs);
        if (sizes != null) {
            for (String s : sizes) {
                if (!List.of("small", "medium", "large").contains(s)) {
                    throw new ParameterException(spec.commandLine(), "--sizes: " + s + " (expected: small, medium, large)");
                }
            }
        }
        if (!List.of("java", "wrk").contains(generator)) {
            throw new ParameterException(spec.commandLine(), "--generator: " + generator + " (expected: java, wrk)");
        }
        if (generator.equals("wrk") && !onPath("wrk")) {
            throw new ParameterException(spec.commandLine(), "--generator wrk: wrk is not on PATH (apt-get install wrk)");
        }
        if (loads != null && loads.stream().anyMatch(l -> !(l > 0))) {
            throw new ParameterException(spec.commandLine(), "--loads: " + loads + " (expected: each > 0)");
        }
        if (profile != null && !Files.isReadable(profile)) {
            throw new ParameterException(spec.commandLine(), "--profile: " + profile + ": no such readable file");
        }
        for (List<Integer> l : java.util.Arrays.asList(concurrency, fanouts)) {
            if (l != null) {
                for (int v : l) {
                    positive(l == concurrency ? "--concurrency" : "--fanouts", v);
                }
            }
        }
        if (!external.given() && fanouts != null && fanouts.stream().anyMatch(f -> f > shards)) {
            throw new ParameterException(spec.commandLine(), "--fanouts: " + fanouts + " (expected: each <= --shards "
                    + shards + ")");
        }
        // checked last: it connects to the running mid-tier (the fanout limit is then its shard count)
        ExternalTopology ext = external.connect(spec, serviceSpec());
        // with --midtier only the load generator can be pinned, and only where --aux-cpus says
        String[] pin = ext != null ? pinning(noPin || auxCpus == null, null, auxCpus, env, "experiment")
                : pinning(noPin, midCpus, auxCpus, env, "experiment");
        String mid = ext != null ? null : pin[0];
        String aux = pin[1];
        List<String> cmdLine = new ArrayList<>(List.of("doubleface"));
        cmdLine.addAll(spec.commandLine().getParseResult().originalArgs());
        ExperimentRunner.Options o = new ExperimentRunner.Options(name, quick, out, driver,
                ext != null ? ext.shards() : shards, records, ioThreads,
                mid, aux, warmup != null ? warmup : quick ? Duration.ofMillis(500) : ExperimentRunner.defaultWarmup(name),
                duration,
                globalWarmup != null ? globalWarmup : Duration.ofSeconds(quick ? 1 : 10),
                repeats != null ? repeats : quick ? 1 : 2, configs, concurrency, fanouts, sizes, replyWorkMicros,
                loadFraction, shardOptions, null, loads, profile != null ? profile.toAbsolutePath()
                        : ProfileFiles.defaultProfile(serviceSpec().name()), generator, VersionProvider.version(), cmdLine,
                serviceSpec(), ext);
        try {
            Files.createDirectories(out);
            Path dir = ExperimentRunner.run(o, env.out());
            if (!keepRaw) {
                env.out().println("experiment: " + ExperimentRunner.packRaw(dir));
                env.out().flush();
            }
        } catch (IOException e) {
            throw new CliException(e.getMessage(), e);
        }
        return DoubleFaceCli.EXIT_OK;
    }

    /** Options that need processes of the runner's own, and why: refused with {@code --midtier}. */
    private static final Map<String, String> REFUSED_WITH_MIDTIER = refusedWithMidTier();

    private static Map<String, String> refusedWithMidTier() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("--driver", "the store is the running mid-tier's own; no leaf is started");
        m.put("--shards", "the shard count is the running mid-tier's (/admin/stats); no leaf is started");
        m.put("--io-threads", "I/O loops are a start option of the mid-tier (serve --io-threads)");
        m.put("--mid-cpus", "nothing of the running mid-tier is pinned");
        m.put("--shard-options", "shard-URI options are fixed when a mid-tier process opens its shards");
        m.put("--reply-work-us", "the per-reply work is a start option of the mid-tier (serve --reply-work-us)");
        m.put("--profile", "the load-adapter policies run in a mid-tier of their own");
        return m;
    }

    private ServiceSpec serviceSpec() {
        try {
            ServiceSpec s = ServiceSpec.of(service);
            if (!s.isYcsb() && externalShardsGiven()) {
                throw new ParameterException(spec.commandLine(), "--service " + service + ": the runner starts its "
                        + "leaves itself; --shard-options apply to ycsb only");
            }
            if (!s.isYcsb() && "fanout".equals(name)) {
                throw new ParameterException(spec.commandLine(), "fanout --service " + service + ": a service's fanout "
                        + "is its number of leaves, not a query parameter (expected: --service ycsb, or run the "
                        + "service's experiments once per --shards K)");
            }
            return s;
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private boolean externalShardsGiven() {
        return shardOptions != null && !shardOptions.isEmpty();
    }

    /** {mid-tier CPUs, leaf and load CPUs} for taskset; nulls when not pinned (warns if taskset is missing). */
    static String[] pinning(boolean noPin, String midCpus, String auxCpus, CliEnv env, String command) {
        int cpus = Runtime.getRuntime().availableProcessors();
        if (noPin) {
            return new String[2];
        }
        if (!onPath("taskset")) {
            env.err().println(command + ": warning: taskset not found; processes are not pinned "
                    + "(install util-linux, or pass --no-pin to silence this)");
            return new String[2];
        }
        return new String[] {midCpus != null ? midCpus : cpus >= 2 ? "0" : null,
            auxCpus != null ? auxCpus : cpus >= 2 ? (cpus == 2 ? "1" : "1-" + (cpus - 1)) : null};
    }

    private void positive(String opt, long v) {
        if (v < 1) {
            throw new ParameterException(spec.commandLine(), opt + ": " + v + " (expected: > 0)");
        }
    }

    private static boolean onPath(String cmd) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, cmd))) {
                return true;
            }
        }
        return false;
    }
}
