package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.model.Configuration;
import io.doubleface.testing.TestRead;
import io.doubleface.tune.Decider;
import io.doubleface.tune.LoadAdapter;
import io.doubleface.tune.LoadDetector;
import io.doubleface.tune.TuneStrategy;
import io.doubleface.tune.TuneSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A detector and a decider written outside the framework, from its public interfaces
 * only, drive a real server: under a trickle of requests it switches to {@code sip}, under a
 * closed-loop crowd back to {@code sdb-1n-4w}, with the policy's own reasons in the switch log,
 * {@code /admin/stats} and the metrics. The two classes are the example of docs/tuning.md,
 * "Plugging in your own detector or policy" (keep them in step).
 *
 * <p>Phases end on events (the adapter switched), not on time; the timeout is a failure guard.
 */
@Timeout(120)
class LoadAdapterPluginTest {

    // ---- the example of docs/tuning.md ----------------------------------------------------------

    /** Arrivals counted over fixed windows; the rate is that of the last complete window. */
    static final class CountingDetector implements LoadDetector {
        private final LongAdder arrivals = new LongAdder(); // every I/O loop: lock-free, no allocation
        private final long windowNanos;
        private long windowStart = Long.MIN_VALUE;          // the adapter thread only, from here on
        private long countAtStart;
        private double rate;

        CountingDetector(Duration window) {
            this.windowNanos = window.toNanos();
        }

        @Override
        public void arrival(long nanoTime) {
            arrivals.increment();
        }

        @Override
        public double rate(long nowNanos) {
            long n = arrivals.sum();
            if (windowStart == Long.MIN_VALUE) {
                windowStart = nowNanos;
                countAtStart = n;
            } else if (nowNanos - windowStart >= windowNanos) {
                rate = (n - countAtStart) * 1e9 / (nowNanos - windowStart);
                windowStart = nowNanos;
                countAtStart = n;
            }
            return rate;
        }

        @Override
        public String describe() {
            return "count-" + windowNanos / 1_000_000 + "ms";
        }
    }

    /** {@code quiet} below a load threshold, {@code busy} at or above it; at most one move per dwell. */
    static final class ThresholdPolicy implements Decider {
        private final double threshold;
        private final Configuration quiet;
        private final Configuration busy;

        ThresholdPolicy(double threshold, String quiet, String busy) {
            this.threshold = threshold;
            this.quiet = Configuration.parse(quiet); // once: decide runs every interval
            this.busy = Configuration.parse(busy);
        }

        @Override
        public Decision decide(Context ctx) {
            if (ctx.now() - ctx.lastSwitch() < ctx.settings().dwell().toNanos()) {
                return null; // the dwell is the policy's to apply
            }
            boolean low = ctx.load() < threshold;
            Configuration want = low ? quiet : busy;
            return want.equals(ctx.active()) ? null : new Decision(want, low ? "quiet" : "busy");
        }

        @Override
        public List<String> reasons() {
            return List.of("quiet", "busy"); // so /metrics has a counter for each from the start
        }
    }

    static TuneSettings exampleSettings() {
        return TuneSettings.of(TuneStrategy.ADAPTIVE, null)       // no profile: the candidates are the choices
                .withCandidates(List.of("sdb-1n-4w", "sip"))      // it starts on the first
                .withDwell(Duration.ofMillis(100))
                .withDetector(() -> new CountingDetector(Duration.ofMillis(50)))
                .withDecider(() -> new ThresholdPolicy(200, "sip", "sdb-1n-4w"));
    }

    // ---- the test ------------------------------------------------------------------------------

    static final int CROWD = 4;

    @Test
    void aUserDetectorAndPolicySwitchARealServerBackAndForth() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FanoutServer.Builder b = FanoutServer.builder();
        Backend<TestRead> echo = b.backend("echo", new GeneratedShards(4), false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        try (FanoutServer server = b.port(0).ioThreads(1).adaptive(exampleSettings()).meterRegistry(registry).start();
                HttpClient client = HttpClient.newHttpClient()) {
            LoadAdapter adapter = server.internals().adapter();
            assertEquals("sdb-1n-4w", server.configuration().name(), "starts on the first candidate");
            assertEquals("count-50ms", adapter.detector().describe());
            assertTrue(adapter.decider() instanceof ThresholdPolicy);
            URI uri = URI.create("http://127.0.0.1:" + server.port() + "/echo?key=7&fan=2");
            AtomicLong sent = new AtomicLong();
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();

            for (int cycle = 0; cycle < 2; cycle++) {
                // a trickle, one request every 20 ms (≈ 50 req/s): quiet
                load(client, uri, 1, 20, sent, errors, () -> server.configuration().name().equals("sip"));
                // a closed-loop crowd (thousands of req/s): busy
                load(client, uri, CROWD, 0, sent, errors, () -> server.configuration().name().equals("sdb-1n-4w"));
            }
            assertTrue(errors.isEmpty(), "client errors: " + errors);

            List<String> reasons = adapter.switchLog().stream().map(LoadAdapter.SwitchEvent::reason).toList();
            assertTrue(reasons.size() >= 4 && reasons.stream().allMatch(r -> r.equals("quiet") || r.equals("busy")),
                    "switch log: " + adapter.switchLog());
            assertEquals("sip", adapter.switchLog().getFirst().to());
            String stats = server.statsJson();
            assertTrue(stats.contains("\"detector\":\"count-50ms\""), stats);
            assertTrue(stats.contains("\"decision_policy\":\"ThresholdPolicy\""), stats);
            assertTrue(stats.contains("\"quiet\":" + adapter.switchesByReason().get("quiet")), stats);
            double quiet = registry.get("doubleface.tune.switches").tag("reason", "quiet").functionCounter().count();
            double busy = registry.get("doubleface.tune.switches").tag("reason", "busy").functionCounter().count();
            assertTrue(quiet >= 2 && busy >= 2, "metrics: quiet " + quiet + ", busy " + busy);
        }
    }

    /**
     * Sends from {@code clients} threads, each pausing {@code pauseMs} between requests, until
     * {@code done} holds (checked after every answer) or 60 s have passed.
     */
    private static void load(HttpClient client, URI uri, int clients, long pauseMs, AtomicLong sent,
            ConcurrentLinkedQueue<String> errors, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            threads.add(Thread.ofPlatform().name("client-" + i).start(() -> {
                HttpRequest req = HttpRequest.newBuilder(uri).build();
                while (!done.getAsBoolean() && System.nanoTime() < deadline) {
                    try {
                        sent.incrementAndGet();
                        HttpResponse<String> r = client.send(req, HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() != 200) {
                            errors.add(r.statusCode() + " " + r.body());
                        }
                        if (pauseMs > 0) {
                            Thread.sleep(pauseMs);
                        }
                    } catch (Exception e) {
                        errors.add(e.toString());
                        return;
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(done.getAsBoolean(), "no switch within 60 s");
    }
}
