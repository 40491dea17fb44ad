package io.doubleface.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.Json;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The generator against {@link TestServer} over loopback sockets. No assertion depends on the machine's speed. */
class LoadGeneratorTest {

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private LoadGenerator.Builder open(double rate) {
        return LoadGenerator.builder(server.uri()).mix(RequestMix.single("/ok")).rate(rate)
                .warmup(Duration.ZERO).seed(1);
    }

    @Test
    void openLoopLatencyIncludesAServerPauseForRequestsNeverSentOnTime() throws Exception {
        server.delayMillis = 1;
        LoadGenerator g = open(200).duration(Duration.ofSeconds(3)).build();
        CompletableFuture<LoadResult> run = CompletableFuture.supplyAsync(() -> {
            try {
                return g.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Thread.sleep(1000);
        server.pause(300);
        LoadResult r = run.get(30, TimeUnit.SECONDS);
        assertTrue(r.requests() > 100, r.toText());
        assertTrue(r.latency().getMaxValue() >= 250_000, "max includes the pause:\n" + r.toText());
        assertTrue(r.latency().getValueAtPercentile(99.9) >= 250_000, "p99.9 includes the pause:\n" + r.toText());
        // every request whose intended time fell in the first 100 ms of the pause waited >= 200 ms; at 200/s
        // that is about 20 requests (a closed loop would have sent, and timed, only the few in flight)
        long slow = r.latency().getCountBetweenValues(200_000, Long.MAX_VALUE);
        assertTrue(slow >= 5, slow + " requests >= 200 ms\n" + r.toText());
        assertTrue(r.maxConnections() > 1, "connections are opened on demand while the server stalls");
        assertEquals(0, r.errors(), r.toText());
    }

    @Test
    void theMeasureStartCallbackRunsOnceWhenTheWarmupEnds() throws Exception {
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicLong at = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong servedBefore = new java.util.concurrent.atomic.AtomicLong(-1);
        long t0 = System.nanoTime();
        LoadResult r = open(500).warmup(Duration.ofMillis(400)).duration(Duration.ofMillis(600))
                .onMeasureStart(() -> {
                    calls.incrementAndGet();
                    at.set(System.nanoTime());
                    servedBefore.set(server.requests.get());
                }).build().run();
        assertEquals(1, calls.get());
        long ms = (at.get() - t0) / 1_000_000;
        assertTrue(ms >= 400, "ran " + ms + " ms after the start, before the 400-ms warm-up ended");
        // the warm-up's requests were served before it ran, the measured ones after
        assertTrue(servedBefore.get() > 0 && servedBefore.get() < server.requests.get(), servedBefore + " of "
                + server.requests.get());
        assertTrue(r.requests() > 0, r.toText());
    }

    @Test
    void closedLoopSendsOneRequestAtATimePerUser() throws Exception {
        server.delayMillis = 2;
        LoadResult r = LoadGenerator.builder(server.uri()).mix(RequestMix.single("/ok")).users(4)
                .warmup(Duration.ofMillis(200)).duration(Duration.ofSeconds(1)).seed(1).build().run();
        assertTrue(r.requests() > 20, r.toText());
        assertTrue(server.maxInFlight.get() <= 4, "server saw " + server.maxInFlight.get() + " at once");
        assertEquals("closed", r.mode());
        assertNull(r.rateKept());
        assertEquals(0, r.errors(), r.toText());
    }

    @Test
    void mixTemplatesAreSentByWeightWithKeysInRange() throws Exception {
        LoadResult r = LoadGenerator.builder(server.uri()).mix(RequestMix.parse("3:/a?key={key},1:/b?key={key}"))
                .keys(10).users(2).warmup(Duration.ZERO).duration(Duration.ofSeconds(10)).maxRequests(2000)
                .seed(5).build().run();
        assertTrue(r.maxRequestsReached(), r.toText());
        long a = server.byPath.get("/a").get();
        long b = server.byPath.get("/b").get();
        assertEquals(0.75, a / (double) (a + b), 0.05, a + " /a, " + b + " /b");
        assertEquals(2000, r.requests(), r.toText());
        assertEquals(List.of(a, b), r.classes().stream().map(LoadResult.ClassResult::requests).toList(),
                "each class counts the requests of its template");
    }

    @Test
    void eachMixTemplateHasItsOwnLatencyClass() throws Exception {
        server.delayMillisByPath.put("/slow", 50L);
        LoadResult r = LoadGenerator.builder(server.uri()).mix(RequestMix.parse("1:/fast?key={key},1:/slow?key={key}"))
                .users(16).warmup(Duration.ZERO).duration(Duration.ofSeconds(20)).maxRequests(1000).seed(3)
                .build().run();
        assertEquals(1000, r.requests(), r.toText());
        assertEquals(0, r.errors(), r.toText());

        Map<String, Object> j = (Map<String, Object>) Json.parse(r.toJson());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> classes = (List<Map<String, Object>>) j.get("classes");
        assertEquals(2, classes.size(), r.toJson());
        Map<String, Object> fast = classes.get(0);
        Map<String, Object> slow = classes.get(1);
        assertEquals("/fast?key={key}", fast.get("url"));
        assertEquals("/slow?key={key}", slow.get("url"));
        assertEquals(1.0, fast.get("weight"));
        assertEquals(List.of("url", "weight", "requests", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"),
                List.copyOf(slow.keySet()));
        double nFast = (Double) fast.get("requests");
        double nSlow = (Double) slow.get("requests");
        assertEquals(1000.0, nFast + nSlow, r.toJson());
        assertEquals(server.byPath.get("/fast").get(), (long) nFast, "the fast class holds the /fast requests");
        assertEquals(server.byPath.get("/slow").get(), (long) nSlow, "the slow class holds the /slow requests");
        // a wide margin: the server holds /slow for 50 ms (a floor) and answers /fast at once
        assertTrue((Double) slow.get("p50_ms") >= 45, r.toJson());
        assertTrue((Double) fast.get("p50_ms") < 25, r.toJson());
        assertNull(slow.get("p999_ms"), "fewer than 100,000 samples");
        assertNotNull(slow.get("max_ms"));

        LoadResult.ClassResult c = r.classes().get(1);
        assertTrue(c.latency().getMinValue() >= 49_000,
                "µs like the total, none under the 50 ms hold: " + c.latency().getMinValue());
        assertEquals(r.latency().getMaxValue(), Math.max(r.classes().get(0).latency().getMaxValue(),
                c.latency().getMaxValue()), "the classes hold the total's values");
        String text = r.toText();
        assertTrue(text.contains("  class 1 (weight 1) /fast?key={key}: " + String.format(Locale.ROOT, "%,d",
                (long) nFast) + " requests, p50 "), text);
        assertTrue(text.contains("  class 2 (weight 1) /slow?key={key}: "), text);
    }

    @Test
    void jsonSummaryHasTheFieldsAndNullForPercentilesWithTooFewSamples() throws Exception {
        LoadResult r = open(2000).duration(Duration.ofSeconds(5)).maxRequests(300).build().run();
        @SuppressWarnings("unchecked")
        Map<String, Object> j = (Map<String, Object>) Json.parse(r.toJson());
        for (String f : new String[] {"requests", "errors", "errors_by_kind", "throughput_rps", "offered_rate",
            "rate_kept", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "send_lag_p99_ms", "duration_s",
            "warmup_s", "mode", "achieved_rate"}) {
            assertTrue(j.containsKey(f), f + " missing: " + r.toJson());
        }
        assertEquals(300.0, j.get("requests"));
        assertNotNull(j.get("p50_ms"), "300 samples are enough for p50 (>= 200)");
        assertNull(j.get("p90_ms"), "300 samples are not enough for p90 (< 1000)");
        assertNull(j.get("p99_ms"));
        assertNull(j.get("p999_ms"));
        assertNull(j.get("send_lag_p99_ms"));
        assertNotNull(j.get("max_ms"));
        assertEquals("open", j.get("mode"));
        assertEquals(0.0, j.get("errors"));
        @SuppressWarnings("unchecked")
        Map<String, Object> kinds = (Map<String, Object>) j.get("errors_by_kind");
        assertEquals(java.util.Set.of("connect", "timeout", "status_4xx", "status_5xx", "closed"), kinds.keySet());
        assertTrue(r.toText().contains("p90 n/a"), r.toText());
        assertFalse(j.containsKey("classes"), "a single URL has no classes: " + r.toJson());
        assertTrue(r.classes().isEmpty());
        assertFalse(r.toText().contains("class 1"), r.toText());
        assertEquals(10_000, LoadResult.minSamples(99));
        assertEquals(100_000, LoadResult.minSamples(99.9));
    }

    @Test
    void statusClassesAndTimeoutsAreCountedByKind() throws Exception {
        LoadResult r = LoadGenerator.builder(server.uri()).mix(RequestMix.parse("1:/status/503,1:/status/404"))
                .users(2).warmup(Duration.ZERO).duration(Duration.ofSeconds(5)).maxRequests(200).seed(2).build().run();
        assertEquals(200, r.errorsByKind().get(ErrorKind.STATUS_5XX) + r.errorsByKind().get(ErrorKind.STATUS_4XX));
        assertTrue(r.errorsByKind().get(ErrorKind.STATUS_5XX) > 0 && r.errorsByKind().get(ErrorKind.STATUS_4XX) > 0);
        assertEquals(200, r.failed().requests(), "4xx and 5xx latencies go to the failed part");
        assertEquals(0, r.ok().requests());

        LoadResult mixed = LoadGenerator.builder(server.uri()).mix(RequestMix.parse("1:/status/503,3:/"))
                .users(2).warmup(Duration.ZERO).duration(Duration.ofSeconds(5)).maxRequests(400).seed(3).build().run();
        assertEquals(400, mixed.ok().requests() + mixed.failed().requests());
        assertEquals(mixed.errorsByKind().get(ErrorKind.STATUS_5XX), mixed.failed().requests());
        assertTrue(mixed.ok().requests() > mixed.failed().requests(), mixed.toText());
        assertTrue(mixed.toJson().contains("\"ok\":{\"requests\":" + mixed.ok().requests()), mixed.toJson());
        assertTrue(mixed.toText().contains("status >= 400: " + mixed.failed().requests()), mixed.toText());

        server.delayMillis = 1000;
        LoadResult slow = open(50).duration(Duration.ofMillis(500)).timeout(Duration.ofMillis(100)).build().run();
        assertTrue(slow.errorsByKind().get(ErrorKind.TIMEOUT) > 0, slow.toText());
        assertEquals(slow.sent(), slow.errorsByKind().get(ErrorKind.TIMEOUT), slow.toText());
    }

    @Test
    void anIdempotentRequestLostWithAReusedConnectionIsSentOnceMoreAndTimedFromItsIntendedTime() throws Exception {
        server.dropEveryMillis = 100; // a resend comes within milliseconds: it is never dropped again
        LoadResult r = open(300).duration(Duration.ofSeconds(2)).build().run();
        long dropped = server.dropped.get();
        assertTrue(dropped >= 5, dropped + " requests dropped\n" + r.toText());
        assertEquals(0, r.errors(), "every dropped GET was sent again and answered:\n" + r.toText());
        assertEquals(dropped, r.resent(), r.toText());
        assertEquals(r.scheduled(), r.requests(), r.toText());
        assertEquals(r.scheduled(), r.sent(), "a resend is not another request sent: " + r.toText());
        assertTrue(r.toJson().contains("\"resent\":" + dropped), r.toJson());
        assertTrue(r.toText().contains(dropped + " resent"), r.toText());

        server.dropped.set(0);
        LoadResult post = LoadGenerator.builder(server.uri()).mix(RequestMix.parse("1:POST /ok")).rate(300)
                .warmup(Duration.ZERO).seed(1).duration(Duration.ofSeconds(2)).build().run();
        long droppedPosts = server.dropped.get();
        assertTrue(droppedPosts >= 5, droppedPosts + " requests dropped\n" + post.toText());
        assertEquals(0, post.resent(), "a POST is never sent twice: " + post.toText());
        assertEquals(droppedPosts, (long) post.errorsByKind().get(ErrorKind.CLOSED), post.toText());
    }

    @Test
    void unreachableTargetFailsWithinSecondsWithAClearMessage() {
        long t0 = System.nanoTime();
        LoadException e = assertThrows(LoadException.class, () -> LoadGenerator.builder(URI.create("http://127.0.0.1:1"))
                .mix(RequestMix.single("/")).rate(100).warmup(Duration.ZERO).duration(Duration.ofSeconds(30)).build().run());
        assertEquals("cannot connect to 127.0.0.1:1: connection refused", e.getMessage());
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20), "bounded, far below the 30 s duration");
    }

    @Test
    void stopKeepsThePartialResults() throws Exception {
        LoadGenerator g = open(500).duration(Duration.ofSeconds(60)).build();
        CompletableFuture<LoadResult> run = CompletableFuture.supplyAsync(() -> {
            try {
                return g.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Thread.sleep(1000);
        g.stop();
        LoadResult r = run.get(20, TimeUnit.SECONDS);
        assertTrue(r.stopped());
        assertTrue(r.requests() > 0, r.toText());
        assertTrue(r.durationSeconds() < 30, r.toText());
        assertTrue(r.toText().contains("stopped early"), r.toText());
    }

    @Test
    void intervalLogHasOneLatencyOneOkAndOneSendLagHistogramPerSecond(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("run.hlog");
        LoadResult r = open(300).duration(Duration.ofSeconds(2)).hlog(log).build().run();
        long[] counts = new long[3];
        int[] intervals = tagged(log, counts);
        assertTrue(intervals[0] >= 2 && intervals[0] == intervals[1] && intervals[0] == intervals[2],
                java.util.Arrays.toString(intervals) + " latency, ok, send-lag intervals");
        assertEquals(r.requests(), counts[0]);
        assertEquals(r.requests(), counts[1], "every answer was a 200");
    }

    @Test
    void intervalsOfTenMillisecondsSplitTheOkAnswersFromTheRefusals(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("run.hlog");
        LoadResult r = LoadGenerator.builder(server.uri()).mix(RequestMix.parse("1:/ok,1:/status/503")).rate(400)
                .warmup(Duration.ZERO).seed(1).duration(Duration.ofSeconds(1)).interval(Duration.ofMillis(10))
                .hlog(log).build().run();
        long[] counts = new long[3];
        int[] intervals = tagged(log, counts);
        // a second of 10-ms intervals (the coordinator may fall behind, never ahead), plus the drain's
        assertTrue(intervals[0] >= 50 && intervals[0] <= 102, intervals[0] + " intervals");
        assertEquals(r.requests(), counts[0]);
        assertEquals(r.ok().requests(), counts[1], "the ok tag holds exactly the 2xx answers");
        assertTrue(counts[1] > 0 && counts[1] < counts[0], counts[1] + " ok of " + counts[0]);
        assertEquals(counts[0] - counts[1], r.errorsByKind().get(ErrorKind.STATUS_5XX).longValue());
        assertThrows(IllegalArgumentException.class, () -> open(1).interval(Duration.ofNanos(999_999)));
        assertThrows(IllegalArgumentException.class, () -> open(1).interval(Duration.ofSeconds(61)));
    }

    /** Counts a log's intervals (untagged, ok, send_lag) and sums their counts into {@code counts}. */
    private static int[] tagged(Path log, long[] counts) throws Exception {
        int[] n = new int[3];
        try (HistogramLogReader reader = new HistogramLogReader(log.toFile())) {
            EncodableHistogram h;
            while ((h = reader.nextIntervalHistogram()) != null) {
                int i = h.getTag() == null ? 0 : "ok".equals(h.getTag()) ? 1 : "send_lag".equals(h.getTag()) ? 2 : -1;
                assertTrue(i >= 0, "unknown tag " + h.getTag());
                n[i]++;
                counts[i] += ((org.HdrHistogram.Histogram) h).getTotalCount();
            }
        }
        return n;
    }

    @Test
    void theLagLogListsExactlyTheMeasuredSendsAMillisecondLateOrMore(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("lag.csv");
        // a rate one loop cannot send on time: the backlog makes sends late by construction
        LoadResult r = open(50_000).duration(Duration.ofMillis(500)).lagLog(file).build().run();
        List<String> lines = java.nio.file.Files.readAllLines(file);
        long late = r.sendLag().getCountBetweenValues(LoadGenerator.LATE_MICROS, Long.MAX_VALUE);
        assertTrue(late > 0, "a 50,000/s schedule on one loop leaves sends late:\n" + r.toText());
        assertTrue(lines.get(0).contains(" " + late + " in all"), lines.get(0) + " vs " + late);
        assertEquals("t_ms,lag_us", lines.get(1));
        List<String> rows = lines.subList(2, lines.size());
        assertEquals(Math.min(late, LoadGenerator.MAX_LATE_LOGGED), rows.size());
        double previous = -1;
        for (String row : rows) {
            String[] f = row.split(",");
            double t = Double.parseDouble(f[0]);
            assertTrue(t >= previous && t <= 500, row);
            assertTrue(Long.parseLong(f[1]) >= LoadGenerator.LATE_MICROS, row);
            previous = t;
        }
    }

    @Test
    void busyPollingLoopsSendAndCountAsBlockingOnes() throws Exception {
        LoadResult r = open(300).duration(Duration.ofSeconds(1)).busyPoll(true).build().run();
        assertTrue(r.requests() > 150, r.toText());
        assertEquals(0, r.errors(), r.toText());
        assertEquals(r.requests(), r.sendLag().getTotalCount(), "every measured send timed:\n" + r.toText());
    }

    @Test
    void aRateTheConnectionLimitCannotCarryIsReportedNotReduced() throws Exception {
        server.delayMillis = 50;
        // 1 connection at 50 ms per answer carries 20/s; 200/s are offered
        LoadResult r = open(200).maxConnections(1).duration(Duration.ofSeconds(1)).timeout(Duration.ofSeconds(1))
                .build().run();
        assertFalse(r.rateKept(), r.toText());
        assertTrue(r.connectionWaits() > 0, r.toText());
        assertEquals(200, r.offeredRate(), 1e-9);
        assertTrue(r.toText().contains("RATE NOT KEPT"), r.toText());
    }

    @Test
    void badOptionsFailFast() {
        assertThrows(IllegalArgumentException.class, () -> LoadGenerator.builder(URI.create("https://x:1")));
        assertThrows(IllegalArgumentException.class, () -> LoadGenerator.builder(server.uri()).users(0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LoadGenerator.builder(server.uri()).mix(RequestMix.single("/")).build());
        assertTrue(e.getMessage().contains("no load"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> LoadGenerator.builder(server.uri()).mix(RequestMix.single("/")).rate(1).users(1).build());
    }
}
