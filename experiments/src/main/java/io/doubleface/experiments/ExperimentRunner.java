package io.doubleface.experiments;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs one experiment: starts the {@link Topology} (or uses a running mid-tier, {@link ExternalTopology}),
 * warms every configuration up, then runs every
 * point of the experiment for every configuration, interleaved (point 1: A B C …, point 2: A B C …;
 * odd repeats in reverse order), each run framed by two mid-tier samples, and writes the results
 * directory: {@code report.md}, {@code summary.json}, {@code environment.json}, the interval logs
 * ({@code intervals/run-NNNN.hlog}), process logs and PNG plots.
 */
public final class ExperimentRunner {

    /**
     * Everything a run needs; {@code null} lists mean "the experiment's default".
     *
     * @param external a running mid-tier to use instead of starting a leaf and mid-tiers, or
     *     {@code null}; with one, {@code shards} is its shard count and {@code midCpus},
     *     {@code ioThreads}, {@code driver}, {@code shardOptions}, {@code replyWorkMicros} are unused
     */
    public record Options(String experiment, boolean quick, Path outRoot, String driver, int shards, long records,
            int ioThreads, String midCpus, String auxCpus, Duration warmup, Duration duration, Duration globalWarmup,
            int repeats, List<String> configs, List<Integer> concurrency, List<Integer> fanouts, List<String> sizes,
            Integer replyWorkMicros, double loadFraction, String shardOptions, String externalShards,
            List<Double> loads, Path profile, String generator, String version, List<String> commandLine,
            ServiceSpec service, ExternalTopology external) {

        /** Options of a topology the runner starts itself. */
        public Options(String experiment, boolean quick, Path outRoot, String driver, int shards, long records,
                int ioThreads, String midCpus, String auxCpus, Duration warmup, Duration duration, Duration globalWarmup,
                int repeats, List<String> configs, List<Integer> concurrency, List<Integer> fanouts, List<String> sizes,
                Integer replyWorkMicros, double loadFraction, String shardOptions, String externalShards,
                List<Double> loads, Path profile, String generator, String version, List<String> commandLine,
                ServiceSpec service) {
            this(experiment, quick, outRoot, driver, shards, records, ioThreads, midCpus, auxCpus, warmup, duration,
                    globalWarmup, repeats, configs, concurrency, fanouts, sizes, replyWorkMicros, loadFraction,
                    shardOptions, externalShards, loads, profile, generator, version, commandLine, service, null);
        }

        /** Options of the YCSB service (the default). */
        public Options(String experiment, boolean quick, Path outRoot, String driver, int shards, long records,
                int ioThreads, String midCpus, String auxCpus, Duration warmup, Duration duration, Duration globalWarmup,
                int repeats, List<String> configs, List<Integer> concurrency, List<Integer> fanouts, List<String> sizes,
                Integer replyWorkMicros, double loadFraction, String shardOptions, String externalShards,
                List<Double> loads, Path profile, String generator, String version, List<String> commandLine) {
            this(experiment, quick, outRoot, driver, shards, records, ioThreads, midCpus, auxCpus, warmup, duration,
                    globalWarmup, repeats, configs, concurrency, fanouts, sizes, replyWorkMicros, loadFraction,
                    shardOptions, externalShards, loads, profile, generator, version, commandLine, ServiceSpec.YCSB);
        }
    }

    /**
     * One measured run; {@code adapter} is the mid-tier's {@code /admin/stats} "adapter" object
     * after the run when {@code config} is a load-adapter policy, else {@code null}.
     */
    record Row(Experiments.Point point, String config, int repeat, Topology.LoadRun load, MidTierSample.Delta mid,
            Map<String, Object> adapter) {
        Double get(String key) {
            return load.number(key);
        }
    }

    private ExperimentRunner() {}

    /** The configurations {@code train --configs all} profiles: μTune's taxonomy and DoubleFace (with busy-poll too). */
    public static List<String> taxonomy() {
        return Experiments.TAXONOMY;
    }

    /** The per-run warm-up of experiment {@code name} when {@code --warmup} does not say (3 s open loop, else 1 s). */
    public static Duration defaultWarmup(String name) {
        return Experiments.of(name).defaultWarmup();
    }

