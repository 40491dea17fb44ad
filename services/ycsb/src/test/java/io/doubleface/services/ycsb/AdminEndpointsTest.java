package io.doubleface.services.ycsb;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The admin listener: configuration, switching, stats JSON and Prometheus metrics. */
class AdminEndpointsTest {

    static final int SHARDS = 20;
    TestCluster cluster;

    @BeforeEach
    void start() {
        cluster = TestCluster.start(SHARDS, "doubleface"); // 2 I/O loops
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    String active() throws Exception {
        HttpResponse<String> r = cluster.adminGet("/admin/config");
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("application/json"));
        return JsonDoc.path(JsonDoc.object(r.body()), "active").asString();
    }

    @Test
    void configNamesTheActiveConfiguration() throws Exception {
        assertEquals("doubleface", active());
        assertEquals("doubleface", cluster.server.configuration().name());
    }

    @Test
    void putSwitchesTheActiveConfiguration() throws Exception {
        HttpResponse<String> r = cluster.adminPut("/admin/config?name=type2a-1f2b");
        assertEquals(200, r.statusCode(), r.body());
        Map<String, Object> body = JsonDoc.object(r.body());
        assertEquals("type2a-1f2b", JsonDoc.path(body, "active").asString());
        assertEquals("doubleface", JsonDoc.path(body, "previous").asString());
        assertTrue(JsonDoc.path(body, "loaded").asList().contains("type2a-1f2b"), r.body());
        assertEquals("type2a-1f2b", active());
        // and it serves under the new configuration
        HttpResponse<String> q = cluster.get(new YcsbQuery(5, Size.SMALL, 9));
        assertEquals(200, q.statusCode(), q.body());
        assertEquals(cluster.expected(5, Size.SMALL, 9), q.body());
        assertEquals(1, JsonDoc.path(cluster.stats(), "switches").asLong());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "type9            | type9",
            "type2a-9f1b      | I/O loops",
            "doubleface-3     | I/O loops",
            "thread-0         | bad option",
            "type1-fifo       | fifo",
    })
    void invalidConfigurationIsRefusedAndTheActiveOneStays(String name, String reason) throws Exception {
        HttpResponse<String> r = cluster.adminPut("/admin/config?name=" + name);
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains(reason), "reason should mention '" + reason + "': " + r.body());
        assertEquals("doubleface", active());
        assertEquals(0, JsonDoc.path(cluster.stats(), "switches").asLong());
        HttpResponse<String> q = cluster.get(new YcsbQuery(3, Size.SMALL, 1));
        assertEquals(200, q.statusCode(), q.body());
    }

    @Test
    void namesAreCanonicalAndSwitchingToTheActiveConfigurationIsNoSwitch() throws Exception {
        assertEquals(200, cluster.adminPut("/admin/config?name=doubleface").statusCode());
        assertEquals(0, JsonDoc.path(cluster.stats(), "switches").asLong(), "doubleface -> doubleface is no switch");
        HttpResponse<String> r = cluster.adminPut("/admin/config?name=THREAD");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("thread-64", active(), "thread means thread-64");
        assertEquals(200, cluster.adminPut("/admin/config?name=thread-64").statusCode());
        Map<String, Object> stats = cluster.stats();
        assertEquals(1, JsonDoc.path(stats, "switches").asLong());
        assertEquals(List.of("doubleface", "thread-64"), JsonDoc.path(stats, "configurations").asList(),
                "one model per canonical configuration");
        HttpResponse<String> q = cluster.get(new YcsbQuery(20, Size.SMALL, 150));
        assertEquals(cluster.expected(20, Size.SMALL, 150), q.body());
    }

    @Test
    void putWithoutNameIsRefused() throws Exception {
        HttpResponse<String> r = cluster.adminPut("/admin/config");
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("name"), r.body());
        HttpResponse<String> blank = cluster.adminPut("/admin/config?name=");
        assertEquals(400, blank.statusCode(), blank.body());
        assertEquals("doubleface", active());
    }

    @Test
    void statsCountLoopsThreadsAndRequests() throws Exception {
        // two connections: accepted round-robin, one on each I/O loop
        int n = 26;
        try (RawHttp a = new RawHttp(cluster.server.port()); RawHttp b = new RawHttp(cluster.server.port())) {
            for (int i = 0; i < n; i++) {
                YcsbQuery q = new YcsbQuery(5, Size.SMALL, i);
                RawHttp.Response r = (i % 2 == 0 ? a : b).exchange(RawHttp.get(TestCluster.path(q)));
                assertEquals(200, r.status(), r.toString());
                assertEquals(cluster.expected(q), r.text());
            }
        }
        HttpResponse<String> nf = cluster.get("/nope");
        assertEquals(404, nf.statusCode());

        HttpResponse<String> raw = cluster.adminGet("/admin/stats");
        assertEquals(200, raw.statusCode(), raw.body());
        assertTrue(raw.headers().firstValue("content-type").orElse("").startsWith("application/json"));
        Map<String, Object> stats = JsonDoc.object(raw.body());
        assertEquals("doubleface", JsonDoc.path(stats, "config").asString());
        assertEquals(SHARDS, JsonDoc.path(stats, "shards").asLong());
        // the server names itself: its version (null when the framework runs from classes) and its backends
        assertTrue(stats.containsKey("version"), "version");
        assertEquals(io.doubleface.server.FanoutServer.class.getPackage().getImplementationVersion(), stats.get("version"));
        List<Map<String, Object>> backends = JsonDoc.objects(stats, "backends");
        assertEquals(1, backends.size(), backends.toString());
        assertEquals("records", backends.get(0).get("name"));
        assertEquals("kv", backends.get(0).get("scheme"));
        assertTrue(((String) backends.get(0).get("driver")).startsWith("kv://127.0.0.1:"), backends.toString());
        assertEquals(SHARDS, ((Number) backends.get(0).get("shards")).longValue());
        assertEquals(n, JsonDoc.path(stats, "requests", "ok").asLong());
        assertEquals(n, JsonDoc.path(stats, "requests", "admitted").asLong());
        assertEquals(1, JsonDoc.path(stats, "requests", "not_found").asLong());
        assertEquals(n + 1, JsonDoc.path(stats, "requests", "answered").asLong());

        List<Map<String, Object>> loops = JsonDoc.objects(stats, "loops");
        int ioLoops = 0;
        long replies = 0;
        long batches = 0;
        for (Map<String, Object> l : loops) {
            String name = (String) l.get("name");
            assertTrue(((Number) l.get("iterations")).longValue() > 0, name + " iterations: " + l);
            if ("io".equals(l.get("group"))) {
                ioLoops++;
                assertTrue(((Number) l.get("events")).longValue() > 0, name + " handled no I/O events: " + l);
                replies += ((Number) l.get("tail_replies")).longValue();
                batches += ((Number) l.get("tail_batches")).longValue();
                double perIteration = ((Number) l.get("events_per_iteration")).doubleValue();
                assertTrue(perIteration > 0, name + " events_per_iteration: " + l);
                // one request at a time (the client waits for each answer), 5 shards each: a tail
                // batch holds at most one request's 5 replies
                long max = ((Number) l.get("tail_batch_max")).longValue();
                assertTrue(max >= 1 && max <= 5, name + " tail_batch_max: " + l);
            }
        }
        assertEquals(2, ioLoops, "both I/O loops reported: " + loops);
        assertEquals(n * 5L, replies, "every shard reply went through a DoubleFace tail batch once");
        // each request's replies need at least one batch, and a batch holds at least one reply
        assertTrue(batches >= n && batches <= n * 5L, "tail batches " + batches + " for " + n + " requests");

        List<Map<String, Object>> threads = JsonDoc.objects(stats, "threads");
        assertFalse(threads.isEmpty(), "threads");
        Map<String, Object> io = threads.stream().filter(t -> "io".equals(t.get("group"))).findFirst()
                .orElseThrow(() -> new AssertionError("the I/O loop threads have a group: " + threads));
        assertEquals(2, ((Number) io.get("threads")).longValue(), io.toString());
        // between the client's requests both loops wait for I/O: each wait blocks the thread
        assertTrue(((Number) io.get("voluntary_switches")).longValue() >= n, io.toString());
        assertTrue(io.get("involuntary_switches") instanceof Number, io.toString());
    }

    @Test
    void theApplicationsMeterRegistryGetsEveryMeterIncludingLoopsOfLaterConfigurations() throws Exception {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry app =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        try (TestCluster c = TestCluster.builder(4).tweak(b -> b.meterRegistry(app)).start()) {
            for (int i = 0; i < 5; i++) {
                assertEquals(200, c.get(new YcsbQuery(2, Size.SMALL, i)).statusCode());
            }
            assertEquals(5.0, app.get("doubleface.requests").tag("outcome", "ok").functionCounter().count());
            assertTrue(app.get("doubleface.loop.iterations").tag("loop", "io-0").functionCounter().count() > 0);
            int loops = app.find("doubleface.loop.iterations").functionCounters().size();
            // a configuration with backend loops, switched to by the admin API: its loops show up too
            assertEquals(200, c.adminPut("/admin/config?name=type2a-1f2b").statusCode());
            assertEquals(200, c.get(new YcsbQuery(3, Size.SMALL, 1)).statusCode());
            assertTrue(app.find("doubleface.loop.iterations").functionCounters().size() > loops,
                    app.getMetersAsString());
            // and /metrics still serves them all
            String text = c.adminGet("/metrics").body();
            assertEquals(6, sample(text, "doubleface_requests_total", "outcome=\"ok\""), 0.0, text);
        }
    }

    @Test
    void metricsArePrometheusText() throws Exception {
        int n = 7;
        for (int i = 0; i < n; i++) {
            assertEquals(200, cluster.get(new YcsbQuery(2, Size.MEDIUM, i)).statusCode());
        }
        HttpResponse<String> r = cluster.adminGet("/metrics");
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("text/plain"));
        String text = r.body();
        assertEquals(n, sample(text, "doubleface_requests_total", "outcome=\"ok\""), 0.0, text);
        assertEquals(0, sample(text, "doubleface_requests_total", "outcome=\"unavailable\""), 0.0);
        assertTrue(sample(text, "doubleface_loop_iterations_total", "loop=\"io-0\"") > 0, text);
        assertTrue(text.contains("doubleface_config_active{config=\"doubleface\"} 1"), text);
    }

    @Test
    void unknownAdminPathIs404() throws Exception {
        HttpResponse<String> r = cluster.adminGet("/admin/nope");
        assertEquals(404, r.statusCode(), r.body());
        assertTrue(r.body().contains("/admin/nope"), r.body());
    }

    /** The value of the one sample of {@code metric} whose labels contain {@code label}. */
    static double sample(String text, String metric, String label) {
        Matcher m = Pattern.compile("(?m)^" + metric + "\\{([^}]*)\\}\\s+(\\S+)$").matcher(text);
        Double found = null;
        while (m.find()) {
            if (m.group(1).contains(label)) {
                if (found != null) {
                    throw new AssertionError("two samples of " + metric + " with " + label);
                }
                found = Double.parseDouble(m.group(2));
            }
        }
        if (found == null) {
            throw new AssertionError("no sample " + metric + "{" + label + "} in:\n" + text);
        }
        return found;
    }
}
