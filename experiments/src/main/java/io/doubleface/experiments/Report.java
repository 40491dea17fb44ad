package io.doubleface.experiments;

import static io.doubleface.experiments.Markdown.cell;
import static io.doubleface.experiments.Markdown.median;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

/**
 * The results of one experiment: its runs, selected by point and configuration, and what every
 * experiment's report is made of: tables over points × configurations, plots, the interval logs
 * and adapter switch logs of the runs; {@link #write} writes {@code report.md}, {@code summary.json}
 * and the plots. Each experiment's own tables are in its class ({@link Experiments.Experiment#report}).
 * Aggregation over repeats: the median, with the min–max spread when there is more than one
 * ({@link Markdown#cell}).
 */
final class Report {

    private final Path dir;
    private final ExperimentRunner.Options options;
    private final List<String> configs;
    private final List<ExperimentRunner.Row> rows;
    private final Map<String, Object> prepared;
    private final Duration took;
    private final Markdown md = new Markdown();
    private final Map<String, Object> derived = new LinkedHashMap<>();
    private final List<String> plots = new ArrayList<>();

    Report(Path dir, ExperimentRunner.Options options, List<String> configs, List<ExperimentRunner.Row> rows,
            Map<String, Object> prepared, Duration took) {
        this.dir = dir;
        this.options = options;
        this.configs = configs;
        this.rows = rows;
        this.prepared = prepared;
        this.took = took;
    }

    Path dir() {
        return dir;
    }

    ExperimentRunner.Options options() {
        return options;
    }

    List<String> configs() {
        return configs;
    }

    /** What the experiment measured before its points ({@link Experiments.Experiment#prepare}). */
    Map<String, Object> prepared() {
        return prepared;
    }

    /** Puts {@code value} under {@code key} in {@code summary.json}'s {@code results}. */
    void result(String key, Object value) {
        derived.put(key, value);
    }

    // ---- selection -------------------------------------------------------------------------

    /**
     * The configuration to normalize to: {@code name} if it was run, else the first configuration
     * whose {@link Topology#configOf} is {@code name} (e.g. {@code doubleface@transport=loop}),
     * else the first configuration.
     */
    String reference(String name) {
        if (configs.contains(name)) {
            return name;
        }
        for (String c : configs) {
            if (Topology.configOf(c).equals(name)) {
                return c;
            }
        }
        return configs.get(0);
    }

    /** The distinct values of a point parameter, in run order. */
    List<String> distinct(String param) {
        LinkedHashSet<String> s = new LinkedHashSet<>();
        for (ExperimentRunner.Row r : rows) {
            Object v = r.point().params().get(param);
            if (v != null) {
                s.add(String.valueOf(v));
            }
        }
        return new ArrayList<>(s);
    }

    /** The distinct points matching {@code p}, in run order. */
    List<Experiments.Point> points(Predicate<Experiments.Point> p) {
        LinkedHashMap<String, Experiments.Point> m = new LinkedHashMap<>();
        for (ExperimentRunner.Row r : rows) {
            if (p.test(r.point())) {
                m.putIfAbsent(r.point().label(), r.point());
            }
        }
        return new ArrayList<>(m.values());
    }

    List<ExperimentRunner.Row> rows(Experiments.Point p, String config) {
        List<ExperimentRunner.Row> out = new ArrayList<>();
        for (ExperimentRunner.Row r : rows) {
            if (r.point().label().equals(p.label()) && r.config().equals(config)) {
                out.add(r);
            }
        }
        return out;
    }

    /** Values of one load metric per repeat (NaN where missing). */
    double[] values(Experiments.Point p, String config, String key) {
        return rows(p, config).stream().mapToDouble(r -> r.get(key) == null ? Double.NaN : r.get(key)).toArray();
    }

    double[] midValues(Experiments.Point p, String config, ToDoubleFunction<MidTierSample.Delta> f) {
        return rows(p, config).stream().mapToDouble(r -> f.applyAsDouble(r.mid())).toArray();
    }

