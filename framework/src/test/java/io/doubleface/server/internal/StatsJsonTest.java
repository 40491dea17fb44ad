package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.driver.spi.ResilientDriver;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.StageStats;
import io.doubleface.internal.loop.ThreadStats;
import io.doubleface.tune.LoadAdapter;
import java.time.Instant;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code /admin/stats} byte for byte: a snapshot with every optional part (a backend's topology
 * and resilience, stage tracing, admission control, the load adapter with a user's decision
 * policy) and one without any. The field names, their order and their nesting are the document
 * the server had before the typed snapshot (tests, the CLI, the experiment runner and the bench
 * scripts parse it); a change to these strings is a change of that contract.
 */
class StatsJsonTest {

    private static final Instant AT = Instant.parse("2026-11-29T05:00:00Z");

    @Test
    void everyPartInItsPlace() {
        Map<String, Object> topology = new LinkedHashMap<>();
        topology.put("slot_map_version", 3L);
        topology.put("masters", List.of("a:1", "b:2"));
        ServerStats.Backend cluster = new ServerStats.Backend("cache", "redis-cluster://h:7000", "redis-cluster", 2,
                topology, null);
        ServerStats.Backend resilient = new ServerStats.Backend("posts", "kv://h:7101-7104", "kv", 4, Map.of(),
                new ServerStats.Resilience("retries 1", new ResilientDriver.Stats(1, 2, 3, 4, 5, 6, 7, 8)));
        Map<Outcome, Long> routeCounts = new EnumMap<>(Outcome.class);
        routeCounts.put(Outcome.OK, 3L);
        routeCounts.put(Outcome.TIMEOUT, 1L);
        Map<Outcome, Long> requests = new EnumMap<>(Outcome.class);
        requests.put(Outcome.OK, 3L);
        requests.put(Outcome.NOT_FOUND, 2L);
        requests.put(Outcome.TIMEOUT, 1L);
        Map<StageStats.Stage, StageStats.Summary> stages = new EnumMap<>(StageStats.Stage.class);
        stages.put(StageStats.Stage.PLAN, new StageStats.Summary(4, 12.3456, 1.5, 0.0148, 12, 15, 15, 49.3824, 612.5));
        stages.put(StageStats.Stage.TOTAL, new StageStats.Summary(4, 850.0, 10.0, 0.0001, 849, 861, 861, 3400.0, 2890400.4));
        Map<String, Long> byReason = new LinkedHashMap<>();
        byReason.put("quiet", 2L);
        byReason.put("busy", 1L);
        ServerStats s = new ServerStats("type2a-1f2b", "0.1.0", 1234, 1000, List.of(cluster, resilient),
                List.of(new ServerStats.Route("GET /users/{user}", 4, routeCounts, 0.85)),
                new ServerStats.Requests(4, requests), new ServerStats.Admission("adaptive", 120, 3, 9),
                List.of(new ServerStats.ErrorCount("decode", 1, 0), new ServerStats.ErrorCount("service", 2, 1)),
                new ServerStats.Stages(1, Map.of("doubleface", stages)),
                new ServerStats.Connections(5, 1, 4096, 2),
                List.of(new ServerStats.Loop("io-0", "io", 100, 40, 250, 12_345_678, 2_000_000_000, 10, 35, 9,
                        List.of(0L, 4L, 6L))),
                List.of(new ThreadStats.Group("io", 2, 30, 4, 120)),
                List.of("doubleface", "type2a-1f2b"), 1,
                List.of(new FanoutEngine.SwitchRecord(AT, "doubleface", "type2a-1f2b")),
                new ServerStats.Adapter("adaptive", "ThresholdPolicy", "ring-16", "ycsb 2026-11-01", 1500.25, 1600.5,
                        100, 0.9, 1000, 0.45, 780.0, List.of("doubleface", "type2a-1f2b"), 3, byReason,
                        List.of(new LoadAdapter.LiveCell("doubleface", 1499.6, 200, 1, 800.0, Double.NaN)),
                        List.of(new LoadAdapter.SwitchEvent(AT, 1500.0, "doubleface", "type2a-1f2b", Double.NaN,
                                "busy"))));
        assertEquals("{\"config\":\"type2a-1f2b\",\"version\":\"0.1.0\",\"uptime_ms\":1234,\"deadline_ms\":1000,"
                + "\"driver\":\"redis-cluster://h:7000\",\"shards\":2,"
                + "\"backends\":[{\"name\":\"cache\",\"driver\":\"redis-cluster://h:7000\",\"scheme\":\"redis-cluster\","
                + "\"shards\":2,\"topology\":{\"slot_map_version\":3,\"masters\":[\"a:1\",\"b:2\"]}},"
                + "{\"name\":\"posts\",\"driver\":\"kv://h:7101-7104\",\"scheme\":\"kv\",\"shards\":4,"
                + "\"resilience\":{\"policy\":\"retries 1\",\"retries\":1,\"retries_denied\":2,\"hedges\":3,"
                + "\"hedge_wins\":4,\"hedges_denied\":5,\"circuits_opened\":6,\"rejected\":7,\"open_circuits\":8}}],"
                + "\"routes\":[{\"route\":\"GET /users/{user}\",\"answered\":4,\"ok\":3,\"timeout\":1,\"mean_ms\":0.85}],"
                + "\"requests\":{\"admitted\":4,\"ok\":3,\"bad_request\":0,\"not_found\":2,\"method_not_allowed\":0,"
                + "\"uri_too_long\":0,\"body_too_large\":0,\"headers_too_large\":0,\"request_timeout\":0,"
                + "\"version_not_supported\":0,\"internal_error\":0,\"unavailable\":0,\"overloaded\":0,\"timeout\":1,"
                + "\"service_status\":0,\"answered\":6},"
                + "\"admission\":{\"mode\":\"adaptive\",\"limit\":120,\"in_flight\":3,\"refused\":9},"
                + "\"errors\":{\"decode\":1,\"decode_unlogged\":0,\"service\":2,\"service_unlogged\":1},"
                + "\"stages\":{\"one_in\":1,\"doubleface\":{"
                + "\"plan\":{\"count\":4,\"mean_us\":12.346,\"stddev_us\":1.5,\"cv2\":0.015,\"p50_us\":12,\"p99_us\":15,"
                + "\"p999_us\":15,\"sum_us\":49.382,\"sum_sq_us2\":613},"
                + "\"total\":{\"count\":4,\"mean_us\":850.0,\"stddev_us\":10.0,\"cv2\":0.0,\"p50_us\":849,\"p99_us\":861,"
                + "\"p999_us\":861,\"sum_us\":3400.0,\"sum_sq_us2\":2890400}}},"
                + "\"slow_readers_closed\":5,\"slow_readers_closed_server_bound\":1,\"behind_bytes\":4096,"
                + "\"connections_refused\":2,"
                + "\"loops\":[{\"name\":\"io-0\",\"group\":\"io\",\"iterations\":100,\"wakeups\":40,\"events\":250,"
                + "\"events_per_iteration\":2.5,\"events_per_wakeup\":6.25,\"busy_ms\":12.345,\"idle_ms\":2000.0,"
                + "\"tail_batches\":10,\"tail_replies\":35,\"tail_batch_mean\":3.5,\"tail_batch_max\":9,"
                + "\"tail_batch_histogram_log2\":[0,4,6]}],"
                + "\"threads\":[{\"group\":\"io\",\"threads\":2,\"voluntary_switches\":30,\"involuntary_switches\":4,"
                + "\"cpu_ms\":120}],"
                + "\"configurations\":[\"doubleface\",\"type2a-1f2b\"],\"switches\":1,"
                + "\"switch_log\":[{\"at\":\"2026-11-29T05:00:00Z\",\"from\":\"doubleface\",\"to\":\"type2a-1f2b\"}],"
                + "\"adapter\":{\"policy\":\"adaptive\",\"decision_policy\":\"ThresholdPolicy\",\"detector\":\"ring-16\","
                + "\"profile\":\"ycsb 2026-11-01\",\"load\":1500.25,\"fast_load\":1600.5,\"count_window_ms\":100,"
                + "\"saturation\":0.9,\"saturation_window_ms\":1000,\"utilization\":0.45,\"predicted_p99_us\":780.0,"
                + "\"choices\":[\"doubleface\",\"type2a-1f2b\"],\"switches\":3,"
                + "\"switches_by_reason\":{\"quiet\":2,\"busy\":1},"
                + "\"live\":[{\"config\":\"doubleface\",\"load\":1500,\"samples\":200,\"errors\":1,\"p99_us\":800.0}],"
                + "\"switch_log\":[{\"at\":\"2026-11-29T05:00:00Z\",\"load\":1500.0,\"from\":\"doubleface\","
                + "\"to\":\"type2a-1f2b\",\"reason\":\"busy\"}]}}", s.toJson());
    }

