package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.OPEN_LOOP_WARMUP;
import static io.doubleface.experiments.Experiments.fanout;
import static io.doubleface.experiments.Experiments.measuredSeconds;
import static io.doubleface.experiments.Experiments.params;
import static io.doubleface.experiments.Experiments.query;
import static io.doubleface.experiments.Markdown.cell;

import io.doubleface.experiments.Experiments.Point;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * Where the tail comes from (the variability paper, WWW'19, §4–6 and §9): at three loads (30, 60
 * and 90 % of each model's closed-loop capacity) and two arrival processes (Poisson, and a bursty
 * two-phase hyperexponential H2 with C² = 4), open loop, every request traced
 * ({@code --trace-stages all}): per configuration and stage the mean, standard deviation, variance
 * and C² of the run's requests (from the running sums of X and X² before and after each run), the
 * stages ranked by variance; then, for a configuration run with knob variants
 * ({@code doubleface+flush=…}, {@code doubleface-poll}), the knob of its top-variance stage and its
 * settings swept, mean and p99 before and after, beside the knob the mean would have chosen.
 *
 * <p>Which knob regulates which stage: the downstream flush mode regulates the sends, so the stages
 * from the plan's end to the replies' arrival ({@code round_trip}, {@code last_reply}); busy-polling
 * regulates the wake-ups of the thread a request hops to ({@code queue}, {@code merge},
 * {@code respond}); {@code plan} is the service's own code and {@code reply_wait} the reply
 * scheduler's order ({@code experiment priority}): no knob here.
 */
final class Variability implements Experiments.Experiment {

    /** Loads as fractions of each configuration's capacity. */
    static final List<Double> LOADS = List.of(0.3, 0.6, 0.9);
    static final List<Double> LOADS_QUICK = List.of(0.5);

    /** Arrival processes ({@code doubleface load --arrivals}): Poisson and a bursty H2 with C² = 4. */
    static final List<String> ARRIVALS = List.of("poisson", "h2:4");

    /** The stages between admission and the merge, which chain end to end ({@code total} is their sum). */
    static final List<String> STAGES = List.of("queue", "plan", "round_trip", "reply_wait", "last_reply", "merge",
            "respond");

    /** The knob that regulates each stage; absent: none here. */
    static final Map<String, String> KNOB_OF_STAGE = Map.of("queue", "busy-poll", "round_trip", "flush",
            "last_reply", "flush", "merge", "busy-poll", "respond", "busy-poll");

    /** The flush-policy settings swept by default, besides the default per-iteration. */
    static final List<String> FLUSH_SWEEP = List.of("per-write", "batch:64:20us", "batch:64:100us");

    private ExperimentRunner.Options options;

