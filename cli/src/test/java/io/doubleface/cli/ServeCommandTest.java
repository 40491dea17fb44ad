package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.kv.KvRequest;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code serve ycsb} and {@code leaf kv} started in-process on free ports, queried over real sockets. */
class ServeCommandTest {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return http.send(b.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void serveWithEmbeddedShardsAnswersQueriesAndSwitchesConfiguration() throws Exception {
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start("serve", "ycsb", "--port", "0", "--admin-port", "0",
                "--embedded-shards", "4", "--records", "100", "--io-threads", "2", "--config", "type1-4");
        FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
        URI base = URI.create("http://127.0.0.1:" + server.port());
        URI admin = URI.create("http://127.0.0.1:" + server.adminPort());
        try {
            HttpResponse<String> first = send(HttpRequest.newBuilder(base.resolve("/query?fanout=3&size=medium&key=42")));
            assertEquals(200, first.statusCode(), first.body());
            assertTrue(first.body().startsWith("{\"key\":42,\"fanout\":3,\"size\":\"medium\",\"replies\":[[{\"key\":42,"),
                    first.body());

            HttpResponse<String> sw = send(HttpRequest.newBuilder(admin.resolve("/admin/config?name=doubleface"))
                    .PUT(HttpRequest.BodyPublishers.noBody()));
            assertEquals(200, sw.statusCode(), sw.body());
            assertEquals("doubleface", server.configuration().name());

            HttpResponse<String> second = send(HttpRequest.newBuilder(base.resolve("/query?fanout=3&size=medium&key=42")));
            assertEquals(200, second.statusCode(), second.body());
            assertEquals(first.body(), second.body(), "same query, other model: byte-identical");

            HttpResponse<String> health = send(HttpRequest.newBuilder(base.resolve("/health")));
            assertEquals(200, health.statusCode(), health.body());
            assertEquals("ok\n", health.body(), "no shard call, answered by the merge of an empty plan");
            assertEquals(200, send(HttpRequest.newBuilder(base.resolve("/health?ready"))).statusCode());

            String banner = r.out();
            assertTrue(banner.contains("curl '" + base + "/query?fanout=4&size=small&key=42'"), banner);
            assertTrue(banner.contains(admin + "/admin/stats"), banner);
            assertTrue(banner.contains("config   type1-4"), banner);
            assertTrue(banner.contains("ready    every backend connected"), banner);
            assertTrue(banner.contains("4 shards on 127.0.0.1"), banner);
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
        assertThrows(ConnectException.class, () -> http.send(HttpRequest.newBuilder(base.resolve("/query")).build(),
                HttpResponse.BodyHandlers.discarding()), "stopped server still listening");
    }

    @Test
    void serveOverAnExternalLeafReadsItsShards() throws Exception {
        try (KvLeafServer leaf = KvLeafServer.builder().shards(3).basePort(0).records(50).start()) {
            CliRun r = new CliRun();
            CompletableFuture<Integer> exit = r.start("serve", "ycsb", "--port", "0", "--admin-port", "-1",
                    "--shards", leaf.uri(), "--records", "50", "--io-threads", "1");
            FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
            try {
                assertEquals(-1, server.adminPort());
                HttpResponse<String> q = send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/query?fanout=3&size=small&key=7")));
                assertEquals(200, q.statusCode(), q.body());
                assertTrue(r.out().contains("shards   " + leaf.uri() + " (3 shards, 50 records each)"), r.out());
            } finally {
                assertEquals(0, r.stopAndAwait(exit), r.err());
            }
        }
    }

    @Test
    void healthReadyAnswers503UntilEveryShardIsConnected() throws Exception {
        int deadPort = io.doubleface.testing.StallingProxy.closedLowPort();
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start("serve", "ycsb", "--port", "0", "--admin-port", "0",
                "--shards", "kv://127.0.0.1:" + deadPort, "--records", "50", "--io-threads", "1",
                "--await-ready", "100ms");
        FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
        URI base = URI.create("http://127.0.0.1:" + server.port());
        try {
            assertTrue(r.out().contains("ready    not yet: "), r.out());
            HttpResponse<String> ready = send(HttpRequest.newBuilder(base.resolve("/health?ready")));
            assertEquals(503, ready.statusCode(), ready.body());
            assertEquals("connecting\n", ready.body());
            HttpResponse<String> live = send(HttpRequest.newBuilder(base.resolve("/health")));
            assertEquals(200, live.statusCode(), "liveness does not wait for the shards: " + live.body());
            try (KvLeafServer leaf = KvLeafServer.builder().shards(1).basePort(deadPort).records(50).start()) {
                server.awaitReady(Duration.ofSeconds(30));
                ready = send(HttpRequest.newBuilder(base.resolve("/health?ready")));
                assertEquals(200, ready.statusCode(), ready.body());
                assertEquals("ok\n", ready.body());
            } finally {
                assertEquals(0, r.stopAndAwait(exit), r.err());
            }
        } finally {
            if (!exit.isDone()) {
                r.stopAndAwait(exit);
            }
        }
    }

    @Test
    void theReadyFileHoldsThePortsOnceListening(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp)
            throws Exception {
        java.nio.file.Path ready = tmp.resolve("ready.json");
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start("serve", "ycsb", "--port", "0", "--admin-port", "0",
                "--grpc-port", "0", "--embedded-shards", "2", "--records", "20", "--io-threads", "1",
                "--ready-file", ready.toString());
        FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!java.nio.file.Files.exists(ready) && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            java.util.Map<String, Object> ports = ReadyFile.read(ready);
            assertEquals(server.port(), ((Number) ports.get("port")).intValue());
            assertEquals(server.adminPort(), ((Number) ports.get("admin_port")).intValue());
            assertEquals(server.grpcPort(), ((Number) ports.get("grpc_port")).intValue());
            assertEquals(ProcessHandle.current().pid(), ((Number) ports.get("pid")).longValue());
            assertTrue(!java.nio.file.Files.exists(tmp.resolve("ready.json.tmp")), "temporary file left behind");
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
        // a ready file that cannot be written is a usage error before anything starts
        CliRun bad = new CliRun();
        int code = bad.run("serve", "ycsb", "--port", "0", "--admin-port", "-1", "--embedded-shards", "1",
                "--ready-file", tmp.resolve("no/such/dir/ready.json").toString());
        assertEquals(DoubleFaceCli.EXIT_USAGE, code, bad.out() + bad.err());
        assertTrue(bad.err().contains("does not exist"), bad.err());
    }

    @Test
    void portInUseIsARunTimeFailureWithAClearMessage() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            CliRun r = new CliRun();
            int code = r.run("serve", "ycsb", "--port", Integer.toString(taken.getLocalPort()), "--admin-port", "-1",
                    "--embedded-shards", "1", "--io-threads", "1");
            assertEquals(1, code, r.err());
            assertTrue(r.err().contains("cannot listen on 127.0.0.1:" + taken.getLocalPort()), r.err());
        }
    }

    @Test
    void leafServesItsShardsUntilStopped() throws Exception {
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start("leaf", "kv", "--shards", "2", "--base-port", "0", "--records", "10");
        KvLeafServer leaf = r.leaf.get(30, TimeUnit.SECONDS);
        try (KvDriver driver = KvDriver.of(leaf.addresses()); BlockingClient client = driver.openBlocking()) {
            assertTrue(r.out().startsWith("listening on 127.0.0.1:"), r.out());
            assertTrue(r.out().contains("(2 shards, 10 records)"), r.out());
            ByteBuf reply = (ByteBuf) client.call(1, KvRequest.readRecord(3), TimeUnit.SECONDS.toNanos(5));
            try {
                assertEquals(1, reply.getUnsignedShort(reply.readerIndex()), "one record in a READ reply");
                assertEquals(3, reply.getLong(reply.readerIndex() + 2), "the record asked for");
            } finally {
                reply.release();
            }
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
    }
}
