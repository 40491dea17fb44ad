package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.driver.spi.Resilience;
import io.doubleface.driver.spi.ResilientDriver;
import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.StageStats;
import io.doubleface.internal.Json;
import io.doubleface.server.internal.ServerStats;
import io.doubleface.testing.TestRead;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The typed stats snapshot of a real server after real requests: each count where the requests
 * put it, and {@code /admin/stats} and {@code statsJson()} being that snapshot serialised.
 */
@Timeout(60)
class ServerStatsTest {

    private static final int ECHO_OK = 5;
    private static final int RES_OK = 2;
    private static final int NOT_FOUND = 3;

    @Test
    void theSnapshotCountsWhatRealRequestsDid() throws Exception {
        try (FanoutServer server = start(); HttpClient client = HttpClient.newHttpClient()) {
            for (int i = 0; i < ECHO_OK; i++) {
                assertEquals(200, get(client, server, "/echo?key=" + i + "&fan=3").statusCode());
            }
            for (int i = 0; i < RES_OK; i++) {
                assertEquals(200, get(client, server, "/res?key=" + i + "&fan=2").statusCode());
            }
            for (int i = 0; i < NOT_FOUND; i++) {
                assertEquals(404, get(client, server, "/nope/" + i).statusCode());
            }
            HttpResponse<String> post = client.send(HttpRequest.newBuilder(uri(server, "/echo?key=1"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(405, post.statusCode());
            assertEquals(400, get(client, server, "/echo?key=abc").statusCode());
            int answered = ECHO_OK + RES_OK + NOT_FOUND + 2;

            ServerStats s = awaitAnswered(server, answered);
            assertEquals("doubleface", s.config());
            assertEquals(FanoutServer.DEFAULT_DEADLINE_MS, s.deadlineMs());
            assertTrue(s.uptimeMs() >= 0);

            // every request by outcome; only the routed, decoded ones reached the engine
            assertEquals(ECHO_OK + RES_OK, s.requests().admitted());
            assertEquals(ECHO_OK + RES_OK, s.requests().count(Outcome.OK));
            assertEquals(NOT_FOUND, s.requests().count(Outcome.NOT_FOUND));
            assertEquals(1, s.requests().count(Outcome.METHOD_NOT_ALLOWED));
            assertEquals(1, s.requests().count(Outcome.BAD_REQUEST));
            assertEquals(0, s.requests().count(Outcome.TIMEOUT));
            assertEquals(answered, s.requests().answered());
            assertEquals(Outcome.values().length, s.requests().outcomes().size(), "every outcome, zeros too");

            // per route
            assertEquals(List.of("GET /echo", "GET /res"), s.routes().stream().map(ServerStats.Route::route).toList());
            assertEquals(ECHO_OK, s.route("GET /echo").count(Outcome.OK));
            assertEquals(RES_OK, s.route("GET /res").count(Outcome.OK));
            assertEquals(RES_OK, s.route("GET /res").answered());
            assertTrue(s.route("GET /res").meanMs() > 0, s.route("GET /res").toString());
            assertNull(s.route("GET /nope"));

            // backends, in the builder's order
            assertEquals(List.of("echo", "res"), s.backends().stream().map(ServerStats.Backend::name).toList());
            ServerStats.Backend echo = s.backend("echo");
            assertEquals(4, echo.shards());
            assertEquals("generated", echo.scheme());
            assertTrue(echo.topology().isEmpty());
            assertNull(echo.resilience(), "no resilience settings");
            ServerStats.Backend res = s.backend("res");
            assertEquals(2, res.shards());
            assertNotNull(res.resilience());
            assertEquals(0, res.resilience().counts().circuitsOpened());

            ServerStats.Admission admission = s.admission();
            assertTrue(admission.on());
            assertEquals("fixed", admission.mode());
            assertEquals(100, admission.limit());
            assertEquals(0, admission.inFlight());
            assertEquals(0, admission.refused());

            // every traced request (one in one) went through every stage
            assertEquals(1, s.stages().oneIn());
            Map<StageStats.Stage, StageStats.Summary> traced = s.stages().byConfiguration().get("doubleface");
            assertEquals(ECHO_OK + RES_OK, traced.get(StageStats.Stage.TOTAL).count());

            assertEquals(0, s.error("decode").count(), "a bad request is not the service's error");
            assertEquals(0, s.connections().refused());
            assertEquals(0, s.connections().slowReadersClosed());

            List<String> ioLoops = s.loops().stream().filter(l -> l.group().equals("io")).map(ServerStats.Loop::name)
                    .toList();
            assertEquals(List.of("io-0", "io-1"), ioLoops);
            assertTrue(s.loops().stream().mapToLong(ServerStats.Loop::events).sum() > 0, "the requests were I/O");
            assertEquals(List.of("doubleface"), s.configurations());
            assertEquals(0, s.switches());
            assertTrue(s.switchLog().isEmpty());
            assertNull(s.adapter(), "a static configuration has no adapter");

            // a switch shows in the next snapshot, not in the one taken before it
            server.switchTo("type1-4");
            ServerStats after = server.internals().stats();
            assertEquals("type1-4", after.config());
            assertEquals(1, after.switches());
            assertEquals("doubleface", after.switchLog().getLast().from());
            assertEquals("type1-4", after.switchLog().getLast().to());
            assertEquals(List.of("doubleface", "type1-4"), after.configurations());
            assertEquals("doubleface", s.config());
            assertEquals(0, s.switches());
        }
    }

    @Test
    void aSnapshotCannotBeChanged() throws Exception {
        try (FanoutServer server = start()) {
            ServerStats s = server.internals().stats();
            assertThrows(UnsupportedOperationException.class, () -> s.routes().clear());
            assertThrows(UnsupportedOperationException.class, () -> s.backends().clear());
            assertThrows(UnsupportedOperationException.class, () -> s.loops().clear());
            assertThrows(UnsupportedOperationException.class, () -> s.requests().outcomes().put(Outcome.OK, 7L));
            assertThrows(UnsupportedOperationException.class, () -> s.route("GET /echo").outcomes().clear());
            assertThrows(UnsupportedOperationException.class,
                    () -> s.loops().get(0).tailBatchHistogramLog2().set(0, 9L));
        }
    }

    @Test
    void adminStatsAndStatsJsonAreTheSnapshotSerialised() throws Exception {
        try (FanoutServer server = start(); HttpClient client = HttpClient.newHttpClient()) {
            for (int i = 0; i < 3; i++) {
                assertEquals(200, get(client, server, "/echo?key=" + i + "&fan=2").statusCode());
            }
            assertEquals(404, get(client, server, "/nope").statusCode());
            awaitAnswered(server, 4);
            HttpResponse<String> admin = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + server.adminPort() + "/admin/stats")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, admin.statusCode());
            assertEquals("application/json", admin.headers().firstValue("content-type").orElse(""));
            String fromSnapshot = server.internals().stats().toJson();
            String fromServer = server.statsJson();
            // quiet now: only the clocks, the loops' own counters and the threads moved in between
            assertEquals(stable(fromSnapshot), stable(admin.body()));
            assertEquals(stable(fromSnapshot), stable(fromServer));
        }
    }

    /** The document without what moves on an idle server. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> stable(String json) {
        Map<String, Object> doc = (Map<String, Object>) Json.parse(json);
        doc.remove("uptime_ms");
        doc.remove("loops");
        doc.remove("threads");
        return doc;
    }

    private static FanoutServer start() {
        FanoutServer.Builder b = FanoutServer.builder();
        Backend<TestRead> echo = b.backend("echo", new GeneratedShards(4), false);
        Backend<TestRead> res = b.backend("res", ResilientDriver.wrap(new GeneratedShards(2),
                Resilience.<TestRead>none().circuitBreaker(3, Duration.ofSeconds(30))));
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        b.get("/res", new EchoService(res), new EchoService.Binding());
        return b.port(0).adminPort(0).ioThreads(2).configuration("doubleface").admission(Admission.fixed(100))
                .traceStages(1).start();
    }

    /** The snapshot once {@code n} requests are answered (the counts are written as each answer goes). */
    private static ServerStats awaitAnswered(FanoutServer server, long n) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        ServerStats s = server.internals().stats();
        while (s.requests().answered() < n && System.nanoTime() < end) {
            Thread.sleep(5);
            s = server.internals().stats();
        }
        assertEquals(n, s.requests().answered(), s.requests().toString());
        return s;
    }

    private static URI uri(FanoutServer server, String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    private static HttpResponse<String> get(HttpClient client, FanoutServer server, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(uri(server, path)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
