package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.MIN_P99_SAMPLES;
import static io.doubleface.experiments.Experiments.OPEN_LOOP_WARMUP;
import static io.doubleface.experiments.Experiments.STEADY;
import static io.doubleface.experiments.Experiments.STEADY_QUICK;
import static io.doubleface.experiments.Experiments.capacity;
import static io.doubleface.experiments.Experiments.fanout;
import static io.doubleface.experiments.Experiments.measuredSeconds;
import static io.doubleface.experiments.Experiments.params;
import static io.doubleface.experiments.Experiments.prepareStatic;
import static io.doubleface.experiments.Experiments.query;
import static io.doubleface.experiments.Markdown.cell;
import static io.doubleface.experiments.Markdown.ms;

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

/**
 * μTune Fig. 14: loads stepping up then down in one open-loop run; p99 per step for every
 * static configuration, the baselines and {@code adaptive}, and what the adapter chose.
 */
final class MutuneSteady implements Experiments.Experiment {
    @Override
    public Duration defaultWarmup() {
        return OPEN_LOOP_WARMUP;
    }

    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        return o.quick() ? List.of("doubleface", "sip", "adaptive")
                : List.of("doubleface", "doubleface-poll", "sip", "sdb", "adb", "fm", "adaptive-window", "adaptive");
    }

    @Override
    public List<String> serveArgs(ExperimentRunner.Options o, List<String> configs) {
        return prepareStatic(configs);
    }

    @Override
    public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
        return Map.of("capacity_rps", Math.round(capacity(t, o, "doubleface", out)));
    }

    static double stepSeconds(ExperimentRunner.Options o) {
        return measuredSeconds(o, 3, 6);
    }

    /** A step lasts at least stepSeconds, and 1 s more than MIN_P99_SAMPLES need at its rate. */
    static long stepMillis(ExperimentRunner.Options o, long rate) {
        return Math.round(1000 * Math.max(stepSeconds(o), 1 + Math.ceil((double) MIN_P99_SAMPLES / rate)));
    }

    static List<Long> rates(ExperimentRunner.Options o, Map<String, Object> prepared) {
        List<Long> out = new ArrayList<>();
        if (o.loads() != null) { // --loads: the steps as given (e.g. within a profile's trained range)
            for (double l : o.loads()) {
                out.add(Math.round(l));
            }
            return out;
        }
        double cap = ((Number) prepared.get("capacity_rps")).doubleValue();
        for (double f : fractions(o)) {
            out.add(Math.max(10, Math.round(f * cap)));
        }
        return out;
    }

    static List<Double> fractions(ExperimentRunner.Options o) {
        return o.quick() ? STEADY_QUICK : STEADY;
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        return List.of(new Point("steps", params("fractions", fractions(o)), p -> {
            StringBuilder sched = new StringBuilder("steps:");
            for (long rate : rates(o, p)) {
                sched.append(sched.length() > 6 ? "," : "").append(rate).append('@').append(stepMillis(o, rate))
                        .append("ms");
            }
            return List.of("--schedule", sched.toString(), "--url", query(fanout(o), "small"), "--max-connections", "2048");
        }));
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return stepSeconds(o) * (o.loads() != null ? o.loads().size() : fractions(o).size());
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o, Point p, Map<String, Object> prepared) {
        long ms = 0;
        for (long rate : rates(o, prepared)) {
            ms += stepMillis(o, rate);
        }
        return ms / 1000.0;
    }

    @Override
    public String title() {
        return "Steady loads stepping up and down: static configurations vs the load adapter (μTune Fig. 14)";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        return "One open-loop run per configuration whose offered load steps through fractions of doubleface's "
                + "closed-loop capacity, up then down; " + Experiments.workload(o) + "; each step long enough for 10,000 "
                + "samples. p99 per step from the 1-s interval logs, the first second of each step left out (the "
                + "switch transient is in the flash experiment). "
                + "adaptive = μTune's policy over the trained profile (ring-buffer detector); adaptive-window = the "
                + "same with a 5 ms time-window detector; fm = only the pool sizes of the peak-sustaining "
                + "configuration vary. Each adapter runs in its own mid-tier process (docs/tuning.md).";
    }

    @Override
    public void report(Report report) throws IOException {
        Point pt = report.points(x -> true).get(0);
        List<Long> rates = rates(report.options(), report.prepared());
        double cap = ((Number) report.prepared().get("capacity_rps")).doubleValue();
        report.heading("p99 (ms) per load step (first second of each step left out), all repeats merged");
        report.text("doubleface's closed-loop capacity: " + Math.round(cap) + " req/s; steps of at least "
                + stepSeconds(report.options()) + " s, longer where 10,000 samples need it.\n");
        List<String> header = new ArrayList<>(List.of("step", "offered req/s"));
        header.addAll(report.configs());
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
            double len = stepMillis(report.options(), rate) / 1000.0;
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
            for (String c : report.configs()) {
                Histogram h = new Histogram(3);
                Map<String, Integer> picks = new LinkedHashMap<>();
                List<Double> reps = new ArrayList<>();
                for (ExperimentRunner.Row row : report.rows(pt, c)) {
                    Histogram one = new Histogram(3);
                    for (Report.Interval iv : report.intervals(row)) {
                        if (iv.at() >= from - 0.01 && iv.at() + iv.seconds() <= to + 0.2) {
                            one.add(iv.latency());
                        }
                    }
                    h.add(one);
                    Double p = Report.percentile(one, 99);
                    if (p != null) {
                        reps.add(p);
                    }
                    if (Topology.isAdapter(c)) {
                        String a = Report.activeAt(report.adapterSwitches(row, Report.logStart(row)), Report.initialOf(row), (from + to) / 2);
                        picks.merge(a, 1, Integer::sum);
                    }
                }
                double[] rv = reps.stream().mapToDouble(Double::doubleValue).toArray();
                perRepeat.put(c, rv);
                sr.add(cell(rv, "%.2f"));
                Double p99 = Report.percentile(h, 99);
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
        report.table(header, body);
        report.text("\nIn parentheses: the configuration the adapter had active in the middle of the step. The last "
                + "column is the run-to-run noise of the best static configuration at that step: its largest "
                + "repeat's p99 over its smallest.\n");
        report.heading("p99 (ms) per load step, one value per repeat: median (min–max)");
        List<String> sh = new ArrayList<>(List.of("step", "offered req/s"));
        sh.addAll(report.configs());
        report.table(sh, spreadBody);
        report.lostAndSwitches(pt);
        report.regime(pt, "the whole run (all steps)");
        report.result("steps", out);
        report.result("adapter_choices", chosen);
        report.chart(ch, "mutune-steady-p99.png");
    }
}
