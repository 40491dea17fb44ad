package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.FIVE_MODELS;
import static io.doubleface.experiments.Experiments.capacity;
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
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** A short tour: every model, a closed-loop and an open-loop run, separate pinned processes. */
final class Demo implements Experiments.Experiment {
    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        return FIVE_MODELS;
    }

    @Override
    public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
        double min = Double.MAX_VALUE;
        List<String> configs = o.configs() != null ? o.configs() : FIVE_MODELS;
        for (String c : configs) {
            t.switchTo(c);
            Topology.LoadRun lr = t.load("capacity " + c, List.of("--users", "16", "--url", query(fanout(o), "small"),
                    "--keys", Long.toString(o.records()), "--warmup", "500ms", "--duration",
                    (o.quick() ? 1000 : 2000) + "ms"), Duration.ofSeconds(60));
            min = Math.min(min, lr.number("throughput_rps"));
        }
        double rate = Math.max(10, Math.round(min * 0.5));
        out.printf(Locale.ROOT, "experiment: lowest capacity %.0f req/s; open loop at 50%% = %.0f req/s%n", min, rate);
        return Map.of("rate_rps", rate, "lowest_capacity_rps", Math.round(min));
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        return List.of(
                new Point("closed c=16", params("mode", "closed", "concurrency", 16, "fanout", fanout(o)),
                        p -> List.of("--users", "16", "--url", query(fanout(o), "small"))),
                new Point("open 50%", params("mode", "open", "fanout", fanout(o)),
                        p -> List.of("--rate", String.valueOf(((Number) p.get("rate_rps")).longValue()), "--url",
                                query(fanout(o), "small"))));
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return measuredSeconds(o, 1.5, 5);
    }

    @Override
    public String title() {
        return "A short tour of the five models";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        return "Fanout 5, small replies: a closed-loop run (16 users) for capacity and an open-loop run at half "
                + "the lowest capacity for latency.";
    }

    @Override
    public void report(Report report) {
        report.heading("Closed loop (16 users) and open loop (50% of the lowest capacity)");
        List<Point> pts = report.points(x -> true);
        Point closed = pts.get(0);
        Point open = pts.get(1);
        List<List<String>> body = new ArrayList<>();
        for (String c : report.configs()) {
            body.add(List.of(c, cell(report.values(closed, c, "throughput_rps"), "%.0f"),
                    cell(report.midValues(closed, c, MidTierSample.Delta::switchesPerRequest), "%.3f"),
                    cell(report.midValues(closed, c, d -> d.eventsPerWakeup("io")), "%.2f"),
                    cell(report.values(open, c, "p50_ms"), "%.2f"), cell(report.values(open, c, "p99_ms"), "%.2f"),
                    cell(report.values(open, c, "p999_ms"), "%.2f")));
        }
        report.table(List.of("configuration", "closed-loop req/s", "switches/request", "events/wake-up (io)",
                "open p50 ms", "open p99 ms", "open p99.9 ms"), body);
        report.result("rate_rps", report.prepared().get("rate_rps"));
    }
}
