package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.OPEN_LOOP_WARMUP;
import static io.doubleface.experiments.Experiments.capacity;
import static io.doubleface.experiments.Experiments.measuredSeconds;
import static io.doubleface.experiments.Experiments.params;
import static io.doubleface.experiments.Experiments.query;
import static io.doubleface.experiments.Markdown.cell;
import static io.doubleface.experiments.Markdown.fmtQ;
import static io.doubleface.experiments.Markdown.median;

import io.doubleface.experiments.Experiments.Point;
import org.HdrHistogram.Histogram;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Paper Fig. 15: completion-first vs fifo reply scheduling, open loop, Lfan/Sfan mixes. */
final class Priority implements Experiments.Experiment {
    @Override
    public Duration defaultWarmup() {
        return OPEN_LOOP_WARMUP;
    }

    static final List<int[]> MIXES = List.of(new int[] {5, 3}, new int[] {7, 1});

    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        return List.of("doubleface-cf", "doubleface-cfa", "doubleface-fifo", "type2a-1f1b", "type2b");
    }

    @Override
    public String externalRefusal(ExternalTopology e) {
        return "it sets the mid-tier's per-reply CPU work (serve --reply-work-us, 200 µs by default), a start option "
                + "the runner can neither set nor read on a running mid-tier";
    }

    @Override
    public int defaultReplyWorkMicros() {
        return 200;
    }

    static String mixLabel(int[] m) {
        return m[0] + "/" + m[1];
    }

    static String mix(int[] m) {
        return "50:" + query(m[0], "small") + ",50:" + query(m[1], "small");
    }

    /** The run's request mixes: Lfan/Sfan 5/3 and 7/1 over YCSB, else the service's own requests. */
    static List<String> mixLabels(ExperimentRunner.Options o) {
        return o.service().isYcsb() ? MIXES.stream().map(Priority::mixLabel).toList() : List.of(o.service().name());
    }

    /** The load generator's request arguments of mix {@code label}. */
    static List<String> mixArgs(ExperimentRunner.Options o, String label) {
        if (!o.service().isYcsb()) {
            return o.service().loadArgs();
        }
        int[] m = MIXES.stream().filter(x -> mixLabel(x).equals(label)).findFirst().orElseThrow();
        return List.of("--mix", mix(m));
    }

    /** How reports name mix {@code label}: {@code Lfan/Sfan 5/3}, or {@code hdsearch's requests}. */
    static String mixTitle(ExperimentRunner.Options o, String label) {
        return o.service().isYcsb() ? "Lfan/Sfan " + label : label + "'s requests";
    }

    @Override
    public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
        Map<String, Object> rates = new LinkedHashMap<>();
        Duration d = Duration.ofMillis(o.quick() ? 1500 : 5000);
        t.switchTo("doubleface-fifo");
        for (String label : mixLabels(o)) {
            List<String> args = new ArrayList<>(List.of("--users", "64"));
            args.addAll(mixArgs(o, label));
            args.addAll(List.of("--keys", Long.toString(o.records()), "--warmup", "1s", "--duration",
                    d.toMillis() + "ms"));
            Topology.LoadRun lr = t.load("capacity " + label, args, d.plusSeconds(60));
            double cap = lr.number("throughput_rps");
            double rate = Math.max(10, Math.round(cap * o.loadFraction()));
            out.printf(Locale.ROOT, "experiment: capacity of doubleface-fifo with %s: %.0f req/s; "
                    + "open loop at %.0f%% = %.0f req/s%n", mixTitle(o, label), cap, o.loadFraction() * 100, rate);
            rates.put(label, Map.of("capacity_rps", Math.round(cap), "rate_rps", rate));
        }
        return rates;
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        List<Point> ps = new ArrayList<>();
        for (String label : mixLabels(o)) {
            ps.add(new Point(mixTitle(o, label), params("mix", label), prepared -> {
                @SuppressWarnings("unchecked")
                Map<String, Object> r = (Map<String, Object>) prepared.get(label);
                List<String> args = new ArrayList<>(List.of("--rate",
                        String.valueOf(((Number) r.get("rate_rps")).longValue())));
                args.addAll(mixArgs(o, label));
                args.addAll(List.of("--max-connections", "2048"));
                return args;
            }));
        }
        return ps;
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return measuredSeconds(o, 4, 20);
    }

    @Override
    public String title() {
        return "Completion-first reply scheduling vs FIFO (paper Fig. 15)";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        if (!o.service().isYcsb()) {
            return "Open loop (Poisson arrivals, latency from the intended send time) of " + Experiments.workload(o)
                    + ", whose per-reply work is the service's own (in its reply handlers), offered load a fixed "
                    + "fraction of doubleface-fifo's closed-loop capacity with the same requests. doubleface-cf "
                    + "processes each loop iteration's replies in completion-first order (requests closest to "
                    + "completion first), doubleface-fifo in arrival order.";
        }
        return "Open loop (Poisson arrivals, latency from the intended send time) with a 50/50 mix of a large-fanout "
                + "and a small-fanout query (Lfan/Sfan 5/3 and 7/1), small replies, per-reply CPU work in the "
                + "mid-tier (--reply-work-us), offered load a fixed fraction of doubleface-fifo's closed-loop "
                + "capacity with the same mix. doubleface-cf processes each loop iteration's replies in "
                + "completion-first order (requests closest to completion first), doubleface-fifo in arrival order.";
    }

    static final double[] PERCENTILES = {50, 90, 99, 99.9};

    @Override
    public void report(Report report) throws IOException {
        for (Point p : report.points(x -> true)) {
            String mix = String.valueOf(p.params().get("mix"));
            String title = mixTitle(report.options(), mix);
            report.heading(title + ": open-loop latency (ms), all repeats' interval logs merged");
            Object rate = report.prepared().get(mix);
            if (rate != null) {
                report.text("Offered load: " + rate + " (rate = " + report.options().loadFraction() + " × doubleface-fifo's closed-loop "
                        + "capacity with this mix).\n");
            }
            List<List<String>> body = new ArrayList<>();
            Map<String, Object> out = new LinkedHashMap<>();
            List<String> cats = new ArrayList<>();
            for (double q : PERCENTILES) {
                cats.add("p" + fmtQ(q));
            }
            LineChart ch = new LineChart("Latency percentiles, " + title + (report.options().service().isYcsb()
                    ? " 50/50" : "") + ", open loop", "percentile",
                    "latency (ms)").categories(cats).logY();
            for (String c : report.configs()) {
                Histogram h = Report.merged(report.rows(p, c));
                List<String> r = new ArrayList<>(List.of(c, Long.toString(h.getTotalCount())));
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("samples", h.getTotalCount());
                int i = 0;
                for (double q : PERCENTILES) {
                    Double v = Report.percentile(h, q);
                    r.add(v == null ? "n/a" : String.format(Locale.ROOT, "%.2f", v));
                    d.put("p" + fmtQ(q) + "_ms", v == null ? null : MidTierSample.round(v));
                    ch.point(c, i++, v);
                }
                double max = h.getTotalCount() == 0 ? Double.NaN : h.getMaxValue() / 1000.0;
                r.add(Double.isNaN(max) ? "n/a" : String.format(Locale.ROOT, "%.2f", max));
                double[] errs = report.values(p, c, "errors");
                r.add(cell(errs, "%.0f"));
                r.add(cell(report.values(p, c, "achieved_rate"), "%.0f"));
                d.put("max_ms", MidTierSample.round(max));
                out.put(c, d);
                body.add(r);
            }
            report.table(List.of("configuration", "samples", "p50", "p90", "p99", "p99.9", "max", "errors", "achieved req/s"),
                    body);
            for (String variant : List.of("doubleface-cf", "doubleface-cfa")) {
                if (!report.configs().contains(variant) || !report.configs().contains("doubleface-fifo")) {
                    continue;
                }
                double[] cf = report.values(p, variant, "p99_ms");
                double[] fifo = report.values(p, "doubleface-fifo", "p99_ms");
                double[] ratio = new double[Math.min(cf.length, fifo.length)];
                for (int i = 0; i < ratio.length; i++) {
                    ratio[i] = fifo[i] / cf[i];
                }
                report.text("\np99 of doubleface-fifo / p99 of " + variant + ", per repeat: **" + cell(ratio, "%.2f") + "** "
                        + Arrays.toString(Arrays.stream(ratio).map(x -> Math.round(x * 100) / 100.0).toArray()) + "\n");
                out.put(variant.equals("doubleface-cf") ? "p99_fifo_over_cf" : "p99_fifo_over_cfa",
                        MidTierSample.round(median(ratio)));
            }
            report.regime(p, title);
            classTable(report, p, out);
            report.result(title, out);
            report.chart(ch, "priority-" + mix.replace('/', '-') + ".png");
        }
    }

    /**
     * Per request class (mix entry) and configuration: requests, p50 and p99, medians over the
     * repeats of each run's own percentiles (the generator's {@code classes}; absent in older runs).
     */
    private static void classTable(Report report, Point p, Map<String, Object> out) throws IOException {
        List<List<String>> body = new ArrayList<>();
        Map<String, Object> d = new LinkedHashMap<>();
        for (String c : report.configs()) {
            List<ExperimentRunner.Row> rs = report.rows(p, c);
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
        report.text("\nBy request class (each run's own percentiles, median over repeats):\n");
        report.table(List.of("configuration", "class", "requests", "p50", "p99"), body);
        out.put("classes", d);
    }

    private static double num(Object o) {
        return o instanceof Number n ? n.doubleValue() : Double.NaN;
    }
}
