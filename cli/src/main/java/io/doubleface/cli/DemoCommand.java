package io.doubleface.cli;

import io.doubleface.driver.Transport;
import io.doubleface.cli.demo.DemoReport;
import io.doubleface.cli.demo.DemoRow;
import io.doubleface.cli.demo.ThreadSwitches;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.loadgen.LoadException;
import io.doubleface.loadgen.LoadGenerator;
import io.doubleface.loadgen.LoadResult;
import io.doubleface.loadgen.RequestMix;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.internal.loop.Threads;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.ycsb.Size;
import io.doubleface.services.ycsb.YcsbBinding;
import io.doubleface.services.ycsb.YcsbQuery;
import io.doubleface.services.ycsb.YcsbReference;
import io.doubleface.services.ycsb.KvRecords;
import io.doubleface.services.ycsb.YcsbService;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface demo}: the main job. Starts a KV leaf and the YCSB mid-tier in this process on
 * free loopback ports and, switching the running server through the configurations
 * ({@link FanoutServer#switchTo}):
 *
 * <ol>
 *   <li>checks correctness: the same fixed queries under every configuration, every body
 *       byte-identical to the one computed from the records ({@link YcsbReference});
 *   <li>measures capacity: a closed-loop {@link LoadGenerator} run per configuration;
 *   <li>measures latency: an open-loop (Poisson) run per configuration at one rate for all — by
 *       default half the lowest closed-loop throughput, so every model is below saturation — with
 *       latency from the intended send times;
 * </ol>
 *
 * and reads the mid-tier's loop and thread counters ({@link MidTierCounters}) over each measured
 * run. Prints a comparison table and writes a report directory ({@link DemoReport}).
 *
 * <p>The generator shares the process and the cores with the server: a tour, not a pinned
 * benchmark (that is {@code bench/} and {@code docs/benchmarks.md}).
 */
@Command(name = "demo",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs every threading model on the embedded default, checks and compares them.",
        description = {
            "Starts a KV leaf and the YCSB mid-tier in this process and switches the running server through "
                + "--configs: first checks that every configuration answers the same queries with byte-identical "
                + "bodies, then per configuration a closed-loop run (--users, capacity) and an open-loop run "
                + "(Poisson arrivals at one rate for all: --rate, default half the lowest closed-loop throughput; "
                + "p50/p99/p99.9 from the intended send times). Prints a table with I/O events per loop wake-up and "
                + "context switches per request, and writes report.md, summary.json, environment.json and "
                + "latency.png to --out. Exits 1 on a wrong body or a request error. The load generator shares "
                + "the process and the cores with the server.",
            ""})
final class DemoCommand implements Callable<Integer> {

    /** Default configurations, one per model: {@value}. */
    static final String DEFAULT_CONFIGS = "thread-64,type1-32,type2a-1f1b,type2b,doubleface";
    /** Default checked queries per configuration in the correctness phase: {@value}. */
    static final int DEFAULT_CHECK_REQUESTS = 200;
    /** Default closed-loop users: {@value}. */
    static final int DEFAULT_USERS = 16;
    /** Default warm-up before each measured run: {@value} s ({@code --quick}: 1 s). */
    static final int DEFAULT_WARMUP_SECONDS = 2;
    /** Default measured time of each closed-loop run: {@value} s ({@code --quick}: 2 s). */
    static final int DEFAULT_DURATION_SECONDS = 4;
    /**
     * Shortest default open-loop measured time: {@value} s ({@code --quick}: 2 s). The default is
     * the time {@link #OPEN_SAMPLES} requests take at the rate, within {@value} to
     * {@link #MAX_OPEN_DURATION_SECONDS} s: p99.9 needs 100/(1-0.999) = 100,000 samples
     * (docs/measuring.md#samples-per-percentile), 25 s at 4,000 requests/s.
     */
    static final int MIN_OPEN_DURATION_SECONDS = 10;
    /** Longest default open-loop measured time: {@value} s (keeps the default demo under 3 minutes). */
    static final int MAX_OPEN_DURATION_SECONDS = 25;
    /** Samples the default open-loop duration aims at: {@value} (p99.9 needs 100,000). */
    static final int OPEN_SAMPLES = 105_000;
    /** Default open-loop rate: this share of the lowest closed-loop throughput: {@value}. */
    static final double DEFAULT_RATE_SHARE = 0.5;
    /**
     * Default I/O loops of the mid-tier: {@value}. Small and fixed, so the loop-based models get
     * the same number of loops ({@code type2a-1f1b}: 1 + 1; {@code doubleface}: 2).
     */
    static final int DEFAULT_IO_THREADS = 2;
    /**
     * Per-request deadline of the demo's server: {@value} s. Generous on purpose: the demo checks
     * answers, and a busy shared machine must not turn a slow answer into a 504.
     */
    static final long DEADLINE_SECONDS = 10;
    /** Worker-pool thread groups of the models (as in {@link MidTierCounters}): request, Type-1, Type-2b. */
    private static final Set<String> WORKER_POOLS = Set.of("req", "t1-wk", "t2b-wk");
    /** Carriers of virtual threads ({@code thread-virtual}). */
    private static final String VIRTUAL_THREAD_CARRIERS = "ForkJoinPool-";
    /** Seed of every run's arrivals and keys: the same sequence for every configuration. */
    static final long SEED = 20_240_601L;

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Option(names = "--quick", description = "Short runs for tests and CI: 1s warm-up and 2s measured per run "
            + "(unless --warmup/--duration/--open-duration say otherwise).")
    boolean quick;

    @Option(names = "--duration", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Measured time of each closed-loop run (default 4s; --quick: 2s).")
    Duration duration;

    @Option(names = "--open-duration", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Measured time of each open-loop run (default: the time 105000 requests take at the "
                    + "rate, enough for p99.9, within 10s..25s; --quick: 2s).")
    Duration openDuration;

    @Option(names = "--warmup", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Warm-up before each run, not recorded (default 2s; --quick: 1s).")
    Duration warmup;

    @Option(names = "--users", paramLabel = "N", description = "Closed-loop users (connections), zero think time.")
    int users = DEFAULT_USERS;

    @Option(names = "--rate", paramLabel = "R",
            description = "Open-loop rate, requests/s, for every configuration (default: half the lowest "
                    + "closed-loop throughput).")
    Double rate;

    @Option(names = "--configs", paramLabel = "LIST", converter = Converters.ConfigurationListConverter.class,
            defaultValue = DEFAULT_CONFIGS, description = "Configurations to run, in order, separated by commas.")
    Converters.ConfigurationList configs;

    @Option(names = "--fanout", paramLabel = "K", description = "Shards each query reads.")
    int fanout = YcsbBinding.DEFAULT_FANOUT;

    @Option(names = "--size", paramLabel = "small|medium|large", converter = Converters.SizeConverter.class,
            defaultValue = "small",
            description = "Reply size per shard: small 0.1 kB read, medium 1 kB record, large 20 kB scan.")
    Size size;

    @Option(names = "--out", paramLabel = "DIR",
            description = "Report directory (default: results/demo-<UTC timestamp>).")
    Path out;

    @Option(names = {"--check-requests", "--requests"}, paramLabel = "N",
            description = "Checked queries per configuration in the correctness phase (--requests: deprecated alias).")
    int checkRequests = DEFAULT_CHECK_REQUESTS;

    @Option(names = "--io-threads", paramLabel = "N", description = "I/O event loops of the mid-tier.")
    int ioThreads = DEFAULT_IO_THREADS;

    @Option(names = "--embedded-shards", paramLabel = "N", description = "Shards of the embedded KV leaf.")
    int shards = ServeCommand.Ycsb.DEFAULT_EMBEDDED_SHARDS;

    @Option(names = "--records", paramLabel = "N", description = "Records per shard.")
    int records = LeafCommand.Kv.DEFAULT_RECORDS;

    @Option(names = "--transport", paramLabel = "auto|epoll|nio", converter = Converters.TransportConverter.class,
            defaultValue = "auto", description = "Event loop transport: auto = epoll if available, else nio.")
    Transport transport;

    DemoCommand(CliEnv env) {
        this.env = env;
    }

    private void require(boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        require(checkRequests >= 1, "--check-requests: " + checkRequests + " (expected: > 0)");
        require(users >= 1 && users <= 1024, "--users: " + users + " (expected: 1..1024)");
        require(rate == null || (rate > 0 && rate <= 1_000_000), "--rate: " + rate + " (expected: 0 < R <= 1000000)");
        require(shards >= 1, "--embedded-shards: " + shards + " (expected: > 0)");
        require(records >= 1, "--records: " + records + " (expected: > 0)");
        require(fanout >= 1 && fanout <= shards, "--fanout: " + fanout + " (expected: 1.." + shards
                + ", the number of shards)");
        if (warmup == null) {
            warmup = Duration.ofSeconds(quick ? 1 : DEFAULT_WARMUP_SECONDS);
        }
        if (duration == null) {
            duration = Duration.ofSeconds(quick ? 2 : DEFAULT_DURATION_SECONDS);
        }
        if (openDuration == null && quick) {
            openDuration = Duration.ofSeconds(2);
        }
        require(openDuration == null || openDuration.toMillis() > 0, "--open-duration: 0 (expected: > 0)");
        require(!warmup.isNegative(), "--warmup: " + warmup + " (expected: >= 0)");
        require(duration.toMillis() > 0, "--duration: 0 (expected: > 0)");
        ZonedDateTime started = ZonedDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS);
        if (out == null) {
            out = Path.of("results", "demo-" + started.format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")));
        }
        System.setProperty("java.awt.headless", "true");

        KvLeafServer leaf = null;
        FanoutServer server = null;
        try {
            YcsbService service;
            try {
                leaf = KvLeafServer.builder().shards(shards).basePort(0).records(records).transport(transport).start();
                FanoutServer.Builder b = FanoutServer.builder();
                service = YcsbService.install(b, new KvRecords(KvDriver.of(leaf.addresses())), records,
                        YcsbService.DEFAULT_SCAN_RECORDS, 0, false);
                server = b.port(0).ioThreads(ioThreads).transport(transport)
                        .deadline(Duration.ofSeconds(DEADLINE_SECONDS))
                        .configuration(configs.names().get(0)).start();
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage(), e);
            } catch (IllegalStateException | UnsatisfiedLinkError e) {
                throw new CliException(e.getMessage(), e);
            }
            return run(service, leaf, server, started);
        } finally {
            StopSignal.closeAll(server, leaf);
        }
    }

    private int run(YcsbService service, KvLeafServer leaf, FanoutServer server,
            ZonedDateTime started) throws InterruptedException {
        PrintWriter o = env.out();
        URI base = URI.create("http://127.0.0.1:" + server.port());
        List<String> names = configs.names();
        String path = "/query?fanout=" + fanout + "&size=" + size.label() + "&key=" + RequestMix.KEY;
        o.printf("doubleface demo %s: every threading model on the embedded default%n", VersionProvider.version());
        o.printf("  shards    embedded KV leaf: %s%n", Hosts.describe(leaf));
        o.printf("  mid-tier  %s, %d I/O loops (%s); configurations switched at run time via the engine%n",
                base, server.ioThreads(), server.transport().name().toLowerCase(Locale.ROOT));
        o.printf("  requests  GET %s, key uniform in 0..%d%n", path, records - 1);
        o.printf("  method    %d checked queries per configuration; then per configuration a closed-loop run (%d "
                + "users, %s warm-up + %s) and an open-loop run (Poisson, %s, %s warm-up + %s)%n", checkRequests,
                users, Durations.format(warmup), Durations.format(duration),
                rate == null ? String.format(Locale.ROOT, "%.0f%% of the lowest closed-loop throughput",
                        DEFAULT_RATE_SHARE * 100) : String.format(Locale.ROOT, "%.0f req/s", rate),
                Durations.format(warmup), openDuration == null ? "up to " + MAX_OPEN_DURATION_SECONDS
                        + "s: enough requests for p99.9" : Durations.format(openDuration));
        o.printf("  note      load generator in the %s%n%n", DemoReport.SAME_PROCESS);
        o.flush();

        // 1. correctness
        if (!checkCorrectness(service, server, base, names)) {
            throw new CliException("some responses were wrong (see above)");
        }

        // 2. closed loop: capacity
        Map<String, LoadResult> closed = new HashMap<>();
        Map<String, DemoRow.Counters> closedCounters = new HashMap<>();
        for (int i = 0; i < names.size(); i++) {
            String config = names.get(i);
            progress("[2/3] closed loop %d/%d: %s, %d users, %s + %s", i + 1, names.size(), config, users,
                    Durations.format(warmup), Durations.format(duration));
            server.switchTo(config);
            AtomicReference<DemoRow.Counters> counters = new AtomicReference<>();
            LoadResult r = measure(server, generator(base, path).users(users), counters);
            closed.put(config, r);
            closedCounters.put(config, counters.get());
            progress("      %s: %.0f req/s, %d errors", config, r.throughput(), r.errors());
        }
        double lowest = names.stream().mapToDouble(c -> closed.get(c).throughput()).min().orElse(0);
        double openRate;
        String rateSource;
        if (rate != null) {
            openRate = rate;
            rateSource = "--rate";
        } else {
            if (lowest <= 0) {
                throw new CliException("a closed-loop run answered no request: no open-loop rate to choose "
                        + "(give --rate R, or see the errors above)");
            }
            openRate = Math.max(1, Math.round(DEFAULT_RATE_SHARE * lowest));
            rateSource = String.format(Locale.ROOT, "%.0f%% of the lowest closed-loop throughput, %.0f req/s",
                    DEFAULT_RATE_SHARE * 100, lowest);
        }

        // 3. open loop: latency at one rate for all
        if (openDuration == null) {
            long seconds = (long) Math.ceil(OPEN_SAMPLES / openRate);
            openDuration = Duration.ofSeconds(Math.max(MIN_OPEN_DURATION_SECONDS,
                    Math.min(MAX_OPEN_DURATION_SECONDS, seconds)));
        }
        List<DemoRow> rows = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String config = names.get(i);
            progress("[3/3] open loop %d/%d: %s, %.0f req/s, %s + %s", i + 1, names.size(), config, openRate,
                    Durations.format(warmup), openDuration == null ? "up to " + MAX_OPEN_DURATION_SECONDS
                        + "s: enough requests for p99.9" : Durations.format(openDuration));
            server.switchTo(config);
            AtomicReference<DemoRow.Counters> counters = new AtomicReference<>();
            LoadResult r = measure(server, generator(base, path).rate(openRate).duration(openDuration), counters);
            LoadResult c = closed.get(config);
            progress("      %s: p99 %s ms, %d errors%s", config, r.percentileMillis(99) == null ? "n/a"
                    : String.format(Locale.ROOT, "%.2f", r.percentileMillis(99)), r.errors(),
                    Boolean.TRUE.equals(r.rateKept()) ? "" : " (rate not kept)");
            rows.add(new DemoRow(config, c.throughput(), c.requests(), c.errors(), openRate, r.achievedRate(),
                    r.requests(), r.errors(), Boolean.TRUE.equals(r.rateKept()),
                    LoadResult.percentileMillis(r.sendLag(), 99), r.percentileMillis(50),
                    r.percentileMillis(99), r.percentileMillis(99.9), r.maxMillis(), closedCounters.get(config),
                    counters.get()));
            if (c.errors() > 0) {
                problems.add(config + ": closed loop: " + c.errors() + " errors " + c.errorsByKind());
            }
            if (r.errors() > 0) {
                problems.add(config + ": open loop: " + r.errors() + " errors " + r.errorsByKind());
            }
        }

        boolean ok = problems.isEmpty();
        for (String line : DemoReport.table(rows)) {
            o.println(line);
        }
        o.println();
        DemoReport.Environment environment = new DemoReport.Environment(
                started.format(DateTimeFormatter.ISO_INSTANT), VersionProvider.version(), DemoReport.gitCommit(), names,
                fanout, size.label(), shards, records, server.ioThreads(),
                server.transport().name().toLowerCase(Locale.ROOT), users, warmup.toMillis() / 1000.0,
                duration.toMillis() / 1000.0, openDuration.toMillis() / 1000.0, openRate, rateSource, checkRequests);
        for (String line : DemoReport.legend(environment)) {
            o.println(line);
        }
        for (DemoRow r : rows) {
            if (!r.rateKept()) {
                o.printf(Locale.ROOT, "warning: %s: the generator did not keep its open-loop schedule (sent %.0f of "
                        + "%.0f req/s, p99 send lag %s ms): it shares the cores with the server, and its lateness "
                        + "counts in the latencies%n", r.configuration(), r.openAchieved(), r.openRate(),
                        r.sendLagP99() == null ? "n/a" : String.format(Locale.ROOT, "%.1f", r.sendLagP99()));
            }
        }
        o.println();
        try {
            DemoReport.write(out, environment, rows, ok);
            o.printf("report: %s (report.md, summary.json, environment.json, latency.png)%n", out);
        } catch (IOException e) {
            throw new CliException("cannot write the report to " + out + ": " + e.getMessage(), e);
        }
        if (ok) {
            o.printf("ok: every configuration gave byte-identical answers and no request failed%n");
        } else {
            o.println("FAILED: requests failed:");
            problems.forEach(p -> o.println("  " + p));
        }
        o.flush();
        if (!ok) {
            throw new CliException("some requests failed (see above)");
        }
        return DoubleFaceCli.EXIT_OK;
    }

    /** Phase 1: the same queries under every configuration, every body checked. */
    private boolean checkCorrectness(YcsbService service, FanoutServer server, URI base, List<String> names)
            throws InterruptedException {
        PrintWriter o = env.out();
        List<String> paths = new ArrayList<>(checkRequests);
        byte[][] expected = new byte[checkRequests][];
        Map<Long, byte[]> byKey = new HashMap<>();
        for (int i = 0; i < checkRequests; i++) {
            long key = (i * 7919L) % records; // a prime stride: every key before any repeats
            paths.add("/query?fanout=" + fanout + "&size=" + size.label() + "&key=" + key);
            expected[i] = byKey.computeIfAbsent(key, k -> expectedDigest(service, new YcsbQuery(fanout, size, k)));
        }
        byte[][] reference = null;
        int notIdentical = 0;
        boolean ok = true;
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String config = names.get(i);
            server.switchTo(config);
            DemoLoad.Result r = DemoLoad.run(base, paths, expected, Math.min(users, DEFAULT_USERS));
            progress("[1/3] correctness %d/%d: %s: %d queries, %d errors, %d wrong", i + 1, names.size(), config,
                    r.requests(), r.errors(), r.wrong());
            if (r.firstProblem() != null) {
                problems.add(config + ": " + r.errors() + " errors, " + r.wrong() + " wrong; first: " + r.firstProblem());
            }
            if (reference == null) {
                reference = r.digests();
            } else {
                for (int q = 0; q < checkRequests; q++) {
                    if (r.digests()[q] != null && reference[q] != null && !Arrays.equals(r.digests()[q], reference[q])) {
                        notIdentical++;
                    }
                }
            }
            ok &= r.errors() == 0 && r.wrong() == 0;
        }
        ok &= notIdentical == 0;
        if (ok) {
            o.printf("correctness: all %d queries answered 200 with byte-identical bodies under the %d configurations "
                    + "(equal to the bodies computed from the records)%n%n", checkRequests, names.size());
        } else {
            o.printf("FAILED correctness: wrong or failed responses (%d bodies differ between configurations)%n",
                    notIdentical);
            problems.forEach(p -> o.println("  " + p));
        }
        o.flush();
        return ok;
    }

    private LoadGenerator.Builder generator(URI base, String path) {
        return LoadGenerator.builder(base).mix(RequestMix.single(path)).keys(records).warmup(warmup)
                .duration(duration).transport(transport).seed(SEED).messages(env.err()).progress(false);
    }

    /**
     * Runs {@code b} and sets {@code counters} to the mid-tier's counter deltas from the end of the
     * warm-up (a snapshot taken {@code warmup} after the start) to the end of the run.
     */
    private LoadResult measure(FanoutServer server, LoadGenerator.Builder b,
            AtomicReference<DemoRow.Counters> counters) throws InterruptedException {
        LoadGenerator g = b.build();
        AtomicReference<Snapshot> atStart = new AtomicReference<>();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(Threads.platform("demo-ctr"));
        try {
            if (warmup.isZero()) {
                atStart.set(Snapshot.of(server));
            }
            ScheduledFuture<?> snap = timer.schedule(() -> atStart.compareAndSet(null, Snapshot.of(server)),
                    warmup.toNanos(), TimeUnit.NANOSECONDS);
            LoadResult r = g.run();
            Snapshot end = Snapshot.of(server);
            snap.cancel(false);
            Snapshot start = atStart.get() == null ? end : atStart.get();
            MidTierCounters d = end.counters().minus(start.counters());
            Set<String> groups = midTierThreadGroups(server);
            long switches = ThreadSwitches.available() ? end.threads().since(start.threads(),
                    name -> groups.contains(name) || name.startsWith(VIRTUAL_THREAD_CARRIERS)) : -1;
            counters.set(new DemoRow.Counters(d.iterations(), d.events(), switches, r.requests()));
            return r;
        } catch (LoadException e) {
            throw new CliException(e.getMessage(), e);
        } finally {
            timer.shutdownNow();
        }
    }

    /** The mid-tier's loop counters and every thread's context switches at one moment. */
    private record Snapshot(MidTierCounters counters, ThreadSwitches threads) {
        static Snapshot of(FanoutServer server) {
            return new Snapshot(MidTierCounters.of(server), ThreadSwitches.snapshot());
        }
    }

    /**
     * Thread-group names of the mid-tier, as {@link MidTierCounters} counts them: its loops (I/O
     * loops, the models' own loop groups) and the models' worker pools.
     */
    private static Set<String> midTierThreadGroups(FanoutServer server) {
        Set<String> names = new HashSet<>(WORKER_POOLS);
        for (LoopGroup lg : server.internals().loopGroups()) {
            names.add(lg.name());
        }
        return names;
    }

    private void progress(String format, Object... args) {
        env.err().println("demo: " + String.format(Locale.ROOT, format, args));
        env.err().flush();
    }

    /** SHA-256 of the body the service must answer {@code q} with ({@link YcsbReference}). */
    private byte[] expectedDigest(YcsbService service, YcsbQuery q) {
        MessageDigest sha = DemoLoad.sha256();
        return sha.digest(YcsbReference.body(service, shards, q));
    }
}