    /**
     * The regime point {@code p} ran in, per configuration (medians over repeats, with spreads):
     * events per wake-up and replies per tail batch of the I/O loops, and the load generator's
     * send lag p99 beside the run's p99. Completion-first ordering can only reorder a tail batch
     * that holds replies of several requests, and a generator that sends late measures its own
     * delay: the table tells a reader whether a run could have shown either effect. Also written
     * to {@code summary.json} under {@code regime <label>}.
     */
    void regime(Experiments.Point p, String label) {
        List<List<String>> body = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        double fewest = Double.NaN;
        for (String c : configs()) {
            double[] ev = midValues(p, c, d -> d.eventsPerWakeup("io"));
            double[] rb = midValues(p, c, d -> d.repliesPerTailBatch("io"));
            double[] lag = values(p, c, "send_lag_p99_ms");
            double[] p99 = values(p, c, "p99_ms");
            body.add(List.of(c, cell(ev, "%.2f"), cell(rb, "%.2f"), cell(lag, "%.2f"), cell(p99, "%.2f")));
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("events_per_wakeup", MidTierSample.round(median(ev)));
            d.put("replies_per_tail_batch", MidTierSample.round(median(rb)));
            d.put("send_lag_p99_ms", MidTierSample.round(median(lag)));
            out.put(c, d);
            double m = median(rb);
            if (!Double.isNaN(m) && (Double.isNaN(fewest) || m < fewest)) {
                fewest = m;
            }
        }
        md.heading("Regime of " + label + ": the I/O loops' batches and the generator's send lag (median over repeats)");
        md.table(List.of("configuration", "events per wake-up", "replies per tail batch", "send lag p99 (ms)", "p99 (ms)"),
                body);
        if (!Double.isNaN(fewest)) {
            md.text(fewest < 2
                    ? "Under 2 replies per tail batch: most batches hold one request's replies, so completion-first has "
                            + "little to reorder in this run.\n"
                    : "At least 2 replies per tail batch under every DoubleFace configuration: batches held replies of "
                            + "several requests to reorder.\n");
        }
        result("regime " + label, out);
    }

    // ---- markdown --------------------------------------------------------------------------

    void heading(String h) {
        md.heading(h);
    }

    void text(String t) {
        md.text(t);
    }

    void table(List<String> header, List<List<String>> body) {
        md.table(header, body);
    }

    /** Rows = points (labelled by {@code xParam}), columns = configurations, cells = median (spread) of {@code key}. */
    void metricTable(List<Experiments.Point> pts, String xParam, String key, String fmt) {
        tableOf(pts, xParam, (p, c) -> values(p, c, key), fmt, key);
    }

    void midTable(List<Experiments.Point> pts, String xParam, ToDoubleFunction<MidTierSample.Delta> f, String fmt) {
        tableOf(pts, xParam, (p, c) -> midValues(p, c, f), fmt, null);
    }

    private void tableOf(List<Experiments.Point> pts, String xParam,
            java.util.function.BiFunction<Experiments.Point, String, double[]> values, String fmt, String key) {
        List<String> header = new ArrayList<>(List.of(xParam));
        header.addAll(configs);
        List<List<String>> body = new ArrayList<>();
        for (Experiments.Point p : pts) {
            List<String> r = new ArrayList<>(List.of(String.valueOf(p.params().get(xParam))));
            Map<String, Object> d = new LinkedHashMap<>();
            for (String c : configs) {
                double[] v = values.apply(p, c);
                r.add(cell(v, fmt));
                d.put(c, MidTierSample.round(median(v)));
            }
            body.add(r);
            if (key != null) {
                @SuppressWarnings("unchecked")
                Map<String, Object> byPoint = (Map<String, Object>) derived.computeIfAbsent(key + "_median",
                        k -> new LinkedHashMap<String, Object>());
                byPoint.put(p.label(), d);
            }
        }
        table(header, body);
    }