    @Test
    void theOptionalPartsLeftOut() {
        ServerStats s = new ServerStats("doubleface", null, 2, 1000,
                List.of(new ServerStats.Backend("echo", "generated://4", "generated", 4, Map.of(), null)),
                List.of(new ServerStats.Route("GET /echo", 0, Map.of(), 0.0)),
                new ServerStats.Requests(0, Map.of()), ServerStats.Admission.OFF, List.of(), null,
                new ServerStats.Connections(0, 0, 0, 0),
                List.of(new ServerStats.Loop("io-0", "io", 0, 0, 0, 0, 0, 0, 0, 0, List.of(0L))),
                List.of(), List.of("doubleface"), 0, List.of(),
                null);
        assertEquals("{\"config\":\"doubleface\",\"version\":null,\"uptime_ms\":2,\"deadline_ms\":1000,"
                + "\"driver\":\"generated://4\",\"shards\":4,"
                + "\"backends\":[{\"name\":\"echo\",\"driver\":\"generated://4\",\"scheme\":\"generated\",\"shards\":4}],"
                + "\"routes\":[{\"route\":\"GET /echo\",\"answered\":0,\"mean_ms\":0.0}],"
                + "\"requests\":{\"admitted\":0,\"ok\":0,\"bad_request\":0,\"not_found\":0,\"method_not_allowed\":0,"
                + "\"uri_too_long\":0,\"body_too_large\":0,\"headers_too_large\":0,\"request_timeout\":0,"
                + "\"version_not_supported\":0,\"internal_error\":0,\"unavailable\":0,\"overloaded\":0,\"timeout\":0,"
                + "\"service_status\":0,\"answered\":0},"
                + "\"admission\":{\"mode\":\"off\"},\"errors\":{},"
                + "\"slow_readers_closed\":0,\"slow_readers_closed_server_bound\":0,\"behind_bytes\":0,"
                + "\"connections_refused\":0,"
                + "\"loops\":[{\"name\":\"io-0\",\"group\":\"io\",\"iterations\":0,\"wakeups\":0,\"events\":0,"
                + "\"events_per_iteration\":0.0,\"events_per_wakeup\":0.0,\"busy_ms\":0.0,\"idle_ms\":0.0,"
                + "\"tail_batches\":0,\"tail_replies\":0,\"tail_batch_mean\":0.0,\"tail_batch_max\":0,"
                + "\"tail_batch_histogram_log2\":[0]}],"
                + "\"threads\":[],\"configurations\":[\"doubleface\"],\"switches\":0,\"switch_log\":[]}", s.toJson());
    }
}
