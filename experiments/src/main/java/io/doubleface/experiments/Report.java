package io.doubleface.experiments;

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
import io.doubleface.tune.Profile;
import org.HdrHistogram.HistogramLogReader;

/**
 * The results of one experiment as tables (markdown), plots (PNG) and {@code summary.json}.
 * Aggregation over repeats: the median, with the min–max spread when there is more than one.
 */
final class Report {

    private final Path dir;
    private final ExperimentRunner.Options options;
    private final List<String> configs;
    private final List<ExperimentRunner.Row> rows;
    private final Map<String, Object> prepared;
    private final Duration took;
    private final StringBuilder md = new StringBuilder();
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

    private List<ExperimentRunner.Row> rows(Experiments.Point p, String config) {
        List<ExperimentRunner.Row> out = new ArrayList<>();
        for (ExperimentRunner.Row r : rows) {
            if (r.point().label().equals(p.label()) && r.config().equals(config)) {
                out.add(r);
            }
        }
        return out;
    }

    /** Values of one load metric per repeat (NaN where missing). */
    private double[] values(Experiments.Point p, String config, String key) {
        return rows(p, config).stream().mapToDouble(r -> r.get(key) == null ? Double.NaN : r.get(key)).toArray();
    }

    private double[] midValues(Experiments.Point p, String config, ToDoubleFunction<MidTierSample.Delta> f) {
        return rows(p, config).stream().mapToDouble(r -> f.applyAsDouble(r.mid())).toArray();
    }