    /** Per repeat, each configuration's {@code key} divided by {@code ref}'s in the same pass; median (spread). */
    void ratioTable(List<Experiments.Point> pts, String xParam, String key, String ref) {
        List<String> header = new ArrayList<>(List.of(xParam));
        for (String c : configs) {
            header.add(c + " / " + ref);
        }
        header.add(ref + " / best other");
        List<List<String>> body = new ArrayList<>();
        @SuppressWarnings("unchecked")
        Map<String, Object> out = (Map<String, Object>) derived.computeIfAbsent(key + "_relative_to_" + ref,
                k -> new LinkedHashMap<String, Object>());
        for (Experiments.Point p : pts) {
            List<String> r = new ArrayList<>(List.of(String.valueOf(p.params().get(xParam))));
            double[] refV = values(p, ref, key);
            Map<String, Object> d = new LinkedHashMap<>();
            double[] bestOther = new double[refV.length];
            Arrays.fill(bestOther, Double.NaN);
            for (String c : configs) {
                double[] v = values(p, c, key);
                double[] ratio = new double[Math.min(v.length, refV.length)];
                for (int i = 0; i < ratio.length; i++) {
                    ratio[i] = v[i] / refV[i];
                    if (!c.equals(ref) && (Double.isNaN(bestOther[i]) || v[i] > bestOther[i])) {
                        bestOther[i] = v[i];
                    }
                }
                r.add(cell(ratio, "%.2f"));
                d.put(c, MidTierSample.round(median(ratio)));
            }
            double[] win = new double[bestOther.length];
            for (int i = 0; i < win.length; i++) {
                win[i] = refV[i] / bestOther[i];
            }
            r.add("**" + cell(win, "%.2f") + "**");
            d.put(ref + "_over_best_other", MidTierSample.round(median(win)));
            out.put(p.label(), d);
            body.add(r);
        }
        table(header, body);
    }

    // ---- plots -----------------------------------------------------------------------------

    void plot(List<Experiments.Point> pts, String xParam, String key, boolean logX, boolean logY, String file,
            String title, String xLabel, String yLabel) throws IOException {
        LineChart ch = new LineChart(title, xLabel, yLabel);
        if (logX) {
            ch.logX();
        }
        if (logY) {
            ch.logY();
        }
        for (String c : configs) {
            for (Experiments.Point p : pts) {
                double m = median(values(p, c, key));
                ch.point(c, ((Number) p.params().get(xParam)).doubleValue(), Double.isNaN(m) ? null : m);
            }
        }
        chart(ch, file);
    }

    void ratioPlot(List<Experiments.Point> pts, String xParam, String key, String ref, String file, String title,
            String xLabel) throws IOException {
        LineChart ch = new LineChart(title, xLabel, "throughput / " + ref + "'s").logX();
        for (String c : configs) {
            for (Experiments.Point p : pts) {
                double[] v = values(p, c, key);
                double[] refV = values(p, ref, key);
                double[] ratio = new double[Math.min(v.length, refV.length)];
                for (int i = 0; i < ratio.length; i++) {
                    ratio[i] = v[i] / refV[i];
                }
                double m = median(ratio);
                ch.point(c, ((Number) p.params().get(xParam)).doubleValue(), Double.isNaN(m) ? null : m);
            }
        }
        chart(ch, file);
    }

    /** Writes {@code ch} to {@code file} in the results directory and shows it in the report, unless it is empty. */
    void chart(LineChart ch, String file) throws IOException {
        if (ch.isEmpty()) {
            return;
        }
        ch.write(dir.resolve(file));
        plots.add(file);
        md.image(file);
    }

    /** Writes a plot of any kind to {@code file} in the results directory with {@code w} and shows it in the report. */
    void plot(String file, PlotWriter w) throws IOException {
        w.write(dir.resolve(file));
        plots.add(file);
        md.image(file);
    }

    /** Writes one PNG. */
    @FunctionalInterface
    interface PlotWriter {
        void write(Path file) throws IOException;
    }

    /**
     * The {@code q}th percentile of {@code h} in ms, null below 100/(1-q/100) samples
     * (docs/measuring.md#samples-per-percentile).
     */
    static Double percentile(Histogram h, double q) {
        if (h.getTotalCount() < 100 / (1 - q / 100) - 1e-9) {
            return null; // docs/measuring.md#samples-per-percentile
        }
        return h.getValueAtPercentile(q) / 1000.0;
    }

    /** Every latency interval (not the send-lag ones) of {@code runs}' interval logs, merged. */
    static Histogram merged(List<ExperimentRunner.Row> runs) throws IOException {
        Histogram total = new Histogram(3);
        for (ExperimentRunner.Row r : runs) {
            try (HistogramLogReader reader = new HistogramLogReader(r.load().hlog().toFile())) {
                EncodableHistogram h;
                while ((h = reader.nextIntervalHistogram()) != null) {
                    if (h.getTag() == null && h instanceof Histogram hist) {
                        total.add(hist);
                    }
                }
            }
        }
        return total;
    }

