package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.tune.LoadAdapter;
import io.doubleface.tune.Profile;
import io.doubleface.tune.TuneStrategy;
import io.doubleface.tune.TuneSettings;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The load adapter on a real server: with a synthetic profile (in-line {@code sip} best but
 * saturating at {@value #SIP_CAPACITY} req/s, {@code sdb-1n-4w} sustaining any load), the server
 * switches to {@code sip} under a trickle of requests and to {@code sdb} under a closed-loop
 * crowd, back and forth; no request is lost or wrong, the switches show in {@code /admin/stats}
 * and {@code /metrics}, and no thread is created or destroyed by any switch.
 *
 * <p>Phases end on events (the adapter switched), not on time; the only time limit is a generous
 * failure guard.
 */
class AdaptiveSwitchingTest {

    static final int SHARDS = 20;
    static final double SIP_CAPACITY = 150;
    static final int CROWD = 12;
    static final int CYCLES = 2;
    /** Thread-name prefixes of the server's own threads. */
    static final List<String> SERVER_THREADS = List.of("io-", "req-", "t1-wk-", "t2a-", "t2b-", "tune-", "admin-");

    static Profile syntheticProfile() {
        return Profile.builder().service("ycsb").shards("test").machine("test").date("2026-11-22").commit("test")
                .point("sip", new Profile.Point(10, 50, 100, 200, 10, 0.1, false))
                .point("sip", new Profile.Point(SIP_CAPACITY, 80, 150, 300, SIP_CAPACITY, 0.5, false))
                .point("sip", new Profile.Point(1000, 5000, 900_000, 990_000, 300, 1, true))
                .point("sdb-1n-4w", new Profile.Point(10, 5000, 100_000, 200_000, 10, 0.1, false))
                .point("sdb-1n-4w", new Profile.Point(1_000_000, 5000, 100_000, 200_000, 1_000_000, 2, false))
                .build();
    }

    static long serverThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(t -> SERVER_THREADS.stream().anyMatch(p -> t.getName().startsWith(p))).count();
    }

    @Test
    void adapterFollowsTheLoadWithoutLosingARequest() throws Exception {
        TuneSettings settings = TuneSettings.of(TuneStrategy.ADAPTIVE, syntheticProfile()).withDetector("ring-8");
        try (TestCluster cluster = TestCluster.builder(SHARDS).tweak(b -> b.adaptive(settings)).start()) {
            LoadAdapter adapter = cluster.server.internals().adapter();
            assertEquals("sdb-1n-4w", cluster.server.configuration().name(), "starts on the peak-sustaining one");
            List<String> prepared = cluster.server.internals().stats().configurations();
            assertTrue(prepared.containsAll(List.of("sip", "sdb-1n-4w")), "prepared up front: " + prepared);
            long threadsAtStart = serverThreads();

            AtomicLong sent = new AtomicLong();
            AtomicLong answered = new AtomicLong();
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            for (int cycle = 0; cycle < CYCLES; cycle++) {
                // a trickle: one request at a time, 20 ms apart (≈ 50 req/s)
                runUntil(cluster, 1, 20, sent, answered, errors, () -> adapter.switches() > 0
                        && cluster.server.configuration().name().equals("sip"));
                // a crowd: closed loop, no pause
                runUntil(cluster, CROWD, 0, sent, answered, errors,
                        () -> cluster.server.configuration().name().equals("sdb-1n-4w"));
            }
            runUntil(cluster, 1, 20, sent, answered, errors, () -> cluster.server.configuration().name().equals("sip"));

            assertTrue(errors.isEmpty(), "client errors: " + errors);
            assertEquals(sent.get(), answered.get(), "every request answered once");
            Map<String, Object> stats = cluster.stats();
            assertEquals(sent.get(), JsonDoc.path(stats, "requests", "ok").asLong(), "requests.ok");
            assertEquals(sent.get(), JsonDoc.path(stats, "requests", "answered").asLong(), "nothing but ok");

            long switches = JsonDoc.path(stats, "adapter", "switches").asLong();
            assertTrue(switches >= 2 * CYCLES + 1, "adapter switches: " + switches);
            assertEquals(adapter.switches(), switches);
            // a flash crowd leaves sip over capacity: on the rising load, or on the count when the
            // step is not past the capacity by the margin before the count sees it
            assertTrue(JsonDoc.path(stats, "adapter", "switches_by_reason", "infeasible").asLong()
                    + JsonDoc.path(stats, "adapter", "switches_by_reason", "rising").asLong() >= CYCLES,
                    "flash crowds leave sip as infeasible or rising: " + JsonDoc.path(stats, "adapter", "switches_by_reason").asMap());
            List<Map<String, Object>> log = JsonDoc.objects(stats, "adapter", "switch_log");
            assertEquals(switches, log.size());
            assertEquals("sdb-1n-4w", log.get(0).get("from"));
            assertEquals("sip", log.get(0).get("to"));
            for (Map<String, Object> e : log) {
                assertTrue(e.containsKey("at") && e.containsKey("load") && e.containsKey("predicted_p99_us")
                        && e.containsKey("reason"), e.toString());
            }
            assertEquals(JsonDoc.path(stats, "switches").asLong(), switches, "every engine switch was the adapter's");
            // the live table is republished once a second (LoadAdapter.LIVE_SNAPSHOT_MS): wait for it
            List<Map<String, Object>> live = JsonDoc.objects(stats, "adapter", "live");
            for (int i = 0; i < 30 && live.stream().noneMatch(c -> "sip".equals(c.get("config"))); i++) {
                Thread.sleep(100);
                live = JsonDoc.objects(cluster.stats(), "adapter", "live");
            }
            assertTrue(live.stream().anyMatch(c -> "sip".equals(c.get("config"))
                    && ((Number) c.get("samples")).longValue() > 0 && c.containsKey("profile_p99_us")),
                    "live table: " + live);

            HttpResponse<String> metrics = cluster.adminGet("/metrics");
            assertEquals(200, metrics.statusCode());
            assertTrue(metrics.body().contains("doubleface_tune_switches_total{reason=\"infeasible\"}"), metrics.body());
            assertTrue(metrics.body().contains("doubleface_tune_load_requests_per_second"), metrics.body());
            assertTrue(metrics.body().contains("doubleface_tune_utilization"), metrics.body());
            assertTrue(metrics.body().contains("doubleface_loop_busy_seconds_total{group=\"io\""), metrics.body());
            // the saturation signal: its settings, and the loops' busy/idle time it reads
            assertEquals(0.98, JsonDoc.path(stats, "adapter", "saturation").asDouble(), 1e-9);
            assertEquals(200, JsonDoc.path(stats, "adapter", "saturation_window_ms").asLong());
            List<Map<String, Object>> loops = JsonDoc.objects(stats, "loops");
            Map<String, Object> io = loops.stream().filter(l -> "io".equals(l.get("group"))).findFirst().orElseThrow();
            double busy = ((Number) io.get("busy_ms")).doubleValue();
            double idle = ((Number) io.get("idle_ms")).doubleValue();
            assertTrue(busy > 0 && idle > 0, "io loop busy " + busy + " ms, idle " + idle + " ms");
            assertTrue(metrics.body().contains("doubleface_config_switches_total " + switches + ".0"), metrics.body());

            assertEquals(threadsAtStart, serverThreads(), "no thread created or destroyed by " + switches + " switches");
        }
    }

    /**
     * Runs {@code clients} client threads (each pausing {@code pauseMs} between requests) until
     * {@code done}; checks every response against the reference.
     */
    static void runUntil(TestCluster cluster, int clients, long pauseMs, AtomicLong sent, AtomicLong answered,
            ConcurrentLinkedQueue<String> errors, BooleanSupplier done) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < clients; t++) {
            final int client = t;
            threads.add(Thread.ofPlatform().name("client-" + t).start(() -> {
                try (RawHttp c = new RawHttp(cluster.server.port())) {
                    long n = 0;
                    while (!stop.get() && errors.isEmpty()) {
                        YcsbQuery q = SwitchUnderLoadTest.query((client + 31L * n++) % TestCluster.RECORDS);
                        sent.incrementAndGet();
                        RawHttp.Response r = c.exchange(RawHttp.get(TestCluster.path(q)));
                        answered.incrementAndGet();
                        if (r.status() != 200 || !r.text().equals(cluster.expected(q))) {
                            errors.add("query " + TestCluster.path(q) + ": " + r);
                        }
                        if (pauseMs > 0) {
                            Thread.sleep(pauseMs);
                        }
                    }
                } catch (Throwable e) {
                    errors.add("client " + client + ": " + e);
                }
            }));
        }
        long guard = System.nanoTime() + TestCluster.GENEROUS.toNanos();
        try {
            while (!done.getAsBoolean()) {
                if (!errors.isEmpty()) {
                    throw new AssertionError("client errors: " + errors);
                }
                if (System.nanoTime() - guard > 0) {
                    throw new AssertionError("the adapter did not switch: active "
                            + cluster.server.configuration().name() + ", load " + cluster.server.internals().adapter().load()
                            + ", log " + cluster.server.internals().adapter().switchLog());
                }
                Thread.sleep(5);
            }
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(60));
                assertTrue(!t.isAlive(), t.getName() + " did not finish");
            }
        }
    }
}
