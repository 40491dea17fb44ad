package io.doubleface.server.internal;

import io.doubleface.driver.spi.ResilientDriver;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.Json;
import io.doubleface.internal.loop.ThreadStats;
import io.doubleface.tune.LoadAdapter;

/**
 * {@link ServerStats} as the {@code /admin/stats} document. Its field names, their order and the
 * nesting are a contract: tests, the CLI, the experiment runner and the bench scripts read them
 * (docs/api.md, "What /admin/stats says of the server"), so a change here is a change of that contract.
 * Doubles are written rounded to three decimals ({@link Json#value(double)}).
 */
final class StatsJson {

    private StatsJson() {
    }

    static String write(ServerStats s) {
        Json j = new Json().begin();
        j.field("config", s.config());
        j.field("version", s.version());
        j.field("uptime_ms", s.uptimeMs());
        j.field("deadline_ms", s.deadlineMs());
        // the first backend's shard list, as before there were several (scripts read these two)
        j.field("driver", s.backends().get(0).driver());
        j.field("shards", s.backends().get(0).shards());
        j.key("backends").beginArray();
        for (ServerStats.Backend b : s.backends()) {
            backend(j, b);
        }
        j.endArray();
        j.key("routes").beginArray();
        for (ServerStats.Route r : s.routes()) {
            j.begin();
            j.field("route", r.route());
            j.field("answered", r.answered());
            r.outcomes().forEach((o, n) -> {
                if (n > 0) {
                    j.field(o.label(), n);
                }
            });
            j.field("mean_ms", r.meanMs());
            j.end();
        }
        j.endArray();
        j.key("requests").begin();
        j.field("admitted", s.requests().admitted());
        s.requests().outcomes().forEach((o, n) -> j.field(o.label(), n));
        j.field("answered", s.requests().answered());
        j.end();
        ServerStats.Admission adm = s.admission();
        j.key("admission").begin();
        j.field("mode", adm.mode());
        if (adm.on()) {
            j.field("limit", adm.limit());
            j.field("in_flight", adm.inFlight());
            j.field("refused", adm.refused());
        }
        j.end();
        j.key("errors").begin();
        for (ServerStats.ErrorCount e : s.errors()) {
            j.field(e.kind(), e.count());
            j.field(e.kind() + "_unlogged", e.unlogged());
        }
        j.end();
        if (s.stages() != null) {
            j.key("stages").begin();
            j.field("one_in", s.stages().oneIn());
            s.stages().byConfiguration().forEach((config, m) -> {
                j.key(config).begin();
                m.forEach((stage, x) -> j.key(stage.label()).begin().field("count", x.count())
                        .field("mean_us", x.meanMicros()).field("stddev_us", x.stddevMicros()).field("cv2", x.cv2())
                        .field("p50_us", x.p50Micros()).field("p99_us", x.p99Micros())
                        .field("p999_us", x.p999Micros()).field("sum_us", x.sumMicros())
                        // X² in µs² as an integer: three decimals of a double would overflow the rounding
                        .field("sum_sq_us2", Math.round(x.sumSqMicros2())).end());
                j.end();
            });
            j.end();
        }
        ServerStats.Connections c = s.connections();
        j.field("slow_readers_closed", c.slowReadersClosed());
        j.field("slow_readers_closed_server_bound", c.slowReadersClosedServerBound());
        j.field("behind_bytes", c.behindBytes());
        j.field("connections_refused", c.refused());
        j.key("loops").beginArray();
        for (ServerStats.Loop l : s.loops()) {
            loop(j, l);
        }
        j.endArray();
        j.key("threads").beginArray();
        for (ThreadStats.Group g : s.threads()) {
            j.begin();
            j.field("group", g.name());
            j.field("threads", g.threads());
            j.field("voluntary_switches", g.voluntarySwitches());
            j.field("involuntary_switches", g.involuntarySwitches());
            j.field("cpu_ms", g.cpuMillis());
            j.end();
        }
        j.endArray();
        j.key("configurations").beginArray();
        s.configurations().forEach(j::value);
        j.endArray();
        j.field("switches", s.switches());
        j.key("switch_log").beginArray();
        for (FanoutEngine.SwitchRecord r : s.switchLog()) {
            j.begin().field("at", r.at().toString()).field("from", r.from()).field("to", r.to()).end();
        }
        j.endArray();
        if (s.adapter() != null) {
            adapter(j, s.adapter());
        }
        j.end();
        return j.toString();
    }

