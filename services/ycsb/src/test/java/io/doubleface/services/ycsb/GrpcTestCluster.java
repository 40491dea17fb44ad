package io.doubleface.services.ycsb;

import io.doubleface.driver.DriverSettings;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.ycsb.v1.FanoutServiceGrpc;
import io.doubleface.services.ycsb.v1.QueryReply;
import io.doubleface.services.ycsb.v1.QueryRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real topology over gRPC: gRPC KV leaves on ephemeral loopback ports, the YCSB mid-tier with an
 * HTTP and a gRPC upstream fanning out through {@link GrpcDriver}, and an HTTP and a gRPC client.
 * Timeouts are {@link TestCluster#GENEROUS} unless a test sets its own.
 */
final class GrpcTestCluster implements AutoCloseable {

    static final int RECORDS = TestCluster.RECORDS;

    final GrpcLeafServer leaf;
    final GrpcDriver driver;
    final FanoutServer server;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    final ManagedChannel channel;

    private GrpcTestCluster(Builder b) {
        leaf = GrpcLeafServer.builder().shards(b.shards).records(RECORDS).start();
        try {
            List<InetSocketAddress> addresses = new ArrayList<>(leaf.addresses());
            b.replaced.forEach(addresses::set);
            driver = GrpcDriver.of(addresses, DriverSettings.DEFAULT.withCallTimeout(b.callTimeout)
                    .withConnectTimeout(Duration.ofSeconds(5)));
            FanoutServer.Builder sb = FanoutServer.builder();
            YcsbService.install(sb, new GrpcRecords(driver), RECORDS, YcsbService.DEFAULT_SCAN_RECORDS, 0, true);
            server = sb.grpc(0).port(0).adminPort(-1).ioThreads(2)
                    .configuration(b.configuration).deadline(b.deadline).start();
            channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
        } catch (RuntimeException e) {
            leaf.close();
            throw e;
        }
    }

    static Builder builder(int shards) {
        return new Builder(shards);
    }

    /** Options; defaults: {@code doubleface}, generous deadline and call timeout. */
    static final class Builder {
        private final int shards;
        private String configuration = "doubleface";
        private Duration deadline = TestCluster.GENEROUS;
        private Duration callTimeout = TestCluster.GENEROUS;
        private final Map<Integer, InetSocketAddress> replaced = new HashMap<>();

        private Builder(int shards) {
            this.shards = shards;
        }

        Builder configuration(String name) {
            this.configuration = name;
            return this;
        }

        Builder deadline(Duration d) {
            this.deadline = d;
            return this;
        }

        Builder callTimeout(Duration d) {
            this.callTimeout = d;
            return this;
        }

        /** Shard {@code shard} is reached at {@code address} instead of on the cluster's own leaf. */
        Builder shardAt(int shard, InetSocketAddress address) {
            replaced.put(shard, address);
            return this;
        }

        GrpcTestCluster start() {
            return new GrpcTestCluster(this);
        }
    }

    static QueryRequest request(YcsbQuery q) {
        return QueryRequest.newBuilder().setFanout(q.fanout()).setSize(q.size().label()).setKey(q.key()).build();
    }

    /** One gRPC query; the body, or the status as a {@link StatusRuntimeException}. */
    String grpc(YcsbQuery q) {
        return grpc(request(q));
    }

    String grpc(QueryRequest r) {
        QueryReply reply = FanoutServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(TestCluster.GENEROUS.toMillis(), TimeUnit.MILLISECONDS).query(r);
        return reply.getBody().toString(StandardCharsets.UTF_8);
    }

    /** The status code of a gRPC query ({@code OK} when it succeeded). */
    Status.Code grpcStatus(YcsbQuery q) {
        try {
            grpc(q);
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    HttpResponse<String> get(YcsbQuery q) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + TestCluster.path(q)))
                .timeout(TestCluster.GENEROUS).build(), HttpResponse.BodyHandlers.ofString());
    }

    String expected(YcsbQuery q) {
        return TestCluster.expected(driver.shardCount(), q);
    }

    @Override
    public void close() {
        try {
            channel.shutdownNow();
            server.close();
        } finally {
            leaf.close();
            http.shutdownNow();
        }
    }
}
