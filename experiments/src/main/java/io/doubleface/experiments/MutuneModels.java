package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.MIN_P99_SAMPLES;
import static io.doubleface.experiments.Experiments.OPEN_LOOP_WARMUP;
import static io.doubleface.experiments.Experiments.TAXONOMY;
import static io.doubleface.experiments.Experiments.capacity;
import static io.doubleface.experiments.Experiments.fanout;
import static io.doubleface.experiments.Experiments.measuredSeconds;
import static io.doubleface.experiments.Experiments.or;
import static io.doubleface.experiments.Experiments.params;
import static io.doubleface.experiments.Experiments.prepareStatic;
import static io.doubleface.experiments.Experiments.query;
import static io.doubleface.experiments.Markdown.cell;
import static io.doubleface.experiments.Markdown.median;

import io.doubleface.experiments.Experiments.Point;
import io.doubleface.tune.Profile;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * μTune Fig. 8/11: open-loop p99 vs offered load for each configuration of the taxonomy; the
 * same runs are the training data of {@code doubleface train} (a profile is written next to the
 * report).
 */
final class MutuneModels implements Experiments.Experiment {
    @Override
    public Duration defaultWarmup() {
        return OPEN_LOOP_WARMUP;
    }

    static final List<Double> FRACTIONS = List.of(0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 1.0);
    static final List<Double> QUICK_FRACTIONS = List.of(0.1, 0.4, 0.7, 0.95);

    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        return o.quick() ? List.of("doubleface", "sip", "sdb", "adb") : TAXONOMY;
    }

    @Override
    public List<String> serveArgs(ExperimentRunner.Options o, List<String> configs) {
        return prepareStatic(configs);
    }

    @Override
    public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        if (o.loads() == null) {
            m.put("capacity_rps", Math.round(capacity(t, o, "doubleface", out)));
        }
        return m;
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        List<Point> ps = new ArrayList<>();
        if (o.loads() != null) {
            for (double l : o.loads()) {
                long rate = Math.round(l);
                ps.add(new Point("load " + rate, params("load", rate), p -> openArgs(rate, fanout(o))));
            }
            return ps;
        }
        for (double f : o.quick() ? QUICK_FRACTIONS : FRACTIONS) {
            ps.add(new Point(String.format(Locale.ROOT, "load %.2f", f), params("fraction", f),
                    p -> openArgs(rate(f, p), fanout(o))));
        }
        return ps;
    }

    static long rate(double fraction, Map<String, Object> prepared) {
        return Math.max(10, Math.round(fraction * ((Number) prepared.get("capacity_rps")).doubleValue()));
    }

    /**
     * At least the experiment's run time, and long enough for {@link #MIN_P99_SAMPLES} samples
     * at the point's rate: a p99 needs 100/(1-0.99) = 10,000 (docs/measuring.md#samples-per-percentile).
     */
    @Override
    public double runSeconds(ExperimentRunner.Options o, Point p, Map<String, Object> prepared) {
        Object load = p.params().get("load");
        double rate = load != null ? ((Number) load).doubleValue()
                : rate(((Number) p.params().get("fraction")).doubleValue(), prepared);
        return Math.max(runSeconds(o), Math.ceil(MIN_P99_SAMPLES / rate));
    }

    static List<String> openArgs(long rate, int fanout) {
        return List.of("--rate", Long.toString(rate), "--url", query(fanout, "small"), "--max-connections", "2048");
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return measuredSeconds(o, 2, 5);
    }

    @Override
    public String title() {
        return "p99 vs load for each threading configuration (μTune Fig. 8/11)";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        return "Open loop (Poisson arrivals, latency from the intended send time), " + Experiments.workload(o) + ", offered "
                + "load a fraction of doubleface's closed-loop capacity (or --loads). μTune's taxonomy: s/a = "
                + "synchronous/asynchronous, i/d = in-line/dispatch, b/p = block/poll (docs/models.md). A run is "
                + "saturated when it answered less than 95% of the offered load, more than 0.1% failed, or its p99 "
                + "exploded in every repeat (over 20 ms and 10x its lowest). The "
                + "profile built from these runs (profile.json) is what `doubleface train` writes.";
    }

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
    private static double offered(Report report, Point p, String c) {
        return median(report.values(p, c, "offered_rate"));
    }

    /**
     * Saturated: most repeats did not sustain the load ({@link #saturated(ExperimentRunner.Row)}),
     * or the p99 exploded in every repeat: the lowest p99 of the repeats over {@value #EXPLODED_MS}
     * ms and over 10x the configuration's lowest p99 of the experiment. (One stall of the shared
     * machine in one repeat made the first shipped profile mark {@code doubleface} saturated at
     * half its capacity; a saturated configuration explodes in every repeat.)
     */
    private static boolean saturated(Report report, Point p, String c) {
        List<ExperimentRunner.Row> rs = report.rows(p, c);
        if (rs.isEmpty() || rs.stream().filter(MutuneModels::saturated).count() * 2 > rs.size()) {
            return true;
        }
        double p99 = Arrays.stream(report.values(p, c, "p99_ms")).filter(v -> !Double.isNaN(v))
                .min().orElse(Double.NaN);
        double lowest = Double.NaN;
        for (Point q : report.points(x -> true)) {
            double v = median(report.values(q, c, "p99_ms"));
            if (!Double.isNaN(v) && (Double.isNaN(lowest) || v < lowest)) {
                lowest = v;
            }
        }
        return !Double.isNaN(p99) && p99 > EXPLODED_MS && p99 > 10 * lowest;
    }

    static final double EXPLODED_MS = 20;

    @Override
    public void report(Report report) throws IOException {
        List<Point> pts = report.points(x -> true);
        report.heading("Open-loop p99 (ms) vs offered load; 'sat' = saturated (under 95% answered, over 0.1% errors, or p99 "
                + "over 20 ms and 10x the configuration's lowest)");
        List<String> header = new ArrayList<>(List.of("offered req/s"));
        header.addAll(report.configs());
        header.add("best");
        List<List<String>> body = new ArrayList<>();
        List<List<String>> norm = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        String workload = Experiments.workload(report.options()).replaceAll(" \\(.*", "");
        LineChart ch = new LineChart("Open-loop p99 vs load, " + workload, "offered load (req/s)", "p99 (ms)").logY();
        for (Point p : pts) {
            double load = offered(report, p, report.configs().get(0));
            List<String> r = new ArrayList<>(List.of(String.format(Locale.ROOT, "%.0f", load)));
            List<String> n = new ArrayList<>(List.of(String.format(Locale.ROOT, "%.0f", load)));
            String best = null;
            double bestP99 = Double.NaN;
            for (String c : report.configs()) {
                double p99 = median(report.values(p, c, "p99_ms"));
                if (!saturated(report, p, c) && !Double.isNaN(p99) && (best == null || p99 < bestP99)) {
                    best = c;
                    bestP99 = p99;
                }
            }
            Map<String, Object> d = new LinkedHashMap<>();
            for (String c : report.configs()) {
                double p99 = median(report.values(p, c, "p99_ms"));
                boolean sat = saturated(report, p, c);
                r.add(sat ? "sat" : cell(report.values(p, c, "p99_ms"), "%.2f"));
                n.add(sat ? "sat" : Double.isNaN(bestP99) ? "n/a" : String.format(Locale.ROOT, "%.2f", p99 / bestP99));
                d.put(c, sat ? "saturated" : MidTierSample.round(p99));
                ch.point(c, offered(report, p, c), sat || Double.isNaN(p99) ? null : p99);
            }
            r.add(best == null ? "none" : best);
            n.add(best == null ? "none" : best);
            d.put("best", best);
            out.put(String.format(Locale.ROOT, "%.0f", load), d);
            body.add(r);
            norm.add(n);
        }
        report.table(header, body);
        report.heading("p99 relative to the best configuration at each load (1.00 = best)");
        report.table(header, norm);
        for (Point p : pts) {
            report.regime(p, String.format(Locale.ROOT, "%.0f req/s", offered(report, p, report.configs().get(0))));
        }
        report.result("p99_ms_by_load", out);
        report.chart(ch, "mutune-models-p99.png");
        Profile profile = profile(report);
        if (profile != null) {
            profile.write(report.dir().resolve("profile.json"));
            report.text("\nProfile of these runs: `profile.json` (peak-sustaining configuration: " + profile.peakSustaining()
                    + "; capacity per configuration: " + capacities(profile) + ").\n");
            report.heading("What the adapter runs at each load of this profile, and why (default margin and hysteresis; "
                    + "another configuration than the peak-sustaining one only where its repeats' p99s lie wholly below "
                    + "the peak-sustaining one's)");
            List<List<String>> rows = new ArrayList<>();
            for (Profile.Band band : profile.bands(io.doubleface.tune.TuneSettings.DEFAULT_MARGIN,
                    io.doubleface.tune.TuneSettings.DEFAULT_HYSTERESIS)) {
                rows.add(List.of(String.format(Locale.ROOT, "%.0f", band.load()), band.choice().name(), band.reason()));
            }
            report.table(List.of("load req/s", "runs", "why"), rows);
        }
    }

    private static String capacities(Profile p) {
        List<String> l = new ArrayList<>();
        for (io.doubleface.model.Configuration c : p.configurations()) {
            l.add(c.name() + " " + Math.round(p.capacity(c)));
        }
        return String.join(", ", l);
    }

    /**
     * The load-adapter profile of a mutune-models run: one point per (configuration, load), the
     * median over repeats with the range of the repeats' p99s.
     */
    static Profile profile(Report report) {
        boolean ycsb = report.options().service().isYcsb();
        Profile.Builder b = Profile.builder()
                .service(ycsb ? "ycsb fanout " + fanout(report.options()) + " small" : report.options().service().name() + " " + report.options().service().requests())
                .shards(ycsb ? report.options().driver() + ", " + report.options().shards() + " shards, " + report.options().records() + " records"
                        : report.options().shards() + " gRPC leaves, default data")
                .machine(String.valueOf(report.options().ioThreads()) + " I/O loop, mid-tier on CPUs "
                        + (report.options().midCpus() == null ? "any" : report.options().midCpus()) + "; "
                        + Runtime.getRuntime().availableProcessors() + " CPUs")
                .date(java.time.Instant.now().toString()).commit(ExperimentRunner.git("rev-parse", "HEAD"));
        int n = 0;
        for (String c : report.configs()) {
            if (Topology.isAdapter(c) || c.indexOf('@') >= 0) {
                continue;
            }
            for (Point p : report.points(x -> true)) {
                double load = offered(report, p, c);
                double p50 = median(report.values(p, c, "p50_ms"));
                double p99 = median(report.values(p, c, "p99_ms"));
                double p999 = median(report.values(p, c, "p999_ms"));
                if (Double.isNaN(load) || Double.isNaN(p50) || Double.isNaN(p99)) {
                    continue; // p99 not reportable (under 10,000 samples): no point
                }
                double thr = median(report.values(p, c, "throughput_rps"));
                double cpu = median(report.midValues(p, c, d -> d.seconds() > 0 ? d.cpuMillis() / 1000.0 / d.seconds() : 0));
                double[] repeats = Arrays.stream(report.values(p, c, "p99_ms")).filter(v -> !Double.isNaN(v)).toArray();
                double median = Math.max(p50, p99);
                double low = Math.min(median, Arrays.stream(repeats).min().orElse(median));
                double high = Math.max(median, Arrays.stream(repeats).max().orElse(median));
                b.point(c, new Profile.Point(load, p50 * 1000, median * 1000,
                        Double.isNaN(p999) ? Double.NaN : Math.max(median, p999) * 1000,
                        Double.isNaN(thr) ? 0 : thr,
                        Double.isNaN(cpu) ? 0 : cpu, saturated(report, p, c), low * 1000, high * 1000,
                        Math.max(1, repeats.length)));
                n++;
            }
        }
        return n == 0 ? null : b.build();
    }
}