    private static void backend(Json j, ServerStats.Backend b) {
        j.begin();
        j.field("name", b.name());
        j.field("driver", b.driver());
        j.field("scheme", b.scheme());
        j.field("shards", b.shards());
        if (!b.topology().isEmpty()) {
            j.key("topology").tree(b.topology());
        }
        if (b.resilience() != null) {
            ResilientDriver.Stats r = b.resilience().counts();
            j.key("resilience").begin();
            j.field("policy", b.resilience().settings()); // the field keeps its name: /admin/stats is an edge
            j.field("retries", r.retries());
            j.field("retries_denied", r.retriesDenied());
            j.field("hedges", r.hedges());
            j.field("hedge_wins", r.hedgeWins());
            j.field("hedges_denied", r.hedgesDenied());
            j.field("circuits_opened", r.circuitsOpened());
            j.field("rejected", r.rejected());
            j.field("open_circuits", r.openCircuits());
            j.end();
        }
        j.end();
    }

    private static void loop(Json j, ServerStats.Loop l) {
        j.begin();
        j.field("name", l.name());
        j.field("group", l.group());
        j.field("iterations", l.iterations());
        j.field("wakeups", l.wakeups());
        j.field("events", l.events());
        j.field("events_per_iteration", l.eventsPerIteration());
        j.field("events_per_wakeup", l.eventsPerWakeup());
        j.field("busy_ms", l.busyMs());
        j.field("idle_ms", l.idleMs());
        j.field("tail_batches", l.tailBatches());
        j.field("tail_replies", l.tailReplies());
        j.field("tail_batch_mean", l.tailBatchMean());
        j.field("tail_batch_max", l.tailBatchMax());
        j.key("tail_batch_histogram_log2").beginArray();
        l.tailBatchHistogramLog2().forEach(j::value);
        j.endArray();
        j.end();
    }

    private static void adapter(Json j, ServerStats.Adapter a) {
        j.key("adapter").begin();
        j.field("policy", a.strategy()); // the field keeps its name: /admin/stats is an edge
        if (a.decider() != null) {
            j.field("decision_policy", a.decider()); // the user's own: absent with the built-in ones
        }
        j.field("detector", a.detector());
        j.field("profile", a.profile());
        j.field("load", a.load());
        j.field("fast_load", a.fastLoad());
        j.field("count_window_ms", a.countWindowMs());
        j.field("saturation", a.saturation());
        j.field("saturation_window_ms", a.saturationWindowMs());
        if (!Double.isNaN(a.utilization())) {
            j.field("utilization", a.utilization());
        }
        if (!Double.isNaN(a.predictedP99Us())) {
            j.field("predicted_p99_us", a.predictedP99Us());
        }
        j.key("choices").beginArray();
        a.choices().forEach(j::value);
        j.endArray();
        j.field("switches", a.switches());
        j.key("switches_by_reason").begin().fields(a.switchesByReason()).end();
        j.key("live").beginArray();
        for (LoadAdapter.LiveCell c : a.live()) {
            j.begin().field("config", c.config()).field("load", Math.round(c.load())).field("samples", c.samples())
                    .field("errors", c.errors());
            if (!Double.isNaN(c.p99Micros())) {
                j.field("p99_us", c.p99Micros());
            }
            if (!Double.isNaN(c.profileP99Micros())) {
                j.field("profile_p99_us", c.profileP99Micros());
            }
            j.end();
        }
        j.endArray();
        j.key("switch_log").beginArray();
        for (LoadAdapter.SwitchEvent e : a.switchLog()) {
            j.begin().field("at", e.at().toString()).field("load", e.load()).field("from", e.from()).field("to", e.to());
            if (!Double.isNaN(e.predictedP99Micros())) {
                j.field("predicted_p99_us", e.predictedP99Micros());
            }
            j.field("reason", e.reason()).end();
        }
        j.endArray();
        j.end();
    }
}
