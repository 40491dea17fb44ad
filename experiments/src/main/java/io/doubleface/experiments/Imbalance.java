package io.doubleface.experiments;

import static io.doubleface.experiments.Experiments.fanout;
import static io.doubleface.experiments.Experiments.measuredSeconds;
import static io.doubleface.experiments.Experiments.params;
import static io.doubleface.experiments.Experiments.query;
import static io.doubleface.experiments.Markdown.cell;
import static io.doubleface.experiments.Markdown.median;

import io.doubleface.experiments.Experiments.Point;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Paper Tables 1–3: Type-2a with 1 frontend + 1/2/4 backend loops vs doubleface. */
final class Imbalance implements Experiments.Experiment {
    @Override
    public List<String> defaultConfigs(ExperimentRunner.Options o) {
        return List.of("type2a-1f1b", "type2a-1f2b", "type2a-1f4b", "doubleface");
    }

    @Override
    public List<Point> points(ExperimentRunner.Options o) {
        int c = o.concurrency() != null ? o.concurrency().get(0) : 100;
        int f = o.fanouts() != null ? o.fanouts().get(0) : fanout(o);
        String size = o.sizes() != null ? o.sizes().get(0) : "small";
        return List.of(new Point(size + " c=" + c + " k=" + f, params("size", size, "concurrency", c, "fanout", f),
                p -> List.of("--users", Integer.toString(c), "--url", query(f, size))));
    }

    @Override
    public String externalRefusal(ExternalTopology e) {
        return "its tables count the mid-tier's active threads per run in /proc/PID/task, which needs a mid-tier "
                + "process of this runner on this machine";
    }

    @Override
    public double runSeconds(ExperimentRunner.Options o) {
        return measuredSeconds(o, 2, 8);
    }

    @Override
    public String title() {
        return "Load imbalance between frontend and backend loops (paper Tables 1–3)";
    }

    @Override
    public String description(ExperimentRunner.Options o) {
        return "Closed loop, fanout 5, small replies. Wake-ups are event-loop returns from epoll_wait with work "
                + "(LoopStats); events per wake-up = I/O events + tasks handled per wake-up. 'io' loops are the "
                + "frontends (and everything under doubleface), 't2a-be' the Type-2a backend loops.";
    }

    @Override
    public void report(Report report) throws IOException {
        for (Point p : report.points(x -> true)) {
            report.heading(p.label() + ": loops, wake-ups and threads (median of repeats)");
            List<List<String>> body = new ArrayList<>();
            Map<String, Object> out = new LinkedHashMap<>();
            LineChart ch = new LineChart("Events per wake-up, frontend (io) vs backend (t2a-be) loops", "configuration",
                    "events per wake-up").categories(report.configs());
            int i = 0;
            for (String c : report.configs()) {
                double[] thr = report.values(p, c, "throughput_rps");
                double[] feWake = report.midValues(p, c, d -> d.wakeupsPerSecond("io"));
                double[] feEv = report.midValues(p, c, d -> d.eventsPerWakeup("io"));
                double[] beWake = report.midValues(p, c, d -> d.wakeupsPerSecond("t2a-be"));
                double[] beEv = report.midValues(p, c, d -> d.eventsPerWakeup("t2a-be"));
                double[] csPerS = report.midValues(p, c, d -> d.contextSwitches() / d.seconds());
                double[] csPerReq = report.midValues(p, c, MidTierSample.Delta::switchesPerRequest);
                double[] active = report.midValues(p, c, d -> d.activeThreads());
                double[] cpu = report.midValues(p, c, d -> d.cpuMillis() / 10.0 / d.seconds());
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
            report.table(List.of("configuration", "req/s", "frontend wake-ups/s", "frontend events/wake-up",
                    "backend wake-ups/s", "backend events/wake-up", "context switches/s", "switches/request",
                    "active threads", "mid-tier CPU %"), body);
            report.result(p.label(), out);
            report.chart(ch, "imbalance-events-per-wakeup.png");
        }
    }
}
