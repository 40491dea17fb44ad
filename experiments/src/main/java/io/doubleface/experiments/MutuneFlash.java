package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.OPEN_LOOP_WARMUP;
import static io.doubleface.experiments.Experiments.capacity;
import static io.doubleface.experiments.Experiments.fanout;
import static io.doubleface.experiments.Experiments.params;
import static io.doubleface.experiments.Experiments.prepareStatic;
import static io.doubleface.experiments.Experiments.query;
import static io.doubleface.experiments.Markdown.median;
import static io.doubleface.experiments.Markdown.ms;

import io.doubleface.experiments.Experiments.Point;
import org.HdrHistogram.Histogram;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** μTune Table 2: a flash crowd: 100 req/s, a second near capacity, 100 req/s. */
final class MutuneFlash implements Experiments.Experiment {
    @Override
    public Duration defaultWarmup() {
        return OPEN_LOOP_WARMUP;
    }

    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        return o.quick() ? List.of("doubleface", "adaptive") : List.of("doubleface", "sip", "fm", "adaptive");
    }

    @Override
    public List<String> serveArgs(ExperimentRunner.Options o, List<String> configs) {
        return prepareStatic(configs);
    }

    @Override
    public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
        if (o.loads() != null) { // --loads SPIKE: the spike's rate as given, no capacity run
            long spike = Math.round(o.loads().get(0));
            out.printf(Locale.ROOT, "experiment: spike at %d req/s (--loads)%n", spike);
            return params("capacity_rps", null, "spike_rps", spike);
        }
        double cap = capacity(t, o, "doubleface", out);
        return params("capacity_rps", Math.round(cap), "spike_rps", Math.round(cap * 0.9));
    }

    static long calmMillis(ExperimentRunner.Options o) {
        return o.duration() != null ? o.duration().toMillis() : o.quick() ? 5000 : 30_000;
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        long calm = calmMillis(o);
        return List.of(new Point("flash", params("calm_ms", calm, "spike_ms", 1000), p -> List.of("--schedule",
                "flash:100@" + calm + "ms," + p.get("spike_rps") + "@1s,100@" + calm + "ms", "--url",
                query(fanout(o), "small"), "--max-connections", "4096")));
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return (2 * calmMillis(o) + 1000) / 1000.0;
    }

    @Override
    public String title() {
        return "Flash crowd: 100 req/s, one second near capacity, 100 req/s (μTune Table 2)";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        return "Open loop: 100 req/s, then 90% of doubleface's closed-loop capacity for 1 s, then 100 req/s; "
                + Experiments.workload(o) + ". Per configuration: latency before, during and after the spike from the 1-s "
                + "interval logs, the worst request, the time until p99 is back within 1.5x of its pre-spike "
                + "value, errors, and the adapter's switches.";
    }

    @Override
    public void report(Report report) throws IOException {
        Point pt = report.points(x -> true).get(0);
        double calm = ((Number) pt.params().get("calm_ms")).doubleValue() / 1000.0;
        report.heading("Latency around the flash crowd (ms), all repeats merged");
        report.text("100 req/s for " + calm + " s, " + report.prepared().get("spike_rps") + " req/s for 1 s (" + (report.prepared().get("capacity_rps")
                == null ? "--loads" : "90% of doubleface's closed-loop capacity, " + report.prepared().get("capacity_rps") + " req/s")
                + "), 100 req/s for " + calm + " s. "
                + "At 100 req/s a p99 needs 100 s of samples (docs/measuring.md#samples-per-percentile), so the calm phases report p50/p90 "
                + "and the recovery is judged on each second's worst request: recovered = the first second after "
                + "the spike whose max is within 2x of the calm seconds' median max.\n");
        List<List<String>> body = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        LineChart ch = new LineChart("Worst request per second around the flash crowd", "seconds since the spike began",
                "max latency (ms)").logY();
        for (String c : report.configs()) {
            Histogram before = new Histogram(3);
            Histogram spike = new Histogram(3);
            Histogram after = new Histogram(3);
            Map<Integer, Histogram> bySecond = new java.util.TreeMap<>();
            List<Double> calmMax = new ArrayList<>();
            for (ExperimentRunner.Row row : report.rows(pt, c)) {
                for (Report.Interval iv : report.intervals(row)) {
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
            out.put(c, params("p50_calm_before_ms", Report.percentile(before, 50), "p90_calm_before_ms", Report.percentile(before, 90),
                    "p50_spike_ms", Report.percentile(spike, 50), "p90_spike_ms", Report.percentile(spike, 90), "max_spike_ms",
                    spike.getMaxValue() / 1000.0, "p90_calm_after_ms", Report.percentile(after, 90), "max_ms", max,
                    "calm_second_max_median_ms", calmLevel, "recovered_within_s",
                    recovered == null ? null : recovered + 1));
        }
        report.table(List.of("configuration", "p50 before", "p90 before", "p50 spike (-0.5..+2.5 s)", "p90 spike", "max spike",
                "p90 after (from +3 s)", "max overall", "back to calm"), body);
        report.lostAndSwitches(pt);
        report.regime(pt, "the whole run (calm, spike, calm)");
        report.result("flash", out);
        report.chart(ch, "mutune-flash-max.png");
    }

    private static String pct(Histogram h, double q) {
        return ms(Report.percentile(h, q));
    }
}
