package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.FlushMode;
import io.doubleface.driver.spi.LoopFlush;
import io.doubleface.internal.loop.CpuAffinity;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.server.FanoutServer;
import io.netty.channel.EventLoop;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The loop knobs of {@code serve ycsb} ({@code --flush-policy}, {@code --pin-io-threads}) and
 * {@code /admin/knobs}, over the embedded KV leaf on real sockets: they reach every loop of the
 * server, also those a configuration switch starts; a policy switch under concurrent load answers
 * every request; pinning is read back from the kernel.
 */
class LoopKnobsTest {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return http.send(b.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> put(URI admin, String query) throws Exception {
        return send(HttpRequest.newBuilder(admin.resolve("/admin/knobs?" + query)).PUT(HttpRequest.BodyPublishers.noBody()));
    }

    /** Every loop group of the server (I/O loops and the built configurations' own). */
    private static List<LoopGroup> groups(FanoutServer server) {
        return server.internals().loopGroups();
    }

    private static void assertPolicy(FanoutServer server, FlushMode expected) {
        assertEquals(expected, server.flushMode());
        for (LoopGroup g : groups(server)) {
            for (EventLoop loop : g.loops()) {
                assertEquals(expected, LoopFlush.of(loop).mode(), g.name());
            }
        }
    }

    /** {@code Cpus_allowed_list} of each loop thread of {@code g}, read on the loop from /proc. */
    private static List<String> allowed(LoopGroup g) throws Exception {
        List<String> out = new ArrayList<>();
        for (EventLoop loop : g.loops()) {
            out.add(loop.submit(CpuAffinity::procAllowedList).get(10, TimeUnit.SECONDS));
        }
        return out;
    }

    /** {@code /admin/stats} once {@code until} holds for it, or after 5 s as it is then. */
    private String statsWhen(URI admin, java.util.function.Predicate<String> until) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            String body = send(HttpRequest.newBuilder(admin.resolve("/admin/stats"))).body();
            if (until.test(body) || System.nanoTime() > end) {
                return body;
            }
            Thread.sleep(10);
        }
    }

    @Test
    void flushModeAndPinningReachEveryLoopAndSwitchAtRunTime() throws Exception {
        String before = CpuAffinity.procAllowedList(); // this thread's: what unpinned loops get back
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start("serve", "ycsb", "--port", "0", "--admin-port", "0",
                "--embedded-shards", "4", "--records", "100", "--io-threads", "2", "--config", "doubleface",
                "--flush-mode", "batch:1000:200us", "--pin-io-threads", "0");
        FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
        URI base = URI.create("http://127.0.0.1:" + server.port());
        URI admin = URI.create("http://127.0.0.1:" + server.adminPort());
        try {
            assertPolicy(server, FlushMode.batch(1000, 200));
            assertEquals(List.of("0", "0"), allowed(server.internals().ioLoops()));
            assertTrue(r.out().contains("knobs    flush batch:1000:200us, I/O loops pinned to CPUs [0]"), r.out());
            // a batch larger than the load: answered by its timer
            HttpResponse<String> q = send(HttpRequest.newBuilder(base.resolve("/query?fanout=4&size=small&key=42")));
            assertEquals(200, q.statusCode(), q.body());

            HttpResponse<String> get = send(HttpRequest.newBuilder(admin.resolve("/admin/knobs")));
            assertEquals(200, get.statusCode(), get.body());
            assertEquals("{\"flush_policy\":\"batch:1000:200us\",\"pin_io_threads\":[0],\"trace_stages\":\"off\"}\n",
                    get.body());

            HttpResponse<String> set = put(admin, "flush-mode=per-write&pin-io-threads=0-1");
            assertEquals(200, set.statusCode(), set.body());
            assertEquals("{\"flush_policy\":\"per-write\",\"pin_io_threads\":[0,1],\"trace_stages\":\"off\"}\n",
                    set.body());
            assertPolicy(server, FlushMode.PER_WRITE);
            assertEquals(List.of("0", "1"), allowed(server.internals().ioLoops()));

            // a configuration with its own loops: they get the knobs when they start
            HttpResponse<String> sw = send(HttpRequest.newBuilder(admin.resolve("/admin/config?name=type2a-1f3b"))
                    .PUT(HttpRequest.BodyPublishers.noBody()));
            assertEquals(200, sw.statusCode(), sw.body());
            assertPolicy(server, FlushMode.PER_WRITE);
            LoopGroup backends = groups(server).stream().filter(g -> g.name().equals("t2a-be")).findFirst().orElseThrow();
            assertEquals(List.of("0", "1", "0"), allowed(backends));
            q = send(HttpRequest.newBuilder(base.resolve("/query?fanout=4&size=small&key=42")));
            assertEquals(200, q.statusCode(), q.body());

            // bad input: 400 with what was expected, nothing changed
            HttpResponse<String> bad = put(admin, "flush-policy=batch:0");
            assertEquals(400, bad.statusCode(), bad.body());
            assertTrue(bad.body().contains("expected"), bad.body());
            assertEquals(400, put(admin, "pin-io-threads=x").statusCode());
            assertEquals(400, put(admin, "nothing=1").statusCode());
            // one bad parameter: nothing of the PUT is applied
            HttpResponse<String> badTrace = put(admin, "flush-policy=per-iteration&trace-stages=sampled:0");
            assertEquals(400, badTrace.statusCode(), badTrace.body());
            assertTrue(badTrace.body().startsWith("trace-stages: 'sampled:0' (expected"), badTrace.body());
            assertPolicy(server, FlushMode.PER_WRITE);
            assertEquals(0, server.internals().knobs().traceStages());

            // stage tracing switched on at run time: the next requests are traced, off again stops it
            HttpResponse<String> on = put(admin, "trace-stages=sampled:1");
            assertEquals(200, on.statusCode(), on.body());
            assertTrue(on.body().contains("\"trace_stages\":\"all\""), on.body());
            assertEquals(1, server.internals().knobs().traceStages());
            assertFalse(send(HttpRequest.newBuilder(admin.resolve("/admin/stats"))).body().contains("\"round_trip\""));
            for (int i = 0; i < 3; i++) {
                assertEquals(200, send(HttpRequest.newBuilder(base.resolve("/query?fanout=4&size=small&key=" + i))).statusCode());
            }
            // a traced request's stages are recorded just after its answer is written: wait for them
            String stats = statsWhen(admin, b -> b.contains("\"round_trip\""));
            assertTrue(stats.contains("\"round_trip\""), stats);
            // a new window: the figures so far forgotten, tracing still on
            assertEquals(400, put(admin, "reset-stages=yes").statusCode());
            assertTrue(send(HttpRequest.newBuilder(admin.resolve("/admin/stats"))).body().contains("\"round_trip\""));
            assertEquals(200, put(admin, "reset-stages=true").statusCode());
            assertFalse(send(HttpRequest.newBuilder(admin.resolve("/admin/stats"))).body().contains("\"round_trip\""));
            assertEquals(200, send(HttpRequest.newBuilder(base.resolve("/query?fanout=4&size=small&key=7"))).statusCode());
            stats = statsWhen(admin, b -> b.contains("\"total\":{\"count\":1,"));
            assertTrue(stats.contains("\"total\":{\"count\":1,"), stats);
            HttpResponse<String> sampled = put(admin, "trace-stages=SAMPLED:50");
            assertTrue(sampled.body().contains("\"trace_stages\":\"sampled:50\""), sampled.body());
            assertEquals(200, put(admin, "trace-stages=off").statusCode());
            assertEquals(0, server.internals().knobs().traceStages());

            HttpResponse<String> off = put(admin, "pin-io-threads=off&flush-policy=per-iteration");
            assertEquals(200, off.statusCode(), off.body());
            assertNull(server.pinnedCpus());
            assertEquals(List.of(before, before), allowed(server.internals().ioLoops()));
            assertEquals(List.of(before, before, before), allowed(backends));
            assertPolicy(server, FlushMode.PER_ITERATION);
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
    }

    @Test
    void switchingTheFlushModeUnderConcurrentLoadAnswersEveryRequest() throws Exception {
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start("serve", "ycsb", "--port", "0", "--admin-port", "0",
                "--embedded-shards", "4", "--records", "100", "--io-threads", "2", "--config", "doubleface");
        FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
        URI base = URI.create("http://127.0.0.1:" + server.port());
        List<FlushMode> policies = List.of(FlushMode.PER_WRITE, FlushMode.batch(16, 100),
                FlushMode.batch(1000, 500), FlushMode.PER_ITERATION, FlushMode.batch(3, 20));
        AtomicInteger switches = new AtomicInteger();
        Thread switcher = new Thread(() -> {
            for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
                server.flushMode(policies.get(i % policies.size()));
                switches.incrementAndGet();
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        try {
            switcher.start();
            int clients = 16;
            int each = 60;
            List<CompletableFuture<Void>> all = new ArrayList<>();
            AtomicInteger ok = new AtomicInteger();
            for (int c = 0; c < clients; c++) {
                int client = c;
                all.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < each; i++) {
                        int key = (client * each + i) % 100;
                        try {
                            HttpResponse<String> q = send(HttpRequest.newBuilder(
                                    base.resolve("/query?fanout=4&size=small&key=" + key)));
                            assertEquals(200, q.statusCode(), q.body());
                            assertTrue(q.body().startsWith("{\"key\":" + key + ","), q.body());
                            ok.incrementAndGet();
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                }));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertEquals(clients * each, ok.get());
            assertTrue(switches.get() > 5, "switches during the load: " + switches.get());
        } finally {
            switcher.interrupt();
            switcher.join();
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
    }
}
