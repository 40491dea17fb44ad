package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.internal.engine.StageStats;
import io.doubleface.testing.TestRead;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The per-stage service times in {@code /metrics}: none while tracing is off; after traced
 * requests, per configuration and stage, the count and sum, p50/p99/p99.9, standard deviation and
 * C², agreeing with {@code /admin/stats}.
 */
class StageMetricsTest {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private String get(String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), url + ": " + r.body());
        return r.body();
    }

    /** The value of {@code series} in {@code scrape}, or {@code null} if it is not there. */
    private static Double find(String scrape, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(1)) : null;
    }

    private static double value(String scrape, String series) {
        Double v = find(scrape, series);
        assertTrue(v != null, "no " + series + " in:\n" + scrape);
        return v;
    }

    /**
     * Scrapes until {@code series} reads {@code expected} (at most 5 s): a request's stages are
     * recorded on its loop right after the answer is handed to the connection, so the client can
     * hold the answer a moment before the last stage of it is recorded.
     */
    private String scrapeWhen(String metrics, String series, double expected) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            String scrape = get(metrics);
            Double v = find(scrape, series);
            if ((v != null && v == expected) || System.nanoTime() > until) {
                return scrape;
            }
            Thread.sleep(10);
        }
    }

    @Test
    void aScrapeAfterTracedRequestsHoldsEveryStageOfTheirConfiguration() throws Exception {
        GeneratedShards driver = new GeneratedShards(4);
        FanoutServer.Builder b = FanoutServer.builder();
        io.doubleface.api.Backend<TestRead> echo = b.backend("echo", driver, false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        try (FanoutServer server = b.port(0).adminPort(0).ioThreads(2).configuration("doubleface")
                .deadline(Duration.ofSeconds(10)).start()) {
            String base = "http://127.0.0.1:" + server.port();
            String metrics = "http://127.0.0.1:" + server.adminPort() + "/metrics";
            get(base + "/echo?key=5&fan=3");
            assertFalse(get(metrics).contains("doubleface_stage"), "tracing off: no stage meters");

            server.traceStages(1);
            int n = 20;
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                get(base + "/echo?key=" + i + "&fan=3");
            }
            String scrape = scrapeWhen(metrics,
                    "doubleface_stage_seconds_count{configuration=\"doubleface\",stage=\"total\"}", n);
            double clientSeconds = (System.nanoTime() - start) / 1e9;
            // every stage's series carry the figures /admin/stats gives for it (the engine's own
            // snapshot; no request ran since the scrape, so both see the same histograms)
            Map<StageStats.Stage, StageStats.Summary> stats = server.internals().engine().stages().snapshot().get("doubleface");
            for (StageStats.Stage st : StageStats.Stage.values()) {
                String tags = "{configuration=\"doubleface\",stage=\"" + st.label() + "\"}";
                StageStats.Summary x = stats.get(st);
                assertEquals(n, value(scrape, "doubleface_stage_seconds_count" + tags), st.label());
                assertEquals(n, x.count(), st.label());
                assertEquals(x.meanMicros() * n / 1e6, value(scrape, "doubleface_stage_seconds_sum" + tags), 1e-9,
                        st.label());
                long[] percentiles = {x.p50Micros(), x.p99Micros(), x.p999Micros()};
                String[] quantiles = {"0.5", "0.99", "0.999"};
                for (int i = 0; i < quantiles.length; i++) {
                    assertEquals(percentiles[i] / 1e6, value(scrape, "doubleface_stage_quantile_seconds{configuration=\"doubleface\",quantile=\""
                            + quantiles[i] + "\",stage=\"" + st.label() + "\"}"), 1e-9, st.label() + " p" + quantiles[i]);
                }
                assertEquals(x.stddevMicros() / 1e6, value(scrape, "doubleface_stage_stddev_seconds" + tags), 1e-9,
                        st.label());
                assertEquals(x.cv2(), value(scrape, "doubleface_stage_cv2" + tags), 1e-9 * Math.max(1, Math.abs(x.cv2())),
                        st.label());
            }
            // the requests ran one after the other, each inside the client's wait for it: their
            // total times add up to more than nothing and to no more than the client's clock saw
            double sum = value(scrape, "doubleface_stage_seconds_sum{configuration=\"doubleface\",stage=\"total\"}");
            assertTrue(sum > 0, "requests take time");
            assertTrue(sum <= clientSeconds, "total " + sum + " s > " + clientSeconds + " s measured by the client");

            // another configuration gets its own series once it has traced requests
            server.switchTo("type2a-1f2b");
            get(base + "/echo?key=1&fan=2");
            scrape = scrapeWhen(metrics, "doubleface_stage_seconds_count{configuration=\"type2a-1f2b\",stage=\"total\"}", 1);
            assertEquals(1, value(scrape, "doubleface_stage_seconds_count{configuration=\"type2a-1f2b\",stage=\"total\"}"));
        }
    }
}