    /**
     * Checks a {@code --configs} entry, {@code NAME[+KNOB=VALUE…][@OPTIONS]}: a configuration or
     * load-adapter policy, run-time knobs ({@code +flush=POLICY}, {@code +pin=CPUS|off}) and shard-URI
     * options.
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    public static void checkConfig(String config) {
        Topology.check(config);
    }

    /**
     * Why {@code --configs} entry {@code config} cannot run on a running mid-tier ({@link ExternalTopology}),
     * or {@code null} if it can: a load-adapter policy, {@code @OPTIONS} and {@code +gc=} each need a
     * mid-tier process of their own.
     */
    public static String externalRefusal(String config) {
        return Topology.externalRefusal(config, true);
    }

    /** Names of the experiments, in help order. */
    public static List<String> names() {
        return Experiments.NAMES;
    }

    /**
     * Runs {@code o.experiment()} and returns the results directory.
     *
     * @throws IllegalArgumentException for options the experiment cannot use
     * @throws IOException if a process fails or a run goes wrong (the message says which)
     */
    public static Path run(Options o, PrintWriter out) throws IOException {
        Experiments.Experiment ex = Experiments.of(o.experiment());
        List<String> configs = o.configs() != null ? o.configs() : ex.defaultConfigs(o);
        if (o.external() != null) {
            out.println("experiment: " + o.external().serverLine());
            out.flush();
            checkExternal(ex, o, configs);
        }
        List<Experiments.Point> points = ex.points(o);
        String stamp = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC).format(Instant.now());
        Path dir = o.outRoot().resolve(o.experiment() + (o.quick() ? "-quick-" : "-") + stamp);
        Files.createDirectories(dir.resolve("logs"));
        Topology.Settings settings = new Topology.Settings(o.driver(), o.shards(), o.records(), o.ioThreads(),
                o.midCpus(), o.auxCpus(), List.of("-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"),
                List.of("-Xms512m", "-Xmx512m"), Duration.ofSeconds(5),
                o.replyWorkMicros() != null ? o.replyWorkMicros() : ex.defaultReplyWorkMicros(), "completion-first",
                configs.get(0), o.shardOptions(), ex.serveArgs(o, configs), o.externalShards(), ex.adapterArgs(o, configs),
                o.generator(), o.service(), o.external());
        int runs = points.size() * configs.size() * o.repeats();
        double perRun = o.warmup().toMillis() / 1000.0 + ex.runSeconds(o) + 1.0;
        if (!o.service().isYcsb()) {
            out.println("  service: " + o.service().name() + " (" + o.service().requests() + ")");
        }
        out.printf(Locale.ROOT, "experiment %s%s: %d configurations × %d points × %d repeats = %d runs, about %.0f min%n",
                o.experiment(), o.quick() ? " (quick)" : "", configs.size(), points.size(), o.repeats(), runs,
                (runs * perRun + configs.size() * o.globalWarmup().toSeconds() + 20) / 60);
        out.println("  configurations: " + String.join(", ", configs));
        out.println("  results: " + dir);
        out.flush();
        Instant started = Instant.now();
        List<Row> rows = new ArrayList<>();
        Map<String, Object> prepared;
        try (Topology t = Topology.start(settings, dir, out)) {
            writeEnvironment(dir, o, settings, configs, t);
            for (String c : configs) {
                t.switchTo(c);
                if (o.globalWarmup().isZero()) {
                    out.printf("experiment: no warm-up of %s (--global-warmup 0s)%n", c);
                    out.flush();
                    continue;
                }
                out.printf("experiment: warm-up %s (%s)%n", c, fmt(o.globalWarmup()));
                out.flush();
                t.load("warm-up " + c, List.of("--users", "16", "--url", Experiments.query(Experiments.fanout(o), "small"),
                        "--keys", Long.toString(o.records()), "--warmup", "0s", "--duration",
                        o.globalWarmup().toMillis() + "ms"), o.globalWarmup().plusSeconds(60));
            }
            prepared = ex.prepare(t, o, out);
            int done = 0;
            for (int rep = 0; rep < o.repeats(); rep++) {
                for (Experiments.Point p : points) {
                    List<String> order = new ArrayList<>(configs);
                    if (rep % 2 == 1) {
                        java.util.Collections.reverse(order);
                    }
                    for (String c : order) {
                        t.switchTo(c);
                        List<String> args = new ArrayList<>(ex.loadArgs(p, c, prepared));
                        long runMillis = Math.round(ex.runSeconds(o, p, prepared) * 1000);
                        args.addAll(List.of("--keys", Long.toString(o.records()), "--warmup",
                                o.warmup().toMillis() + "ms", "--duration", runMillis + "ms"));
                        MidTierSample[] before = {ex.sampleAfterWarmup() ? null : t.sample()};
                        Topology.LoadRun lr = t.load(p.label() + " " + c, args,
                                o.warmup().plus(Duration.ofMillis(runMillis)).plusSeconds(60),
                                ex.sampleAfterWarmup() ? () -> before[0] = t.sample() : null);
                        if (before[0] == null) {
                            throw new IOException(p.label() + " " + c + ": the load generator never reached its "
                                    + "measured part (no --measure-file)");
                        }
                        MidTierSample after = t.sample();
                        Map<String, Object> adapter = null;
                        Map<String, Object> stats = Topology.isAdapter(c) ? t.adminStats() : Map.of();
                        if (stats.get("adapter") instanceof Map<?, ?> a) {
                            @SuppressWarnings("unchecked")
                            Map<String, Object> am = new java.util.LinkedHashMap<>((Map<String, Object>) a);
                            am.put("active", stats.get("config")); // where it ended (its start, without switches)
                            adapter = am;
                        }
                        Row r = new Row(p, c, rep, lr, MidTierSample.delta(before[0], after), adapter);
                        rows.add(r);
                        done++;
                        out.printf(Locale.ROOT, "[%3d/%d] %-28s %-22s %9s req/s  p50 %s  p99 %s  errors %d  cs/req %s%n",
                                done, runs, p.label(), c, num(r.get("throughput_rps")), ms(r.get("p50_ms")),
                                ms(r.get("p99_ms")), r.get("errors") == null ? 0 : r.get("errors").longValue(),
                                twoDec(r.mid().switchesPerRequest()));
                        out.flush();
                    }
                }
            }
            writeEnvironment(dir, o, settings, configs, t); // again: with every mid-tier's shard URI
        }
        Duration took = Duration.between(started, Instant.now());
        Report report = new Report(dir, o, configs, rows, prepared, took);
        ex.report(report);
        report.write(ex);
        out.printf("experiment %s: done in %s; report %s%n", o.experiment(), fmt(took), dir.resolve("report.md"));
        out.flush();
        return dir;
    }

    /**
     * Packs the raw files of a finished results directory into {@code raw.tar.xz} and its interval
     * logs into {@code intervals.tar.xz} (the rule of {@code bench/results-pack.py}); the report,
     * summary, environment and plots stay files.
     *
     * @return what was packed, one line
     * @throws IOException if {@code tar} fails (the files are left as they are)
     */
    public static String packRaw(Path dir) throws IOException {
        return RawArchive.pack(dir);
    }

    /**
     * Refuses what cannot run on an external mid-tier: an experiment that needs a mid-tier process of
     * its own ({@link Experiments.Experiment#externalRefusal}), a configuration that does
     * ({@link Topology#externalRefusal}), a fanout above the mid-tier's shard count.
     *
     * @throws IllegalArgumentException saying which and why
     */
    private static void checkExternal(Experiments.Experiment ex, Options o, List<String> configs) {
        ExternalTopology e = o.external();
        String why = ex.externalRefusal(e);
        if (why != null) {
            throw new IllegalArgumentException(o.experiment() + " --midtier: " + why);
        }
        for (String c : configs) {
            why = Topology.externalRefusal(c, e.knobsAtStart() != null);
            if (why != null) {
                throw new IllegalArgumentException("--midtier: " + why + (o.configs() == null ? " (a default "
                        + "configuration of " + o.experiment() + "; give --configs)" : ""));
            }
        }
        if (o.service().isYcsb() && e.shards() > 0) {
            for (Experiments.Point p : ex.points(o)) {
                if (p.params().get("fanout") instanceof Number f && f.intValue() > e.shards()) {
                    String backend = e.fanoutBackend();
                    throw new IllegalArgumentException("--midtier: fanout " + f + " (point " + p.label() + ") is more "
                            + "than the mid-tier's " + e.shards() + " shards" + (backend == null ? "" : " (backend "
                            + backend + ")") + "; give --fanouts up to " + e.shards());
                }
            }
        }
    }

    private static void writeEnvironment(Path dir, Options o, Topology.Settings s, List<String> configs, Topology t)
            throws IOException {
        Map<String, Object> env = new LinkedHashMap<>();
        env.put("experiment", o.experiment());
        env.put("quick", o.quick());
        env.put("service", o.service().name());
        if (!o.service().isYcsb()) {
            env.put("service_requests", o.service().requests());
        }
        env.put("date", Instant.now().toString());
        env.put("doubleface_version", o.version());
        env.put("git_commit", git("rev-parse", "HEAD"));
        env.put("git_dirty", !git("status", "--porcelain", "--untracked-files=no").isEmpty());
        env.put("command_line", String.join(" ", o.commandLine()));
        env.put("jdk", System.getProperty("java.vm.vendor") + " " + System.getProperty("java.runtime.version"));
        env.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        env.put("cpus", Runtime.getRuntime().availableProcessors());
        env.put("cpu_model", cpuModel());
        boolean ext = t.isExternal();
        if (ext) {
            // nothing of the mid-tier or its shards is this runner's: what the server said of itself instead
            env.put("topology", t.external().describe());
            env.put("pinning", Map.of("mid_tier", "external: not pinned by the runner", "load_generator",
                    s.auxCpus() == null ? "not pinned" : "taskset -c " + s.auxCpus()));
        } else {
            env.put("topology", "spawned: leaf and mid-tier processes of this runner, loopback");
            env.put("pinning", Map.of("mid_tier", s.midCpus() == null ? "not pinned" : "taskset -c " + s.midCpus(),
                    "leaf_and_load_generator", s.auxCpus() == null ? "not pinned" : "taskset -c " + s.auxCpus()));
            env.put("driver", s.driver());
            env.put("shards", t.shardUris().size() == 1 ? t.shardUris().get(0) : t.shardUris());
        }
        env.put("records", s.records());
        if (!ext) {
            env.put("io_threads", s.ioThreads());
            env.put("reply_work_us", s.replyWorkMicros());
            env.put("deadline_ms", s.deadline().toMillis());
        }
        env.put("configurations", configs);
        env.put("repeats", o.repeats());
        env.put("warmup_global_per_configuration_s", o.globalWarmup().toMillis() / 1000.0);
        env.put("warmup_per_run_s", o.warmup().toMillis() / 1000.0);
        if (!ext) {
            env.put("jvm_mid_tier", s.midJvm());
        }
        env.put(ext ? "jvm_load" : "jvm_leaf_and_load", s.auxJvm());
        env.put("jvm_load_open_loop_extra", Topology.OPEN_LOOP_JIT);
        env.put("load_generator", loadGenerator(o));
        Files.writeString(dir.resolve("environment.json"), Json.write(env), StandardCharsets.UTF_8);
    }

    private static String loadGenerator(Options o) {
        return "doubleface load " + o.version() + " (one event loop, HdrHistogram, latency from the "
                + "intended send time in open loop)" + ("wrk".equals(o.generator()) ? "; closed-loop runs: " + wrkVersion()
                        + " -t1 (one thread), --latency" : "");
    }

    private static String wrkVersion() {
        try {
            Process p = new ProcessBuilder("wrk", "-v").redirectErrorStream(true).start();
            String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            p.waitFor();
            return s.lines().findFirst().orElse("wrk");
        } catch (IOException e) {
            return "wrk";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "wrk";
        }
    }

    private static String cpuModel() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (l.startsWith("model name")) {
                    return l.substring(l.indexOf(':') + 1).strip();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return "unknown";
    }

    static String git(String... args) {
        List<String> cmd = new ArrayList<>(List.of("git"));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return p.waitFor() == 0 ? s : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    static String fmt(Duration d) {
        long s = d.toSeconds();
        return s >= 60 ? String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60)
                : String.format(Locale.ROOT, "%.1fs", d.toMillis() / 1000.0);
    }

    static String num(Double v) {
        return v == null ? "n/a" : String.format(Locale.ROOT, "%.0f", v);
    }

    static String ms(Double v) {
        return v == null ? "n/a" : String.format(Locale.ROOT, "%.2f ms", v);
    }

    static String twoDec(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
    }
}