    /** One interval of a run's log: seconds since the schedule began (after the run's warm-up). */
    record Interval(double at, double seconds, Histogram latency) {}

    List<Interval> intervals(ExperimentRunner.Row r) throws IOException {
        List<Interval> out = new ArrayList<>();
        double warm = options.warmup().toMillis() / 1000.0;
        try (HistogramLogReader reader = new HistogramLogReader(r.load().hlog().toFile())) {
            EncodableHistogram h;
            Double start = null;
            while ((h = reader.nextIntervalHistogram()) != null) {
                if (h.getTag() != null || !(h instanceof Histogram hist)) {
                    continue;
                }
                if (start == null) {
                    start = reader.getStartTimeSec();
                }
                double at = h.getStartTimeStamp() / 1000.0 - start - warm;
                out.add(new Interval(at, (h.getEndTimeStamp() - h.getStartTimeStamp()) / 1000.0, hist.copy()));
            }
        }
        return out;
    }

    /** Seconds since the schedule began of each adapter switch of {@code r}, with its target. */
    List<Map.Entry<Double, String>> adapterSwitches(ExperimentRunner.Row r, double logStartSec) {
        List<Map.Entry<Double, String>> out = new ArrayList<>();
        if (r.adapter() == null || !(r.adapter().get("switch_log") instanceof List<?> log)) {
            return out;
        }
        double warm = options.warmup().toMillis() / 1000.0;
        for (Object o : log) {
            if (o instanceof Map<?, ?> m && m.get("at") instanceof String at) {
                double t = java.time.Instant.parse(at).toEpochMilli() / 1000.0 - logStartSec - warm;
                out.add(Map.entry(t, String.valueOf(m.get("to"))));
            }
        }
        return out;
    }

    /** The start time (epoch seconds) of {@code r}'s interval log. */
    static double logStart(ExperimentRunner.Row r) throws IOException {
        try (HistogramLogReader reader = new HistogramLogReader(r.load().hlog().toFile())) {
            reader.nextIntervalHistogram();
            return reader.getStartTimeSec();
        }
    }

    /** The configuration an adapter had active at {@code t} (seconds since the schedule began). */
    static String activeAt(List<Map.Entry<Double, String>> switches, String initial, double t) {
        String c = initial;
        for (Map.Entry<Double, String> e : switches) {
            if (e.getKey() <= t) {
                c = e.getValue();
            }
        }
        return c;
    }

    /**
     * The configuration an adapter run started with: from its switch log, or, when it never
     * switched, the one active at the end ({@code start} in runs recorded before that was kept).
     */
    static String initialOf(ExperimentRunner.Row r) {
        if (r.adapter() != null && r.adapter().get("switch_log") instanceof List<?> log && !log.isEmpty()
                && log.get(0) instanceof Map<?, ?> m) {
            return String.valueOf(m.get("from"));
        }
        if (r.adapter() != null && r.adapter().get("active") instanceof String active) {
            return active;
        }
        return r.adapter() != null && r.adapter().get("choices") instanceof List<?> ch && !ch.isEmpty()
                ? "start" : "?";
    }

    /** Errors, requests and switches per configuration: nothing may be lost across switches. */
    void lostAndSwitches(Experiments.Point pt) throws IOException {
        heading("Requests, errors and adapter switches");
        List<List<String>> body = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        for (String c : configs) {
            double[] req = values(pt, c, "requests");
            double[] err = values(pt, c, "errors");
            double[] unf = values(pt, c, "unfinished");
            long switches = 0;
            double warm = options.warmup().toMillis() / 1000.0;
            for (ExperimentRunner.Row r : rows(pt, c)) {
                // the stats' switch log covers the mid-tier's life (warm-ups, earlier repeats):
                // count what happened from this run's generator start on
                if (r.adapter() != null) {
                    switches += adapterSwitches(r, logStart(r)).stream().filter(e -> e.getKey() >= -warm - 0.5).count();
                }
            }
            body.add(List.of(c, cell(req, "%.0f"), cell(err, "%.0f"), cell(unf, "%.0f"),
                    Topology.isAdapter(c) ? Long.toString(switches) : "-"));
            out.put(c, Experiments.params("requests", median(req), "errors", median(err), "unfinished", median(unf), "switches",
                    switches));
        }
        table(List.of("configuration", "answered", "errors", "unanswered at the end", "adapter switches (all repeats)"),
                body);
        derived.put("requests_errors_switches", out);
    }

