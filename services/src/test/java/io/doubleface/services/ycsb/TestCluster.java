package io.doubleface.services.ycsb;

import io.doubleface.api.FanoutPlan;
import io.doubleface.api.ShardRequest;
import io.doubleface.data.Records;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A real topology for tests: a KV leaf process-equivalent (shards on ephemeral loopback ports),
 * the YCSB mid-tier on an ephemeral port with an admin port, and an HTTP client.
 */
final class TestCluster implements AutoCloseable {

    static final int RECORDS = 200;

    final KvLeafServer leaf;
    final KvDriver driver;
    final FanoutServer<YcsbQuery, byte[], YcsbService.Result> server;
    final YcsbService service;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private TestCluster(int shards, long replyWorkNanos, UnaryOperator<FanoutServer.Builder<YcsbQuery, byte[], YcsbService.Result>> tweak) {
        leaf = KvLeafServer.builder().shards(shards).basePort(0).records(RECORDS).start();
        driver = new KvDriver(leaf.addresses());
        service = new YcsbService(RECORDS, YcsbService.DEFAULT_SCAN_RECORDS, replyWorkNanos);
        FanoutServer.Builder<YcsbQuery, byte[], YcsbService.Result> b = FanoutServer
                .builder(service, new YcsbBinding(shards, RECORDS))
                .driver(driver, true).port(0).adminPort(0).ioThreads(2);
        server = tweak.apply(b).start();
    }

    static TestCluster start(int shards, String configuration) {
        return new TestCluster(shards, 0, b -> b.configuration(configuration));
    }

    static TestCluster start(int shards, UnaryOperator<FanoutServer.Builder<YcsbQuery, byte[], YcsbService.Result>> tweak) {
        return new TestCluster(shards, 0, tweak);
    }

    URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
    }

    URI admin(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.adminPort() + pathAndQuery);
    }

    HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> adminPut(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(admin(pathAndQuery)).timeout(Duration.ofSeconds(10))
                .PUT(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> adminGet(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(admin(pathAndQuery)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The response the service must give for a query, computed without any network, thread or
     * model: plan → the generator's canonical replies → onReply → merge → encode.
     */
    String expected(int fanout, Size size, long key) {
        YcsbQuery q = new YcsbQuery(fanout, size, key);
        List<ShardRequest> calls = new ArrayList<>();
        int shards = driver.shardCount();
        service.plan(q, new FanoutPlan() {
            @Override
            public int call(int shard, ShardRequest request) {
                calls.add(request);
                return calls.size() - 1;
            }

            @Override
            public int shardCount() {
                return shards;
            }
        });
        List<byte[]> parts = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            ByteBuf reply = Unpooled.buffer();
            Records.writeReply(calls.get(i), RECORDS, reply);
            parts.add(service.onReply(q, i, reply));
            reply.release();
        }
        ByteBuf body = new YcsbBinding(shards, RECORDS).encode(service.merge(q, parts), ByteBufAllocator.DEFAULT);
        try {
            return body.toString(java.nio.charset.StandardCharsets.UTF_8);
        } finally {
            body.release();
        }
    }

    @Override
    public void close() {
        server.close();
        leaf.close();
    }
}