    static double median(double[] v) {
        double[] s = Arrays.stream(v).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (s.length == 0) {
            return Double.NaN;
        }
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static String cell(double[] v, String fmt) {
        double m = median(v);
        if (Double.isNaN(m)) {
            return "n/a";
        }
        String s = String.format(Locale.ROOT, fmt, m);
        double[] ok = Arrays.stream(v).filter(d -> !Double.isNaN(d)).toArray();
        if (ok.length > 1) {
            double lo = Arrays.stream(ok).min().getAsDouble();
            double hi = Arrays.stream(ok).max().getAsDouble();
            s += " (" + String.format(Locale.ROOT, fmt, lo) + "–" + String.format(Locale.ROOT, fmt, hi) + ")";
        }
        return s;
    }

    // ---- markdown --------------------------------------------------------------------------

    void heading(String h) {
        md.append("\n### ").append(h).append("\n\n");
    }

    void text(String t) {
        md.append(t).append("\n");
    }

    private void table(List<String> header, List<List<String>> body) {
        md.append("| ").append(String.join(" | ", header)).append(" |\n|");
        md.append("---|".repeat(header.size())).append('\n');
        for (List<String> r : body) {
            md.append("| ").append(String.join(" | ", r)).append(" |\n");
        }
    }

    private String key(String prefix) {
        return prefix.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_").replaceAll("^_|_$", "");
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
        write(ch, file);
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
        write(ch, file);
    }

    private void write(LineChart ch, String file) throws IOException {
        if (ch.isEmpty()) {
            return;
        }
        ch.write(dir.resolve(file));
        plots.add(file);
        md.append("\n![").append(file).append("](").append(file).append(")\n");
    }

    // ---- experiment-specific tables --------------------------------------------------------

    void imbalanceTable() throws IOException {
        for (Experiments.Point p : points(x -> true)) {
            heading(p.label() + ": loops, wake-ups and threads (median of repeats)");
            List<List<String>> body = new ArrayList<>();
            Map<String, Object> out = new LinkedHashMap<>();
            LineChart ch = new LineChart("Events per wake-up, frontend (io) vs backend (t2a-be) loops", "configuration",
                    "events per wake-up").categories(configs);
            int i = 0;
            for (String c : configs) {
                double[] thr = values(p, c, "throughput_rps");
                double[] feWake = midValues(p, c, d -> d.wakeupsPerSecond("io"));
                double[] feEv = midValues(p, c, d -> d.eventsPerWakeup("io"));
                double[] beWake = midValues(p, c, d -> d.wakeupsPerSecond("t2a-be"));
                double[] beEv = midValues(p, c, d -> d.eventsPerWakeup("t2a-be"));
                double[] csPerS = midValues(p, c, d -> d.contextSwitches() / d.seconds());
                double[] csPerReq = midValues(p, c, MidTierSample.Delta::switchesPerRequest);
                double[] active = midValues(p, c, d -> d.activeThreads());
                double[] cpu = midValues(p, c, d -> d.cpuMillis() / 10.0 / d.seconds());
                body.add(List.of(c, cell(thr, "%.0f"), cell(feWake, "%.0f"), cell(feEv, "%.2f"), cell(beWake, "%.0f"),
                        cell(beEv, "%.2f"), cell(csPerS, "%.0f"), cell(csPerReq, "%.3f"), cell(active, "%.0f"),
                        cell(cpu, "%.0f")));
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("throughput_rps", MidTierSample.round(median(thr)));
                d.put("frontend_wakeups_per_s", MidTierSample.round(median(feWake)));
                d.put("frontend_events_per_wakeup", MidTierSample.round(median(feEv)));
                d.put("backend_wakeups_per_s", MidTierSample.round(median(beWake)));
                d.put("backend_events_per_wakeup", MidTierSample.round(median(beEv)));
                d.put("context_switches_per_s", MidTierSample.round(median(csPerS)));
                d.put("context_switches_per_request", MidTierSample.round(median(csPerReq)));
                d.put("active_threads", MidTierSample.round(median(active)));
                d.put("cpu_percent", MidTierSample.round(median(cpu)));
                out.put(c, d);
                double fe = median(feEv);
                double be = median(beEv);
                ch.point("frontend (io)", i, Double.isNaN(fe) ? null : fe);
                ch.point("backend (t2a-be)", i, Double.isNaN(be) ? null : be);
                i++;
            }
            table(List.of("configuration", "req/s", "frontend wake-ups/s", "frontend events/wake-up",
                    "backend wake-ups/s", "backend events/wake-up", "context switches/s", "switches/request",
                    "active threads", "mid-tier CPU %"), body);
            derived.put(p.label(), out);
            write(ch, "imbalance-events-per-wakeup.png");
        }
    }

    static final double[] PERCENTILES = {50, 90, 99, 99.9};

    void priorityTables() throws IOException {
        for (Experiments.Point p : points(x -> true)) {
            String mix = String.valueOf(p.params().get("mix"));
            heading("Lfan/Sfan " + mix + ": open-loop latency (ms), all repeats' interval logs merged");
            Object rate = prepared.get(mix);
            if (rate != null) {
                text("Offered load: " + rate + " (rate = " + options.loadFraction() + " × doubleface-fifo's closed-loop "
                        + "capacity with this mix).\n");
            }
            List<List<String>> body = new ArrayList<>();
            Map<String, Object> out = new LinkedHashMap<>();
            List<String> cats = new ArrayList<>();
            for (double q : PERCENTILES) {
                cats.add("p" + fmtQ(q));
            }
            LineChart ch = new LineChart("Latency percentiles, Lfan/Sfan " + mix + " 50/50, open loop", "percentile",
                    "latency (ms)").categories(cats).logY();
            for (String c : configs) {
                Histogram h = merged(rows(p, c));
                List<String> r = new ArrayList<>(List.of(c, Long.toString(h.getTotalCount())));
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("samples", h.getTotalCount());
                int i = 0;
                for (double q : PERCENTILES) {
                    Double v = percentile(h, q);
                    r.add(v == null ? "n/a" : String.format(Locale.ROOT, "%.2f", v));
                    d.put("p" + fmtQ(q) + "_ms", v == null ? null : MidTierSample.round(v));
                    ch.point(c, i++, v);
                }
                double max = h.getTotalCount() == 0 ? Double.NaN : h.getMaxValue() / 1000.0;
                r.add(Double.isNaN(max) ? "n/a" : String.format(Locale.ROOT, "%.2f", max));
                double[] errs = values(p, c, "errors");
                r.add(cell(errs, "%.0f"));
                r.add(cell(values(p, c, "achieved_rate"), "%.0f"));
                d.put("max_ms", MidTierSample.round(max));
                out.put(c, d);
                body.add(r);
            }
            table(List.of("configuration", "samples", "p50", "p90", "p99", "p99.9", "max", "errors", "achieved req/s"),
                    body);
            for (String variant : List.of("doubleface-cf", "doubleface-cfa")) {
                if (!configs.contains(variant) || !configs.contains("doubleface-fifo")) {
                    continue;
                }
                double[] cf = values(p, variant, "p99_ms");
                double[] fifo = values(p, "doubleface-fifo", "p99_ms");
                double[] ratio = new double[Math.min(cf.length, fifo.length)];
                for (int i = 0; i < ratio.length; i++) {
                    ratio[i] = fifo[i] / cf[i];
                }
                text("\np99 of doubleface-fifo / p99 of " + variant + ", per repeat: **" + cell(ratio, "%.2f") + "** "
                        + Arrays.toString(Arrays.stream(ratio).map(x -> Math.round(x * 100) / 100.0).toArray()) + "\n");
                out.put(variant.equals("doubleface-cf") ? "p99_fifo_over_cf" : "p99_fifo_over_cfa",
                        MidTierSample.round(median(ratio)));
            }
            List<String> batchRows = new ArrayList<>();
            for (String c : configs) {
                if (c.startsWith("doubleface")) {
                    batchRows.add(c + ": events per wake-up " + cell(midValues(p, c, d -> d.eventsPerWakeup("io")), "%.2f")
                            + ", replies per tail batch " + cell(midValues(p, c, d -> d.repliesPerTailBatch("io")), "%.2f"));
                }
            }
            if (!batchRows.isEmpty()) {
                text("\nThe I/O loop's batches (median over repeats): " + String.join("; ", batchRows) + ".\n");
            }
            classTable(p, out);
            derived.put("Lfan/Sfan " + mix, out);
            write(ch, "priority-" + mix.replace('/', '-') + ".png");
        }
    }

    /**
     * Per request class (mix entry) and configuration: requests, p50 and p99, medians over the
     * repeats of each run's own percentiles (the generator's {@code classes}; absent in older runs).
     */
    private void classTable(Experiments.Point p, Map<String, Object> out) throws IOException {
        List<List<String>> body = new ArrayList<>();
        Map<String, Object> d = new LinkedHashMap<>();
        for (String c : configs) {
            List<ExperimentRunner.Row> rs = rows(p, c);
            Map<String, List<Map<String, Object>>> byUrl = new LinkedHashMap<>();
            for (ExperimentRunner.Row r : rs) {
                if (r.load().summary().get("classes") instanceof List<?> l) {
                    for (Object o : l) {
                        if (o instanceof Map<?, ?> m) {
                            @SuppressWarnings("unchecked")
                            Map<String, Object> cm = (Map<String, Object>) m;
                            byUrl.computeIfAbsent(String.valueOf(cm.get("url")), k -> new ArrayList<>()).add(cm);
                        }
                    }
                }
            }
            Map<String, Object> dc = new LinkedHashMap<>();
            byUrl.forEach((url, ms) -> {
                double[] n = ms.stream().mapToDouble(m -> num(m.get("requests"))).toArray();
                double[] p50 = ms.stream().mapToDouble(m -> num(m.get("p50_ms"))).toArray();
                double[] p99 = ms.stream().mapToDouble(m -> num(m.get("p99_ms"))).toArray();
                body.add(List.of(c, url, cell(n, "%.0f"), cell(p50, "%.2f"), cell(p99, "%.2f")));
                Map<String, Object> v = new LinkedHashMap<>(); // percentiles may be null (too few samples)
                v.put("p50_ms", MidTierSample.round(median(p50)));
                v.put("p99_ms", MidTierSample.round(median(p99)));
                dc.put(url, v);
            });
            if (!dc.isEmpty()) {
                d.put(c, dc);
            }
        }
        if (body.isEmpty()) {
            return;
        }
        text("\nBy request class (each run's own percentiles, median over repeats):\n");
        table(List.of("configuration", "class", "requests", "p50", "p99"), body);
        out.put("classes", d);
    }

    private static double num(Object o) {
        return o instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    private static String fmtQ(double q) {
        return q == Math.rint(q) ? Long.toString((long) q) : Double.toString(q);
    }

    private static Double percentile(Histogram h, double q) {
        if (h.getTotalCount() < 100 / (1 - q / 100) - 1e-9) {
            return null; // MEASURE.md rule 4
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

    void demoTable() {
        List<Experiments.Point> pts = points(x -> true);
        Experiments.Point closed = pts.get(0);
        Experiments.Point open = pts.get(1);
        List<List<String>> body = new ArrayList<>();
        for (String c : configs) {
            body.add(List.of(c, cell(values(closed, c, "throughput_rps"), "%.0f"),
                    cell(midValues(closed, c, MidTierSample.Delta::switchesPerRequest), "%.3f"),
                    cell(midValues(closed, c, d -> d.eventsPerWakeup("io")), "%.2f"),
                    cell(values(open, c, "p50_ms"), "%.2f"), cell(values(open, c, "p99_ms"), "%.2f"),
                    cell(values(open, c, "p999_ms"), "%.2f")));
        }
        table(List.of("configuration", "closed-loop req/s", "switches/request", "events/wake-up (io)",
                "open p50 ms", "open p99 ms", "open p99.9 ms"), body);
        derived.put("rate_rps", prepared.get("rate_rps"));
    }

    // ---- μTune experiments -------------------------------------------------------------------

    /** A run is saturated when it answered under 95% of the offered load or more than 0.1% failed. */
    static boolean saturated(ExperimentRunner.Row r) {
        Double offered = r.get("offered_rate");
        Double thr = r.get("throughput_rps");
        Double req = r.get("requests");
        Double err = r.get("errors");
        if (offered == null || thr == null) {
            return true;
        }
        double total = (req == null ? 0 : req) + (err == null ? 0 : err);
        return thr < 0.95 * offered || (total > 0 && err != null && err / total > 0.001);
    }

    /** Median over repeats of the offered load of {@code p} under {@code c}. */
    private double offered(Experiments.Point p, String c) {
        return median(values(p, c, "offered_rate"));
    }

    /**
     * Saturated: most repeats did not sustain the load ({@link #saturated(ExperimentRunner.Row)}),
     * or the p99 exploded in every repeat: the lowest p99 of the repeats over {@value #EXPLODED_MS}
     * ms and over 10x the configuration's lowest p99 of the experiment. (One stall of the shared
     * machine in one repeat made the first shipped profile mark {@code doubleface} saturated at
     * half its capacity; a saturated configuration explodes in every repeat.)
     */
    private boolean saturated(Experiments.Point p, String c) {
        List<ExperimentRunner.Row> rs = rows(p, c);
        if (rs.isEmpty() || rs.stream().filter(Report::saturated).count() * 2 > rs.size()) {
            return true;
        }
        double p99 = Arrays.stream(values(p, c, "p99_ms")).filter(v -> !Double.isNaN(v))
                .min().orElse(Double.NaN);
        double lowest = Double.NaN;
        for (Experiments.Point q : points(x -> true)) {
            double v = median(values(q, c, "p99_ms"));
            if (!Double.isNaN(v) && (Double.isNaN(lowest) || v < lowest)) {
                lowest = v;
            }
        }
        return !Double.isNaN(p99) && p99 > EXPLODED_MS && p99 > 10 * lowest;
    }

    static final double EXPLODED_MS = 20;

    void mutuneModelsTables() throws IOException {
        List<Experiments.Point> pts = points(x -> true);
        heading("Open-loop p99 (ms) vs offered load; 'sat' = saturated (under 95% answered, over 0.1% errors, or p99 "
                + "over 20 ms and 10x the configuration's lowest)");
        List<String> header = new ArrayList<>(List.of("offered req/s"));
        header.addAll(configs);
        header.add("best");
        List<List<String>> body = new ArrayList<>();
        List<List<String>> norm = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        LineChart ch = new LineChart("Open-loop p99 vs load, fanout 5, small replies", "offered load (req/s)",
                "p99 (ms)").logY();
        for (Experiments.Point p : pts) {
            double load = offered(p, configs.get(0));
            List<String> r = new ArrayList<>(List.of(String.format(Locale.ROOT, "%.0f", load)));
            List<String> n = new ArrayList<>(List.of(String.format(Locale.ROOT, "%.0f", load)));
            String best = null;
            double bestP99 = Double.NaN;
            for (String c : configs) {
                double p99 = median(values(p, c, "p99_ms"));
                if (!saturated(p, c) && !Double.isNaN(p99) && (best == null || p99 < bestP99)) {
                    best = c;
                    bestP99 = p99;
                }
            }
            Map<String, Object> d = new LinkedHashMap<>();
            for (String c : configs) {
                double p99 = median(values(p, c, "p99_ms"));
                boolean sat = saturated(p, c);
                r.add(sat ? "sat" : cell(values(p, c, "p99_ms"), "%.2f"));
                n.add(sat ? "sat" : Double.isNaN(bestP99) ? "n/a" : String.format(Locale.ROOT, "%.2f", p99 / bestP99));
                d.put(c, sat ? "saturated" : MidTierSample.round(p99));
                ch.point(c, offered(p, c), sat || Double.isNaN(p99) ? null : p99);
            }
            r.add(best == null ? "none" : best);
            n.add(best == null ? "none" : best);
            d.put("best", best);
            out.put(String.format(Locale.ROOT, "%.0f", load), d);
            body.add(r);
            norm.add(n);
        }
        table(header, body);
        heading("p99 relative to the best configuration at each load (1.00 = best)");
        table(header, norm);
        derived.put("p99_ms_by_load", out);
        write(ch, "mutune-models-p99.png");
        Profile profile = profile();
        if (profile != null) {
            profile.write(dir.resolve("profile.json"));
            text("\nProfile of these runs: `profile.json` (peak-sustaining configuration: " + profile.peakSustaining()
                    + "; capacity per configuration: " + capacities(profile) + ").\n");
        }
    }

    private static String capacities(Profile p) {
        List<String> l = new ArrayList<>();
        for (String c : p.configurations()) {
            l.add(c + " " + Math.round(p.capacity(c)));
        }
        return String.join(", ", l);
    }

    /** The load-adapter profile of a mutune-models run: one point per (configuration, load). */
    Profile profile() {
        boolean ycsb = options.service().isYcsb();
        Profile.Builder b = Profile.builder()
                .service(ycsb ? "ycsb fanout 5 small" : options.service().name() + " " + options.service().requests())
                .shards(ycsb ? options.driver() + ", " + options.shards() + " shards, " + options.records() + " records"
                        : options.shards() + " gRPC leaves, default data")
                .machine(String.valueOf(options.ioThreads()) + " I/O loop, mid-tier on CPUs "
                        + (options.midCpus() == null ? "any" : options.midCpus()) + "; "
                        + Runtime.getRuntime().availableProcessors() + " CPUs")
                .date(java.time.Instant.now().toString()).commit(ExperimentRunner.git("rev-parse", "HEAD"));
        int n = 0;
        for (String c : configs) {
            if (Topology.isAdapter(c) || c.indexOf('@') >= 0) {
                continue;
            }
            for (Experiments.Point p : points(x -> true)) {
                double load = offered(p, c);
                double p50 = median(values(p, c, "p50_ms"));
                double p99 = median(values(p, c, "p99_ms"));
                double p999 = median(values(p, c, "p999_ms"));
                if (Double.isNaN(load) || Double.isNaN(p50) || Double.isNaN(p99)) {
                    continue; // p99 not reportable (under 10,000 samples): no point
                }
                double thr = median(values(p, c, "throughput_rps"));
                double cpu = median(midValues(p, c, d -> d.seconds() > 0 ? d.cpuMillis() / 1000.0 / d.seconds() : 0));
                b.point(c, new Profile.Point(load, p50 * 1000, Math.max(p50, p99) * 1000,
                        Double.isNaN(p999) ? Double.NaN : Math.max(Math.max(p50, p99), p999) * 1000,
                        Double.isNaN(thr) ? 0 : thr,
                        Double.isNaN(cpu) ? 0 : cpu, saturated(p, c)));
                n++;
            }
        }
        return n == 0 ? null : b.build();
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
    private List<Map.Entry<Double, String>> adapterSwitches(ExperimentRunner.Row r, double logStartSec) {
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

    private static double logStart(ExperimentRunner.Row r) throws IOException {
        try (HistogramLogReader reader = new HistogramLogReader(r.load().hlog().toFile())) {
            reader.nextIntervalHistogram();
            return reader.getStartTimeSec();
        }
    }

    /** The configuration an adapter had active at {@code t} (seconds since the schedule began). */
    private static String activeAt(List<Map.Entry<Double, String>> switches, String initial, double t) {
        String c = initial;
        for (Map.Entry<Double, String> e : switches) {
            if (e.getKey() <= t) {
                c = e.getValue();
            }
        }
        return c;
    }

    private static String initialOf(ExperimentRunner.Row r) {
        if (r.adapter() != null && r.adapter().get("switch_log") instanceof List<?> log && !log.isEmpty()
                && log.get(0) instanceof Map<?, ?> m) {
            return String.valueOf(m.get("from"));
        }
        return r.adapter() != null && r.adapter().get("choices") instanceof List<?> ch && !ch.isEmpty()
                ? "(start)" : "?";
    }

    private static String ms(Double v) {
        return v == null ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
    }

    void steadyTables() throws IOException {
        Experiments.Point pt = points(x -> true).get(0);
        List<Long> rates = Experiments.MutuneSteady.rates(options, prepared);
        double cap = ((Number) prepared.get("capacity_rps")).doubleValue();
        heading("p99 (ms) per load step (first second of each step left out), all repeats merged");
        text("doubleface's closed-loop capacity: " + Math.round(cap) + " req/s; steps of at least "
                + Experiments.MutuneSteady.stepSeconds(options) + " s, longer where 10,000 samples need it.\n");
        List<String> header = new ArrayList<>(List.of("step", "offered req/s"));
        header.addAll(configs);
        header.add("best static");
        header.add("adaptive / best static");
        header.add("best static's repeats: p99 max / min");
        List<List<String>> body = new ArrayList<>();
        List<List<String>> spreadBody = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, List<String>> chosen = new LinkedHashMap<>();
        LineChart ch = new LineChart("p99 per load step (up, then down)", "step", "p99 (ms)").logY();
        double stepStart = 0;
        for (int i = 0; i < rates.size(); i++) {
            long rate = rates.get(i);
            double len = Experiments.MutuneSteady.stepMillis(options, rate) / 1000.0;
            double from = stepStart + 1;
            double to = stepStart + len;
            stepStart += len;
            List<String> r = new ArrayList<>(List.of(Integer.toString(i + 1), Long.toString(rate)));
            Map<String, Object> d = new LinkedHashMap<>();
            String best = null;
            double bestV = Double.NaN;
            Map<String, Double> v = new LinkedHashMap<>();
            Map<String, double[]> perRepeat = new LinkedHashMap<>();
            List<String> sr = new ArrayList<>(List.of(Integer.toString(i + 1), Long.toString(rate)));
            for (String c : configs) {
                Histogram h = new Histogram(3);
                Map<String, Integer> picks = new LinkedHashMap<>();
                List<Double> reps = new ArrayList<>();
                for (ExperimentRunner.Row row : rows(pt, c)) {
                    Histogram one = new Histogram(3);
                    for (Interval iv : intervals(row)) {
                        if (iv.at() >= from - 0.01 && iv.at() + iv.seconds() <= to + 0.2) {
                            one.add(iv.latency());
                        }
                    }
                    h.add(one);
                    Double p = percentile(one, 99);
                    if (p != null) {
                        reps.add(p);
                    }
                    if (Topology.isAdapter(c)) {
                        String a = activeAt(adapterSwitches(row, logStart(row)), initialOf(row), (from + to) / 2);
                        picks.merge(a, 1, Integer::sum);
                    }
                }
                double[] rv = reps.stream().mapToDouble(Double::doubleValue).toArray();
                perRepeat.put(c, rv);
                sr.add(cell(rv, "%.2f"));
                Double p99 = percentile(h, 99);
                v.put(c, p99);
                r.add(ms(p99) + (picks.isEmpty() ? "" : " (" + String.join("/", picks.keySet()) + ")"));
                d.put(c, p99 == null ? null : MidTierSample.round(p99));
                if (!picks.isEmpty()) {
                    chosen.computeIfAbsent(c, k -> new ArrayList<>()).add(String.join("/", picks.keySet()));
                }
                if (!Topology.isAdapter(c) && p99 != null && (best == null || p99 < bestV)) {
                    best = c;
                    bestV = p99;
                }
                ch.point(c, i + 1, p99);
            }
            r.add(best == null ? "none" : best + " " + ms(bestV));
            Double ad = v.get("adaptive");
            r.add(ad == null || best == null ? "n/a" : String.format(Locale.ROOT, "%.2f", ad / bestV));
            double[] br = best == null ? new double[0] : perRepeat.get(best);
            double spread = br.length < 2 ? Double.NaN
                    : Arrays.stream(br).max().getAsDouble() / Arrays.stream(br).min().getAsDouble();
            r.add(Double.isNaN(spread) ? "n/a" : String.format(Locale.ROOT, "%.2f", spread));
            d.put("best_static_repeat_spread", Double.isNaN(spread) ? null : MidTierSample.round(spread));
            Map<String, Object> reps = new LinkedHashMap<>();
            perRepeat.forEach((c, rv) -> reps.put(c, Arrays.stream(rv).mapToObj(MidTierSample::round).toList()));
            d.put("p99_per_repeat", reps);
            spreadBody.add(sr);
            d.put("best_static", best);
            d.put("adaptive_over_best_static", ad == null || best == null ? null : MidTierSample.round(ad / bestV));
            out.put("step " + (i + 1) + " " + rate + " req/s", d);
            body.add(r);
        }
        table(header, body);
        text("\nIn parentheses: the configuration the adapter had active in the middle of the step. The last "
                + "column is the run-to-run noise of the best static configuration at that step: its largest "
                + "repeat's p99 over its smallest.\n");
        heading("p99 (ms) per load step, one value per repeat: median (min–max)");
        List<String> sh = new ArrayList<>(List.of("step", "offered req/s"));
        sh.addAll(configs);
        table(sh, spreadBody);
        lostAndSwitches(pt);
        derived.put("steps", out);
        derived.put("adapter_choices", chosen);
        write(ch, "mutune-steady-p99.png");
    }

    /** Errors, requests and switches per configuration: nothing may be lost across switches. */
    private void lostAndSwitches(Experiments.Point pt) throws IOException {
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
            out.put(c, params("requests", median(req), "errors", median(err), "unfinished", median(unf), "switches",
                    switches));
        }
        table(List.of("configuration", "answered", "errors", "unanswered at the end", "adapter switches (all repeats)"),
                body);
        derived.put("requests_errors_switches", out);
    }

    private static Map<String, Object> params(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    void flashTables() throws IOException {
        Experiments.Point pt = points(x -> true).get(0);
        double calm = ((Number) pt.params().get("calm_ms")).doubleValue() / 1000.0;
        heading("Latency around the flash crowd (ms), all repeats merged");
        text("100 req/s for " + calm + " s, " + prepared.get("spike_rps") + " req/s for 1 s (" + (prepared.get("capacity_rps")
                == null ? "--loads" : "90% of doubleface's closed-loop capacity, " + prepared.get("capacity_rps") + " req/s")
                + "), 100 req/s for " + calm + " s. "
                + "At 100 req/s a p99 needs 100 s of samples (MEASURE.md rule 4), so the calm phases report p50/p90 "
                + "and the recovery is judged on each second's worst request: recovered = the first second after "
                + "the spike whose max is within 2x of the calm seconds' median max.\n");
        List<List<String>> body = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        LineChart ch = new LineChart("Worst request per second around the flash crowd", "seconds since the spike began",
                "max latency (ms)").logY();
        for (String c : configs) {
            Histogram before = new Histogram(3);
            Histogram spike = new Histogram(3);
            Histogram after = new Histogram(3);
            Map<Integer, Histogram> bySecond = new java.util.TreeMap<>();
            List<Double> calmMax = new ArrayList<>();
            for (ExperimentRunner.Row row : rows(pt, c)) {
                for (Interval iv : intervals(row)) {
                    double rel = iv.at() - calm;
                    int sec = (int) Math.floor(rel + 1e-6);
                    if (iv.at() >= 1 && rel < -1.5) {
                        before.add(iv.latency());
                        if (iv.latency().getTotalCount() > 0) {
                            calmMax.add(iv.latency().getMaxValue() / 1000.0);
                        }
                    } else if (rel >= -0.5 && rel < 2.5) {
                        spike.add(iv.latency());
                    } else if (rel >= 3) {
                        after.add(iv.latency());
                    }
                    if (rel >= -5 && rel < 15) {
                        bySecond.computeIfAbsent(sec, k -> new Histogram(3)).add(iv.latency());
                    }
                }
            }
            double calmLevel = median(calmMax.stream().mapToDouble(Double::doubleValue).toArray());
            Integer recovered = null;
            for (Map.Entry<Integer, Histogram> e : bySecond.entrySet()) {
                Double v = e.getValue().getTotalCount() == 0 ? null : e.getValue().getMaxValue() / 1000.0;
                ch.point(c, e.getKey(), v);
                if (e.getKey() >= 1 && recovered == null && !Double.isNaN(calmLevel) && v != null
                        && v <= 2 * calmLevel) {
                    recovered = e.getKey() - 1; // whole seconds after the spike's end
                }
            }
            double max = Math.max(Math.max(before.getMaxValue(), spike.getMaxValue()), after.getMaxValue()) / 1000.0;
            body.add(List.of(c, pct(before, 50), pct(before, 90), pct(spike, 50), pct(spike, 90),
                    String.format(Locale.ROOT, "%.2f", spike.getMaxValue() / 1000.0), pct(after, 90),
                    String.format(Locale.ROOT, "%.2f", max), recovered == null ? "not within 14 s"
                            : "≤ " + (recovered + 1) + " s"));
            out.put(c, params("p50_calm_before_ms", pctV(before, 50), "p90_calm_before_ms", pctV(before, 90),
                    "p50_spike_ms", pctV(spike, 50), "p90_spike_ms", pctV(spike, 90), "max_spike_ms",
                    spike.getMaxValue() / 1000.0, "p90_calm_after_ms", pctV(after, 90), "max_ms", max,
                    "calm_second_max_median_ms", calmLevel, "recovered_within_s",
                    recovered == null ? null : recovered + 1));
        }
        table(List.of("configuration", "p50 before", "p90 before", "p50 spike (-0.5..+2.5 s)", "p90 spike", "max spike",
                "p90 after (from +3 s)", "max overall", "back to calm"), body);
        lostAndSwitches(pt);
        derived.put("flash", out);
        write(ch, "mutune-flash-max.png");
    }

    /** A percentile under MEASURE.md rule 4 (null below 100/(1-p) samples). */
    private static Double pctV(Histogram h, double q) {
        return percentile(h, q);
    }

    private static String pct(Histogram h, double q) {
        return ms(percentile(h, q));
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
        head.append("- topology: ").append(options.driver()).append(" leaf (").append(options.shards())
                .append(" shards, ").append(options.records()).append(" records) and the load generator on CPUs ")
                .append(options.auxCpus() == null ? "(not pinned)" : options.auxCpus()).append("; mid-tier (")
                .append(options.ioThreads()).append(" I/O loop) on CPUs ")
                .append(options.midCpus() == null ? "(not pinned)" : options.midCpus())
                .append("; separate JVMs, loopback\n");
        head.append("- load generator: ").append("wrk".equals(options.generator())
                ? "closed-loop runs by `wrk -t1 -cN --latency` (URL without a key: the service picks a random one; no "
                        + "interval logs), open-loop runs by `doubleface load`"
                : "`doubleface load` (a JVM per run)").append('\n');
        head.append("- per run: ").append(options.warmup().toMillis()).append(" ms warm-up + measured time; ")
                .append("each configuration warmed up ").append(options.globalWarmup().toSeconds())
                .append(" s before the first run\n");
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
}
