package io.doubleface.services.musuite;

import io.doubleface.driver.DriverSettings;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.server.FanoutServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;

/**
 * A real topology for a μSuite service's tests: its gRPC leaves on ephemeral loopback ports, the
 * mid-tier with an HTTP and a gRPC upstream on ephemeral ports, an HTTP client and a gRPC channel.
 * Timeouts are {@link #GENEROUS}, so a slow machine never turns a correct answer into a 504.
 */
public final class TestServer implements AutoCloseable {

    /** Deadline, shard call timeout and client guard: 30 s. */
    public static final Duration GENEROUS = Duration.ofSeconds(30);

    public final LeafServers leaves;
    public final FanoutServer server;
    public final ManagedChannel channel;
    public final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * Starts {@code leaves} leaves made by {@code leaf}, and a mid-tier whose service {@code install}
     * adds over a gRPC driver of those leaves (with the gRPC method).
     */
    public TestServer(int leafCount, IntFunction<io.grpc.BindableService> leaf,
            BiConsumer<FanoutServer.Builder, GrpcDriver> install) {
        leaves = LeafServers.start("127.0.0.1", 0, leafCount, leaf);
        try {
            GrpcDriver driver = GrpcDriver.of(leaves.addresses(), DriverSettings.DEFAULT.withCallTimeout(GENEROUS)
                    .withConnectTimeout(Duration.ofSeconds(5)));
            FanoutServer.Builder b = FanoutServer.builder();
            install.accept(b, driver);
            server = b.grpc(0).port(0).adminPort(-1).ioThreads(2).configuration("doubleface").deadline(GENEROUS)
                    .start();
            channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
        } catch (RuntimeException e) {
            leaves.close();
            throw e;
        }
    }

    /** {@code GET pathAndQuery} on the mid-tier. */
    public HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + pathAndQuery))
                .timeout(GENEROUS).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        try {
            channel.shutdownNow();
            server.close();
        } finally {
            leaves.close();
            http.shutdownNow();
        }
    }
}