    @Override
    public Duration defaultWarmup() {
        return OPEN_LOOP_WARMUP;
    }

    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        List<String> c = new ArrayList<>(o.quick() ? List.of("doubleface", "type2a-1f1b") : Experiments.FIVE_MODELS);
        for (String f : o.quick() ? List.of("per-write") : FLUSH_SWEEP) {
            c.add("doubleface+flush=" + f);
        }
        c.add("doubleface-poll");
        return c;
    }

    /** Runs on a running mid-tier only if it traces every request's stages ({@code serve --trace-stages all}). */
    @Override
    public String externalRefusal(ExternalTopology e) {
        return e.tracesEveryRequest() ? null : "its figures are the mid-tier's per-stage times of every request; start "
                + "the mid-tier with --trace-stages all";
    }

    /** The stage sums are read when the warm-up ends: the warm-up's requests (a fresh generator JVM) stay out. */
    @Override
    public boolean sampleAfterWarmup() {
        return true;
    }

    @Override
    public List<String> serveArgs(ExperimentRunner.Options o, List<String> configs) {
        return List.of("--trace-stages", "all");
    }

    /**
     * The configuration whose capacity sets {@code config}'s rate: the configuration without knobs,
     * and without busy-poll ({@code doubleface-poll} runs at {@code doubleface}'s rates, so the knob is
     * compared at equal load).
     */
    static String base(String config) {
        String n = Topology.configOf(config);
        if (n.endsWith("-poll")) {
            String without = n.substring(0, n.length() - "-poll".length());
            try {
                io.doubleface.model.Configuration.parse(without);
                return without;
            } catch (IllegalArgumentException e) {
                return n;
            }
        }
        return n;
    }

    /** The knob {@code config} sets on its {@link #base} and the setting, or {@code null} for the base itself. */
    static String[] knob(String config) {
        Map<String, String> k = Topology.knobsOf(config);
        if (!k.get("flush").equals("per-iteration")) {
            return new String[] {"flush", k.get("flush")};
        }
        if (!Topology.configOf(config).equals(base(config))) {
            return new String[] {"busy-poll", "poll"};
        }
        if (!k.get("pin").equals("off")) {
            return new String[] {"pin", k.get("pin")};
        }
        if (!k.get("gc").equals("default")) {
            return new String[] {"gc", k.get("gc")};
        }
        return null;
    }

    private static List<String> bases(List<String> configs) {
        return new ArrayList<>(new LinkedHashSet<>(configs.stream().map(Variability::base).toList()));
    }

    @Override
    public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
        Map<String, Object> caps = new LinkedHashMap<>();
        if (o.loads() != null) {
            out.println("experiment: offered loads " + o.loads() + " req/s for every configuration (--loads)");
            return Map.of();
        }
        Duration d = Duration.ofMillis(o.quick() ? 1500 : 4000);
        for (String b : bases(o.configs() != null ? o.configs() : defaultConfigs(o))) {
            t.switchTo(b);
            List<String> args = new ArrayList<>(List.of("--users", "64"));
            args.addAll(requestArgs(o));
            args.addAll(List.of("--keys", Long.toString(o.records()), "--warmup", "1s", "--duration", d.toMillis() + "ms"));
            double cap = t.load("capacity " + b, args, d.plusSeconds(60)).number("throughput_rps");
            out.printf(Locale.ROOT, "experiment: closed-loop capacity of %s (64 users): %.0f req/s%n", b, cap);
            out.flush();
            caps.put(b, Math.round(cap));
        }
        return Map.of("capacity_rps", caps);
    }

    private static List<String> requestArgs(ExperimentRunner.Options o) {
        return o.service().isYcsb() ? List.of("--url", query(fanout(o), "small")) : o.service().loadArgs();
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        this.options = o;
        List<Point> ps = new ArrayList<>();
        boolean absolute = o.loads() != null;
        for (double load : absolute ? o.loads() : o.quick() ? LOADS_QUICK : LOADS) {
            for (String a : ARRIVALS) {
                String label = (absolute ? String.format(Locale.ROOT, "%.0f req/s", load)
                        : String.format(Locale.ROOT, "%.0f%%", load * 100)) + " " + a;
                ps.add(new Point(label, params("load", load, "arrivals", a),
                        prepared -> args(o, load, a, rate(o, load, "doubleface", prepared))));
            }
        }
        return ps;
    }

    /** The offered rate of {@code config} at {@code load}: a fraction of its base's capacity, or {@code --loads}. */
    static long rate(ExperimentRunner.Options o, double load, String config, Map<String, Object> prepared) {
        if (o.loads() != null) {
            return Math.round(load);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> caps = (Map<String, Object>) prepared.get("capacity_rps");
        Object cap = caps == null ? null : caps.get(base(config));
        if (!(cap instanceof Number n)) {
            throw new IllegalStateException("no capacity measured for " + base(config));
        }
        return Math.max(10, Math.round(n.doubleValue() * load));
    }

    private static List<String> args(ExperimentRunner.Options o, double load, String arrivals, long rate) {
        List<String> args = new ArrayList<>(List.of("--rate", Long.toString(rate), "--arrivals", arrivals));
        args.addAll(requestArgs(o));
        args.addAll(List.of("--max-connections", "2048"));
        return args;
    }

    @Override
    public List<String> loadArgs(Point p, String config, Map<String, Object> prepared) {
        double load = ((Number) p.params().get("load")).doubleValue();
        String a = (String) p.params().get("arrivals");
        return args(options, load, a, rate(options, load, config, prepared));
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return measuredSeconds(o, 3, 10);
    }

    @Override
    public String title() {
        return "Where the tail comes from: per-stage service-time variability and the knob of the top stage "
                + "(variability paper, WWW'19)";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        return "Open loop (latency from the intended send time), " + Experiments.workload(o) + ", offered load "
                + (o.loads() != null ? "the given rates for every configuration" : "a fraction of each configuration's "
                        + "closed-loop capacity (64 users; a knob variant such as doubleface+flush=per-write or "
                        + "doubleface-poll runs at its base configuration's rates)")
                + ", with Poisson arrivals and with bursty H2 arrivals (two-phase hyperexponential, C² = 4). Every "
                + "request is traced (--trace-stages all, ≈ 0.4 µs per request, docs/tracing.md); per run the "
                + "stages' count, mean and variance come from the mid-tier's running sums of X and X² before and "
                + "after it, pooled over the repeats. Stages: queue (admitted → plan starts), plan, round_trip "
                + "(plan's end → the first reply's arrival: sends and flush, network, shard, the reply's decode), "
                + "reply_wait (its arrival → handled: the wait for the thread that runs onReply, and onReply), "
                + "last_reply (the fanout's spread), merge (hop to the merging thread + merge), respond (the hop "
                + "back to the upstream connection). As in the paper, stages are ranked by "
                + "variance; the knob of the top stage is swept (flush mode for the reply stages, busy-poll for "
                + "the hops) and compared with the default, beside the knob the highest-mean stage would pick.";
    }

    /** One stage's requests pooled over rows; null if none was traced. */
    static MidTierSample.Stage pooled(List<ExperimentRunner.Row> rows, String config, String stage) {
        long n = 0;
        double sum = 0;
        double sq = 0;
        for (ExperimentRunner.Row r : rows) {
            MidTierSample.Stage s = r.mid().stage(Topology.configOf(config), stage);
            if (s != null) {
                n += s.count();
                sum += s.sumMicros();
                sq += s.sumSqMicros2();
            }
        }
        return n == 0 ? null : new MidTierSample.Stage(n, sum, sq);
    }

    /** The stage of highest variance (or mean, with {@code byMean}) of {@code config} at {@code p}; null if none. */
    static String top(Report report, Point p, String config, boolean byMean) {
        String best = null;
        double bestV = -1;
        for (String st : STAGES) {
            MidTierSample.Stage s = pooled(report.rows(p, config), config, st);
            if (s == null) {
                continue;
            }
            double v = byMean ? s.meanMicros() : s.varianceMicros2();
            if (v > bestV) {
                bestV = v;
                best = st;
            }
        }
        return best;
    }

    /** End-to-end mean (ms) of each repeat of {@code config} at {@code p}, from its interval log. */
    private static double[] means(Report report, Point p, String config) throws IOException {
        List<ExperimentRunner.Row> rows = report.rows(p, config);
        double[] m = new double[rows.size()];
        for (int i = 0; i < m.length; i++) {
            Histogram h = Report.merged(List.of(rows.get(i)));
            m[i] = h.getTotalCount() == 0 ? Double.NaN : h.getMean() / 1000.0;
        }
        return m;
    }

    private static String stageCell(MidTierSample.Stage s) {
        return s == null ? "–" : String.format(Locale.ROOT, "%.0f / %.0f (%.2f)", s.meanMicros(), s.stddevMicros(),
                s.cv2());
    }

    private static Map<String, Object> stageJson(MidTierSample.Stage s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("count", s.count());
        m.put("mean_us", MidTierSample.round(s.meanMicros()));
        m.put("stddev_us", MidTierSample.round(s.stddevMicros()));
        m.put("variance_us2", MidTierSample.round(s.varianceMicros2()));
        m.put("cv2", MidTierSample.round(s.cv2()));
        return m;
    }

    @Override
    public void report(Report report) throws IOException {
        ExperimentRunner.Options o = report.options();
        if (report.prepared().get("capacity_rps") != null) {
            report.heading("Capacity and offered loads");
            report.text("Closed-loop capacity (64 users) of each base configuration, req/s: "
                    + report.prepared().get("capacity_rps") + ". Each point offers its fraction of the base's capacity.\n");
        }
        Map<String, Object> results = new LinkedHashMap<>();
        List<Point> points = report.points(x -> true);
        // 1. the stage table per point
        for (Point p : points) {
            report.heading("Stages at " + p.label() + ": mean / σ (C²), µs");
            List<List<String>> body = new ArrayList<>();
            Map<String, Object> pj = new LinkedHashMap<>();
            for (String c : report.configs()) {
                List<String> row = new ArrayList<>(List.of(c, cell(report.values(p, c, "achieved_rate"), "%.0f")));
                Map<String, Object> cj = new LinkedHashMap<>();
                for (String st : STAGES) {
                    MidTierSample.Stage s = pooled(report.rows(p, c), c, st);
                    row.add(stageCell(s));
                    if (s != null) {
                        cj.put(st, stageJson(s));
                    }
                }
                MidTierSample.Stage total = pooled(report.rows(p, c), c, "total");
                row.add(stageCell(total));
                String top = top(report, p, c, false);
                String topMean = top(report, p, c, true);
                row.add(top == null ? "–" : top + (top.equals(topMean) ? "" : " (mean: " + topMean + ")"));
                Histogram h = Report.merged(report.rows(p, c));
                row.add(cell(means(report, p, c), "%.2f"));
                Double p99 = Report.percentile(h, 99);
                row.add(Markdown.ms(p99));
                row.add(cell(report.values(p, c, "send_lag_p99_ms"), "%.2f"));
                body.add(row);
                if (total != null) {
                    cj.put("total", stageJson(total));
                }
                cj.put("top_stage_by_variance", top);
                cj.put("top_stage_by_mean", topMean);
                cj.put("mean_ms", MidTierSample.round(Markdown.median(means(report, p, c))));
                cj.put("p99_ms", p99 == null ? null : MidTierSample.round(p99));
                pj.put(c, cj);
            }
            List<String> header = new ArrayList<>(List.of("configuration", "achieved req/s"));
            header.addAll(STAGES);
            header.addAll(List.of("total", "top stage by variance", "mean ms", "p99 ms", "generator send lag p99 ms"));
            report.table(header, body);
            results.put(p.label(), pj);
            List<String> cats = report.configs();
            Map<String, List<Double>> segs = new LinkedHashMap<>();
            for (String st : STAGES) {
                List<Double> v = new ArrayList<>();
                for (String c : cats) {
                    MidTierSample.Stage s = pooled(report.rows(p, c), c, st);
                    v.add(s == null ? null : s.meanMicros());
                }
                segs.put(st, v);
            }
            report.plot("variability-stages-" + fileSafe(p.label()) + ".png", f -> Charts.stackedBars(f,
                    "Mean time per stage, " + p.label(), "µs", cats, segs));
        }
        report.result("stages", results);
        rankingTable(report, points);
        sweeps(report, points);
        scatter(report, points);
        if (o.quick()) {
            report.text("\n(--quick: one load, short runs; the figures show the method works, not where the tail "
                    + "comes from.)\n");
        }
    }

    private static String fileSafe(String label) {
        return label.replace("%", "pct").replace(' ', '-').replace(':', '-').replace('/', '-');
    }

    /** The paper's Fig. 3 as a table: per configuration, each point's stages in order of variance. */
    private static void rankingTable(Report report, List<Point> points) {
        report.heading("Stages ranked by variance (highest first)");
        List<List<String>> body = new ArrayList<>();
        for (String c : report.configs()) {
            for (Point p : points) {
                List<Map.Entry<String, Double>> ranked = new ArrayList<>();
                for (String st : STAGES) {
                    MidTierSample.Stage s = pooled(report.rows(p, c), c, st);
                    if (s != null) {
                        ranked.add(Map.entry(st, s.varianceMicros2()));
                    }
                }
                ranked.sort(Map.Entry.<String, Double>comparingByValue().reversed());
                List<String> parts = new ArrayList<>();
                for (Map.Entry<String, Double> r : ranked) {
                    parts.add(String.format(Locale.ROOT, "%s %.3g", r.getKey(), r.getValue()));
                }
                body.add(List.of(c, p.label(), parts.isEmpty() ? "–" : String.join(" > ", parts)));
            }
        }
        report.table(List.of("configuration", "point", "stages by variance (µs²)"), body);
    }

    /**
     * For each base configuration run with knob variants: per point, the top-variance stage, its knob,
     * and every variant's top-stage σ, mean and p99 against the base (the knob the variance chooses
     * marked, the others shown as the alternatives).
     */
    private static void sweeps(Report report, List<Point> points) throws IOException {
        Map<String, List<String>> variants = new LinkedHashMap<>();
        for (String c : report.configs()) {
            if (knob(c) != null && report.configs().contains(base(c))) {
                variants.computeIfAbsent(base(c), k -> new ArrayList<>()).add(c);
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : variants.entrySet()) {
            String b = e.getKey();
            Map<String, Object> bj = new LinkedHashMap<>();
            for (Point p : points) {
                String top = top(report, p, b, false);
                String topMean = top(report, p, b, true);
                String chosen = top == null ? null : KNOB_OF_STAGE.get(top);
                String byMean = topMean == null ? null : KNOB_OF_STAGE.get(topMean);
                report.heading(b + " at " + p.label() + ": the knob of the top stage");
                report.text("Top stage by variance: **" + top + "** → knob **" + (chosen == null ? "none here" : chosen)
                        + "**; by mean: " + topMean + " → " + (byMean == null ? "none here" : byMean) + ".\n");
                MidTierSample.Stage base = top == null ? null : pooled(report.rows(p, b), b, top);
                double[] bMean = means(report, p, b);
                Double bP99 = Report.percentile(Report.merged(report.rows(p, b)), 99);
                List<List<String>> body = new ArrayList<>();
                List<String> rows = new ArrayList<>(List.of(b));
                rows.addAll(e.getValue());
                Map<String, Object> pj = new LinkedHashMap<>();
                for (String c : rows) {
                    String[] k = knob(c);
                    MidTierSample.Stage s = top == null ? null : pooled(report.rows(p, c), c, top);
                    double[] m = means(report, p, c);
                    Double p99 = Report.percentile(Report.merged(report.rows(p, c)), 99);
                    String role = k == null ? "default" : k[0].equals(chosen) ? "chosen knob" : "other knob";
                    double dm = Markdown.median(m) / Markdown.median(bMean) - 1;
                    Double dp = p99 == null || bP99 == null ? null : p99 / bP99 - 1;
                    double dv = s == null || base == null ? Double.NaN : s.varianceMicros2() / base.varianceMicros2() - 1;
                    body.add(List.of(c, k == null ? "–" : k[0] + " = " + k[1], role,
                            s == null ? "–" : String.format(Locale.ROOT, "%.0f", s.stddevMicros()),
                            c.equals(b) ? "" : pct(dv), cell(m, "%.2f"), c.equals(b) ? "" : pct(dm),
                            Markdown.ms(p99), c.equals(b) || dp == null ? "" : pct(dp)));
                    Map<String, Object> cj = new LinkedHashMap<>();
                    cj.put("role", role);
                    cj.put("top_stage_stddev_us", s == null ? null : MidTierSample.round(s.stddevMicros()));
                    cj.put("mean_ms", MidTierSample.round(Markdown.median(m)));
                    cj.put("p99_ms", p99 == null ? null : MidTierSample.round(p99));
                    cj.put("mean_change", c.equals(b) ? null : MidTierSample.round(dm));
                    cj.put("p99_change", c.equals(b) || dp == null ? null : MidTierSample.round(dp));
                    pj.put(c, cj);
                }
                report.table(List.of("configuration", "knob", "role", "σ of " + top + " µs", "Δ variance", "mean ms",
                        "Δ mean", "p99 ms", "Δ p99"), body);
                bj.put(p.label(), Map.of("top_stage", String.valueOf(top), "knob", String.valueOf(chosen),
                        "top_stage_by_mean", String.valueOf(topMean), "settings", pj));
            }
            out.put(b, bj);
        }
        report.result("knob_sweeps", out);
    }

    private static String pct(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%+.0f%%", v * 100);
    }

    /** Variance against mean of every (configuration, point), one series per stage, log-log. */
    private static void scatter(Report report, List<Point> points) throws IOException {
        LineChart ch = new LineChart("Variance vs mean per stage (every configuration and load)", "mean (µs)",
                "variance (µs²)").logX().logY().markersOnly();
        for (String st : STAGES) {
            for (String c : report.configs()) {
                for (Point p : points) {
                    MidTierSample.Stage s = pooled(report.rows(p, c), c, st);
                    if (s != null && s.meanMicros() > 0 && s.varianceMicros2() > 0) {
                        ch.point(st, s.meanMicros(), s.varianceMicros2());
                    }
                }
            }
        }
        report.chart(ch, "variability-variance-vs-mean.png");
    }
}
