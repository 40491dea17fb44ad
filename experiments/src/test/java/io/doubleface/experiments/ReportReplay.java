package io.doubleface.experiments;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Renders the report of a finished results directory again, from what it keeps: the runs of its
 * {@code summary.json} (each run's load summary, mid-tier delta and adapter object), its
 * {@code environment.json} and command line, and its interval logs. The mid-tier deltas come back
 * from their rounded JSON, so the tables can differ from the committed {@code report.md} in the
 * last digit; the point is the same input for two versions of the report code.
 *
 * <p>{@code main(RUN_DIR, OUT_DIR)} writes {@code OUT_DIR/report.md}, {@code summary.json} and the
 * plots: how the report split was checked byte for byte on committed runs.
 */
final class ReportReplay {

    private ReportReplay() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: ReportReplay RUN_DIR OUT_DIR");
        }
        render(Path.of(args[0]), Path.of(args[1]));
    }

    /** Renders {@code run}'s report into {@code out} (created). */
    static void render(Path run, Path out) throws IOException {
        Map<String, Object> env = MiniJson.object(Files.readString(run.resolve("environment.json")));
        Map<String, Object> summary = MiniJson.object(Files.readString(run.resolve("summary.json")));
        ExperimentRunner.Options o = options(env, summary);
        @SuppressWarnings("unchecked")
        List<String> configs = (List<String>) summary.get("configurations");
        @SuppressWarnings("unchecked")
        Map<String, Object> prepared = (Map<String, Object>) summary.get("prepared");
        Files.createDirectories(out);
        if (Files.isDirectory(run.resolve("intervals")) && !Files.exists(out.resolve("intervals"))) {
            Files.createSymbolicLink(out.resolve("intervals"), run.resolve("intervals").toAbsolutePath());
        }
        Map<String, Experiments.Point> points = new LinkedHashMap<>();
        List<ExperimentRunner.Row> rows = new ArrayList<>();
        for (Map<String, Object> r : MiniJson.objects(summary, "runs")) {
            String label = (String) r.get("point");
            @SuppressWarnings("unchecked")
            Map<String, Object> params = (Map<String, Object>) r.get("params");
            Experiments.Point p = points.computeIfAbsent(label, l -> new Experiments.Point(l, params, x -> List.of()));
            Object log = r.get("interval_log");
            Path hlog = out.resolve(log == null ? "intervals/absent.hlog" : (String) log);
            @SuppressWarnings("unchecked")
            Map<String, Object> load = (Map<String, Object>) r.get("load");
            @SuppressWarnings("unchecked")
            Map<String, Object> adapter = (Map<String, Object>) r.get("adapter");
            rows.add(new ExperimentRunner.Row(p, (String) r.get("config"), ((Number) r.get("repeat")).intValue(),
                    new Topology.LoadRun(label, hlog, load), delta(MiniJson.path(r, "mid_tier").asMap()), adapter));
        }
        Experiments.Experiment ex = Experiments.of(o.experiment());
        Report report = new Report(out, o, configs, rows, prepared, took(run));
        ex.report(report);
        report.write(ex);
    }

    /** The options the run was made with, as far as its environment and command line say. */
    private static ExperimentRunner.Options options(Map<String, Object> env, Map<String, Object> summary) {
        String cmd = (String) env.get("command_line");
        List<String> words = Arrays.asList(cmd.split(" "));
        String name = (String) env.get("experiment");
        boolean quick = Boolean.TRUE.equals(env.get("quick"));
        Map<?, ?> pin = (Map<?, ?>) env.get("pinning");
        String loads = arg(words, "--loads");
        List<Double> loadList = loads == null ? null : Arrays.stream(loads.split(",")).map(Double::valueOf).toList();
        String service = env.get("service") == null ? "ycsb" : (String) env.get("service");
        return new ExperimentRunner.Options(name, quick, Path.of("."), (String) env.get("driver"),
                Integer.parseInt(or(arg(words, "--shards"), "20")), ((Number) env.get("records")).longValue(),
                ((Number) env.get("io_threads")).intValue(), cpus(pin.get("mid_tier")),
                cpus(pin.get("leaf_and_load_generator")),
                Duration.ofMillis(Math.round(((Number) env.get("warmup_per_run_s")).doubleValue() * 1000)),
                duration(arg(words, "--duration")),
                Duration.ofMillis(Math.round(((Number) env.get("warmup_global_per_configuration_s")).doubleValue() * 1000)),
                ((Number) summary.get("repeats")).intValue(), null, null, null, null, null,
                Double.parseDouble(or(arg(words, "--load-fraction"), "0.75")), null, null, loadList, null,
                or(arg(words, "--generator"), "java"), (String) env.get("doubleface_version"), words,
                ServiceSpec.of(service));
    }

    private static String cpus(Object pinning) {
        String s = String.valueOf(pinning);
        return s.startsWith("taskset -c ") ? s.substring("taskset -c ".length()) : null;
    }

    private static String arg(List<String> words, String name) {
        int i = words.indexOf(name);
        return i < 0 || i + 1 >= words.size() ? null : words.get(i + 1);
    }

    private static String or(String v, String dflt) {
        return v == null ? dflt : v;
    }

    private static Duration duration(String s) {
        if (s == null) {
            return null;
        }
        return s.endsWith("ms") ? Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)))
                : s.endsWith("s") ? Duration.ofMillis(Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 1000))
                : Duration.parse(s);
    }

    /** The run time the committed report's head states ("took 9m30s"), else zero. */
    private static Duration took(Path run) throws IOException {
        Path md = run.resolve("report.md");
        if (!Files.exists(md)) {
            return Duration.ZERO;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("took (?:(\\d+)m(\\d+)s|([0-9.]+)s)")
                .matcher(Files.readString(md, StandardCharsets.UTF_8));
        if (!m.find()) {
            return Duration.ZERO;
        }
        return m.group(1) != null ? Duration.ofSeconds(Long.parseLong(m.group(1)) * 60 + Long.parseLong(m.group(2)))
                : Duration.ofMillis(Math.round(Double.parseDouble(m.group(3)) * 1000));
    }

    /** A mid-tier delta back from its JSON (rounded seconds; tail replies from the rounded ratio). */
    private static MidTierSample.Delta delta(Map<String, Object> m) {
        Map<String, long[]> loops = new TreeMap<>();
        MiniJson.path(m, "loops").asMap().forEach((group, v) -> {
            Map<?, ?> g = (Map<?, ?>) v;
            long batches = g.get("tail_batches") instanceof Number n ? n.longValue() : 0;
            double perBatch = g.get("replies_per_tail_batch") instanceof Number n ? n.doubleValue() : 0;
            loops.put(group, new long[] {lng(g.get("iterations")), lng(g.get("wakeups")), lng(g.get("events")), batches,
                Math.round(batches * perBatch)});
        });
        Map<String, long[]> threads = new TreeMap<>();
        MiniJson.path(m, "threads").asMap().forEach((group, v) -> {
            Map<?, ?> g = (Map<?, ?>) v;
            threads.put(group, new long[] {lng(g.get("active_threads")), lng(g.get("context_switches")),
                lng(g.get("cpu_ms"))});
        });
        Map<String, Map<String, MidTierSample.Stage>> stages = new TreeMap<>();
        if (m.get("stages") instanceof Map<?, ?> st) {
            st.forEach((config, byStage) -> ((Map<?, ?>) byStage).forEach((stage, x) -> {
                Map<?, ?> s = (Map<?, ?>) x;
                stages.computeIfAbsent((String) config, k -> new java.util.LinkedHashMap<>()).put((String) stage,
                        new MidTierSample.Stage(lng(s.get("count")), ((Number) s.get("sum_us")).doubleValue(),
                                ((Number) s.get("sum_sq_us2")).doubleValue()));
            }));
        }
        return new MidTierSample.Delta(((Number) m.get("seconds")).doubleValue(), lng(m.get("requests")), loops, threads,
                lng(m.get("context_switches")), lng(m.get("cpu_ms")), (int) lng(m.get("active_threads")), stages);
    }

    private static long lng(Object v) {
        return v instanceof Number n ? n.longValue() : 0;
    }
}