    // ---- output ----------------------------------------------------------------------------

    void write(Experiments.Experiment ex) throws IOException {
        StringBuilder head = new StringBuilder();
        head.append("# ").append(ex.title()).append("\n\n");
        head.append(ex.description(options)).append("\n\n");
        head.append("- experiment `").append(options.experiment()).append(options.quick() ? " --quick" : "")
                .append("`, ").append(rows.size()).append(" runs, ").append(options.repeats())
                .append(" repeat(s) interleaved, took ").append(ExperimentRunner.fmt(took)).append('\n');
        head.append("- command: `").append(String.join(" ", options.commandLine())).append("`\n");
        head.append("- configurations: ").append(String.join(", ", configs)).append('\n');
        ServiceSpec service = options.service();
        if (options.external() != null) {
            head.append("- topology: ").append(options.external().summaryLine()).append("; load generator on CPUs ")
                    .append(options.auxCpus() == null ? "(not pinned)" : options.auxCpus())
                    .append(" of this machine; the server's own description in environment.json\n");
        } else {
            head.append("- topology: ").append(service == null || service.isYcsb()
                    ? options.driver() + " leaf (" + options.shards() + " shards, " + options.records() + " records)"
                    : service.name() + " leaves (" + options.shards() + ")").append(" and the load generator on CPUs ")
                    .append(options.auxCpus() == null ? "(not pinned)" : options.auxCpus()).append("; mid-tier (")
                    .append(options.ioThreads()).append(" I/O loop) on CPUs ")
                    .append(options.midCpus() == null ? "(not pinned)" : options.midCpus())
                    .append("; separate JVMs, loopback\n");
        }
        head.append("- load generator: ").append("wrk".equals(options.generator())
                ? "closed-loop runs by `wrk -t1 -cN --latency` (URL without a key: the service picks a random one; no "
                        + "interval logs), open-loop runs by `doubleface load`"
                : "`doubleface load` (a JVM per run)").append('\n');
        // worded as the committed reports have it (ReportReplayTest), but a zero warm-up in words
        head.append("- per run: ").append(options.warmup().isZero() ? "no warm-up, measured time only"
                        : options.warmup().toMillis() + " ms warm-up + measured time").append("; ")
                .append(options.globalWarmup().isZero() ? "no warm-up of a configuration before its first run"
                        : "each configuration warmed up " + seconds(options.globalWarmup()) + " before the first run")
                .append('\n');
        head.append("- cells: median over repeats, (min–max) when more than one; raw runs in summary.json, "
                + "interval logs in intervals/, process logs in logs/; environment in environment.json\n");
        Files.writeString(dir.resolve("report.md"), head.append(md).toString(), StandardCharsets.UTF_8);

        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("experiment", options.experiment());
        summary.put("quick", options.quick());
        summary.put("configurations", configs);
        summary.put("repeats", options.repeats());
        summary.put("prepared", prepared);
        summary.put("results", derived);
        summary.put("plots", plots);
        List<Object> runs = new ArrayList<>();
        for (ExperimentRunner.Row r : rows) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("point", r.point().label());
            m.put("params", r.point().params());
            m.put("config", r.config());
            m.put("repeat", r.repeat());
            m.put("interval_log", Files.exists(r.load().hlog()) ? dir.relativize(r.load().hlog()).toString() : null);
            m.put("load", r.load().summary());
            m.put("mid_tier", r.mid().toJson());
            if (r.adapter() != null) {
                m.put("adapter", r.adapter()); // the mid-tier's /admin/stats "adapter" object after the run
            }
            runs.add(m);
        }
        summary.put("runs", runs);
        Files.writeString(dir.resolve("summary.json"), Json.write(summary), StandardCharsets.UTF_8);
    }

    /** {@code 10 s}, or {@code 500 ms} where it is not whole seconds (not truncated to {@code 0 s}). */
    static String seconds(java.time.Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
    }
}
