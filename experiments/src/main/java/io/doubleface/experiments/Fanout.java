package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.FIVE_MODELS;
import static io.doubleface.experiments.Experiments.measuredSeconds;
import static io.doubleface.experiments.Experiments.or;
import static io.doubleface.experiments.Experiments.params;
import static io.doubleface.experiments.Experiments.query;

import io.doubleface.experiments.Experiments.Point;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Paper Fig. 7/13: throughput vs fanout, normalized to doubleface. */
final class Fanout implements Experiments.Experiment {
    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        return FIVE_MODELS;
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        List<Point> ps = new ArrayList<>();
        for (String size : or(o.sizes(), List.of("small", "large"))) {
            for (int c : or(o.concurrency(), o.quick() ? List.of(20) : List.of(20, 100))) {
                for (int f : or(o.fanouts(), o.quick() ? List.of(1, 5, 20) : List.of(1, 2, 5, 10, 20))) {
                    ps.add(new Point(size + " c=" + c + " k=" + f, params("size", size, "concurrency", c, "fanout", f),
                            p -> List.of("--users", Integer.toString(c), "--url", query(f, size))));
                }
            }
        }
        return ps;
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return measuredSeconds(o, 1.5, 3);
    }

    @Override
    public String title() {
        return "Throughput vs fanout, normalized to doubleface (paper Fig. 7/13)";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        return "Closed loop at concurrency 20 and 100, fanout 1…20, small (0.1 kB) and large (20 kB) shard replies. "
                + "Ratios are per repeat (each configuration against doubleface in the same pass), then the median.";
    }

    @Override
    public void report(Report r) throws IOException {
        for (String size : r.distinct("size")) {
            for (String c : r.distinct("concurrency")) {
                List<Point> pts = r.points(p -> size.equals(p.params().get("size"))
                        && c.equals(String.valueOf(p.params().get("concurrency"))));
                if (pts.isEmpty()) {
                    continue;
                }
                r.heading("Size " + size + ", concurrency " + c + ": throughput (req/s)");
                r.metricTable(pts, "fanout", "throughput_rps", "%.0f");
                String ref = r.reference("doubleface");
                r.heading("Size " + size + ", concurrency " + c + ": throughput relative to " + ref);
                r.ratioTable(pts, "fanout", "throughput_rps", ref);
                r.ratioPlot(pts, "fanout", "throughput_rps", ref, "fanout-" + size + "-c" + c + ".png",
                        "Throughput / " + ref + "'s, " + size + " replies, " + c + " users", "fanout");
                r.heading("Size " + size + ", concurrency " + c + ": mid-tier context switches per request");
                r.midTable(pts, "fanout", d -> d.switchesPerRequest(), "%.2f");
                r.heading("Size " + size + ", concurrency " + c + ": mid-tier CPU µs per request");
                r.midTable(pts, "fanout", d -> d.cpuMicrosPerRequest(), "%.1f");
            }
        }
    }
}
