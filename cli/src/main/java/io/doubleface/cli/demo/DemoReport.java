package io.doubleface.cli.demo;

import io.doubleface.experiments.Charts;
import io.doubleface.experiments.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The demo's outputs: the comparison table (for stdout and {@code report.md}) and the report
 * directory: {@code report.md}, {@code summary.json}, {@code environment.json},
 * {@code latency.png}. Stateless; any thread.
 */
public final class DemoReport {

    /** What the numbers are and are not, printed with the table and in the report. */
    public static final String SAME_PROCESS = "same process, shared cores; for pinned, separate-process measurements "
            + "see bench/ and docs/benchmarks.md";

    /** File names in the report directory. */
    public static final String REPORT = "report.md";
    public static final String SUMMARY = "summary.json";
    public static final String ENVIRONMENT = "environment.json";
    public static final String PLOT = "latency.png";

    private DemoReport() {}

    /**
     * The demo's settings and environment, recorded in {@code environment.json} (docs/measuring.md#the-environment-file).
     *
     * @param timestamp UTC start time, ISO-8601
     * @param version the project's version
     * @param gitCommit the commit (with {@code -dirty} if the tree has changes), or {@code null}
     * @param configurations canonical names, in run order
     * @param rateSource how the open-loop rate was chosen
     */
    public record Environment(String timestamp, String version, String gitCommit, List<String> configurations,
            int fanout, String size, int shards, int records, int ioThreads, String transport, int users,
            double warmupSeconds, double durationSeconds, double openDurationSeconds, double openRate,
            String rateSource, int checkRequests) {

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("tool", "doubleface demo");
            m.put("timestamp_utc", timestamp);
            m.put("version", version);
            m.put("git_commit", gitCommit);
            m.put("jdk", System.getProperty("java.vm.name") + " " + Runtime.version() + " ("
                    + System.getProperty("java.vendor") + ")");
            m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                    + System.getProperty("os.arch"));
            m.put("cpus", Runtime.getRuntime().availableProcessors());
            m.put("max_heap_mb", Runtime.getRuntime().maxMemory() / (1024 * 1024));
            m.put("pinning", "none: KV leaf, mid-tier and load generator share one process and all cores");
            m.put("topology", "embedded KV leaf (" + shards + " shards, " + records + " records each) + YCSB mid-tier ("
                    + ioThreads + " I/O loops, " + transport + "), load generator in the same JVM (1 event loop)");
            m.put("configurations", configurations);
            m.put("request", "GET /query?fanout=" + fanout + "&size=" + size + "&key={key}, key uniform in 0.." + (records - 1));
            m.put("fanout", fanout);
            m.put("size", size);
            m.put("correctness_requests_per_configuration", checkRequests);
            m.put("closed_loop_users", users);
            m.put("warmup_s", warmupSeconds);
            m.put("closed_loop_duration_s", durationSeconds);
            m.put("open_loop_duration_s", openDurationSeconds);
            m.put("open_loop_rate_rps", openRate);
            m.put("open_loop_rate_source", rateSource);
            m.put("load_generator", "doubleface loadgen (in-process), HdrHistogram 3 digits, 1 s intervals");
            return m;
        }
    }

    /** The table header and one line per row. */
    public static List<String> table(List<DemoRow> rows) {
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "%-16s %11s %10s %8s %8s %8s %11s %14s", "configuration", "closed req/s",
                "open req/s", "p50 ms", "p99 ms", "p99.9 ms", "events/wake", "ctx-sw/request"));
        for (DemoRow r : rows) {
            lines.add(String.format(Locale.ROOT, "%-16s %11.0f %10.0f %8s %8s %8s %11.2f %14s", r.configuration(),
                    r.closedThroughput(), r.openRate(), ms(r.p50()), ms(r.p99()), ms(r.p999()),
                    r.openCounters().eventsPerWakeup(), perRequest(r.openCounters().switchesPerRequest())));
        }
        return lines;
    }

    /** The legend under the table. */
    public static List<String> legend(Environment env) {
        return List.of(
                String.format(Locale.ROOT, "closed req/s: closed loop, %d users, zero think time (capacity).", env.users()),
                String.format(Locale.ROOT, "open req/s, p50/p99/p99.9: open loop at %.0f req/s (%s), Poisson arrivals,",
                        env.openRate(), env.rateSource()),
                "  latency from the intended send time; n/a: fewer than 100/(1-p) samples (p99: 10,000; p99.9: 100,000).",
                "events/wake: I/O events per event-loop wake-up (iteration) of the mid-tier's loops; ctx-sw/request:",
                "  context switches (from /proc) of the mid-tier's threads per request; both over the open-loop run.",
                "Measured in the " + SAME_PROCESS + ".");
    }

    /** Writes report.md, summary.json, environment.json and latency.png into {@code dir} (created). */
    public static void write(Path dir, Environment env, List<DemoRow> rows, boolean ok) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(SUMMARY), Json.write(summary(env, rows, ok)), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(ENVIRONMENT), Json.write(env.toMap()), StandardCharsets.UTF_8);
        plot(rows, String.format(Locale.ROOT, "doubleface demo: open-loop latency at %.0f req/s, fanout %d, %s replies",
                env.openRate(), env.fanout(), env.size()), dir.resolve(PLOT));
        Files.writeString(dir.resolve(REPORT), markdown(env, rows, ok), StandardCharsets.UTF_8);
    }

    /**
     * p50, p99 and p99.9 of each configuration as dots on a log scale (they differ by orders of magnitude);
     * none where there were too few samples for the percentile.
     */
    static void plot(List<DemoRow> rows, String title, Path file) throws IOException {
        Map<String, List<Double>> series = new LinkedHashMap<>();
        series.put("p50", rows.stream().map(DemoRow::p50).toList());
        series.put("p99", rows.stream().map(DemoRow::p99).toList());
        series.put("p99.9", rows.stream().map(DemoRow::p999).toList());
        Charts.dots(file, title, "latency from intended send time (ms, log scale)", true,
                rows.stream().map(DemoRow::configuration).toList(), series);
    }

    static Map<String, Object> summary(Environment env, List<DemoRow> rows, boolean ok) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", ok);
        m.put("open_loop_rate_rps", env.openRate());
        m.put("warmup_s", env.warmupSeconds());
        m.put("closed_loop_duration_s", env.durationSeconds());
        m.put("open_loop_duration_s", env.openDurationSeconds());
        List<Object> list = new ArrayList<>();
        for (DemoRow r : rows) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("configuration", r.configuration());
            e.put("closed_loop_users", env.users());
            e.put("throughput_rps", r.closedThroughput());
            e.put("closed_loop_requests", r.closedRequests());
            e.put("closed_loop_errors", r.closedErrors());
            e.put("open_loop_rate_rps", r.openRate());
            e.put("open_loop_achieved_rps", r.openAchieved());
            e.put("open_loop_rate_kept", r.rateKept());
            e.put("open_loop_send_lag_p99_ms", r.sendLagP99());
            e.put("open_loop_requests", r.openRequests());
            e.put("open_loop_errors", r.openErrors());
            e.put("p50_ms", r.p50());
            e.put("p99_ms", r.p99());
            e.put("p999_ms", r.p999());
            e.put("max_ms", r.max());
            e.put("events_per_wakeup", r.openCounters().eventsPerWakeup());
            e.put("ctx_switches_per_request", r.openCounters().switchesPerRequest());
            e.put("closed_loop_counters", counters(r.closedCounters()));
            e.put("open_loop_counters", counters(r.openCounters()));
            list.add(e);
        }
        m.put("configurations", list);
        return m;
    }

    private static Map<String, Object> counters(DemoRow.Counters c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("wakeups", c.iterations());
        m.put("events", c.events());
        m.put("events_per_wakeup", c.eventsPerWakeup());
        m.put("context_switches", c.contextSwitches() < 0 ? null : c.contextSwitches());
        m.put("ctx_switches_per_request", c.switchesPerRequest());
        m.put("requests", c.requests());
        return m;
    }

    static String markdown(Environment env, List<DemoRow> rows, boolean ok) {
        StringBuilder b = new StringBuilder();
        b.append("# doubleface demo, ").append(env.timestamp()).append("\n\n");
        b.append(ok ? "Correctness: every configuration answered the same " + env.checkRequests()
                + " queries with byte-identical bodies, equal to the ones computed from the records.\n\n"
                : "**FAILED**: wrong bodies or errors (see the command's output).\n\n");
        b.append("| configuration | closed-loop req/s | open-loop req/s | p50 ms | p99 ms | p99.9 ms | events/wake-up "
                + "| ctx-sw/request |\n");
        b.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (DemoRow r : rows) {
            b.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f%s | %s | %s | %s | %.2f | %s |%n", r.configuration(),
                    r.closedThroughput(), r.openRate(), r.rateKept() ? "" : " (rate not kept)", ms(r.p50()),
                    ms(r.p99()), ms(r.p999()), r.openCounters().eventsPerWakeup(),
                    perRequest(r.openCounters().switchesPerRequest())));
        }
        b.append("\n![open-loop latency per configuration](").append(PLOT).append(")\n\n");
        b.append("## Method\n\n");
        b.append(String.format(Locale.ROOT, "1. One JVM: an embedded KV leaf (%d shards), the YCSB mid-tier (%d I/O loops, "
                + "%s) and the load generator — %s.%n", env.shards(), env.ioThreads(), env.transport(), SAME_PROCESS));
        b.append(String.format(Locale.ROOT, "2. The running server is switched through the configurations; first %d "
                + "checked queries each (bodies byte-identical across configurations and to the reference).%n",
                env.checkRequests()));
        b.append(String.format(Locale.ROOT, "3. Closed loop per configuration: %d users, zero think time, %.0f s "
                + "warm-up + %.0f s measured → capacity (req/s).%n", env.users(), env.warmupSeconds(),
                env.durationSeconds()));
        b.append(String.format(Locale.ROOT, "4. Open loop per configuration at %.0f req/s (%s), Poisson arrivals, "
                + "%.0f s warm-up + %.0f s; latency from the intended send time (HdrHistogram; n/a below 100/(1-p) "
                + "samples).%n", env.openRate(), env.rateSource(), env.warmupSeconds(), env.openDurationSeconds()));
        b.append("5. events/wake-up and ctx-sw/request are deltas of the mid-tier's loop counters and of its threads' "
                + "context switches (/proc) over the open-loop run (closed-loop deltas in summary.json). "
                + "A short tour, not interleaved repetitions: see docs/measuring.md before quoting a number.\n\n");
        b.append("## Environment\n\n```json\n").append(Json.write(env.toMap())).append("```\n");
        return b.toString();
    }

    /** The git commit of the working directory ({@code -dirty} if modified), or {@code null}. */
    public static String gitCommit() {
        String head = git("rev-parse", "HEAD");
        if (head == null || head.isBlank()) {
            return null;
        }
        String status = git("status", "--porcelain", "--untracked-files=no");
        return head.strip() + (status != null && !status.isBlank() ? "-dirty" : "");
    }

    private static String git(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add("git");
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(false)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(5, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroy();
                return null;
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    static String ms(Double v) {
        return v == null ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String perRequest(Double v) {
        return v == null ? "-" : String.format(Locale.ROOT, "%.1f", v);
    }
}
