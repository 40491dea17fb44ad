package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.FIVE_MODELS;
import static io.doubleface.experiments.Experiments.fanout;
import static io.doubleface.experiments.Experiments.measuredSeconds;
import static io.doubleface.experiments.Experiments.or;
import static io.doubleface.experiments.Experiments.params;
import static io.doubleface.experiments.Experiments.query;

import io.doubleface.experiments.Experiments.Point;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Paper Fig. 4/5: throughput and latency vs concurrency, closed loop, fanout 5. */
final class Concurrency implements Experiments.Experiment {
    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        return FIVE_MODELS;
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        List<Point> ps = new ArrayList<>();
        int fanout = fanoutOf(o);
        for (String size : or(o.sizes(), List.of("small", "large"))) {
            for (int c : or(o.concurrency(), o.quick() ? List.of(1, 16, 128) : List.of(1, 4, 16, 64, 256, 1024))) {
                ps.add(new Point(size + " c=" + c, params("size", size, "concurrency", c, "fanout", fanout),
                        p -> List.of("--users", Integer.toString(c), "--url", query(fanout, size))));
            }
        }
        return ps;
    }

    /** The fanout of every point: the first of {@code --fanouts}, else the standard one. */
    private static int fanoutOf(ExperimentRunner.Options o) {
        return o.fanouts() != null ? o.fanouts().get(0) : fanout(o);
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return measuredSeconds(o, 1.5, 4);
    }

    @Override
    public String title() {
        return "Throughput and latency vs concurrency (paper Fig. 4/5)";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        return "Closed loop (N users, zero think time), fanout " + fanoutOf(o) + ", small (0.1 kB) and large (20 kB) shard replies. "
                + "Latency here is closed-loop latency (each user waits for its answer), not an open-loop p99.";
    }

    @Override
    public void report(Report r) throws IOException {
        for (String size : r.distinct("size")) {
            List<Point> pts = r.points(p -> size.equals(p.params().get("size")));
            r.heading("Size " + size + ": throughput (req/s, median of repeats; spread min–max)");
            r.metricTable(pts, "concurrency", "throughput_rps", "%.0f");
            r.heading("Size " + size + ": closed-loop p99 latency (ms)");
            r.metricTable(pts, "concurrency", "p99_ms", "%.2f");
            r.heading("Size " + size + ": mid-tier context switches per request");
            r.midTable(pts, "concurrency", d -> d.switchesPerRequest(), "%.3f");
            r.heading("Size " + size + ": mid-tier CPU µs per request");
            r.midTable(pts, "concurrency", d -> d.cpuMicrosPerRequest(), "%.1f");
            r.plot(pts, "concurrency", "throughput_rps", true, false, "concurrency-" + size + "-throughput.png",
                    "Throughput vs concurrency, fanout " + fanoutOf(r.options()) + ", " + size, "concurrent users (closed loop)", "requests/s");
            r.plot(pts, "concurrency", "p99_ms", true, true, "concurrency-" + size + "-p99.png",
                    "Closed-loop p99 vs concurrency, fanout " + fanoutOf(r.options()) + ", " + size, "concurrent users (closed loop)", "p99 (ms)");
        }
    }
}
