package io.doubleface.services.social;

import io.doubleface.driver.DriverSettings;
import io.doubleface.mongo.MongoDriver;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.redis.RedisDriver;
import io.doubleface.redis.RedisServers;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.social.v1.SocialGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A real topology for the social network's tests: {@code redis-server} processes and embedded
 * mongo-java-server shards on ephemeral loopback ports, loaded with the data; the mid-tier with an
 * HTTP and a gRPC upstream; an HTTP client and a gRPC channel.
 */
final class SocialCluster implements AutoCloseable {

    /** Deadline, shard call timeout and client guard of a cluster that should never time out: 30 s. */
    static final Duration GENEROUS = Duration.ofSeconds(30);

    final SocialData data;
    final RedisServers redis;
    final MongoLeafServer mongo;
    final FanoutServer server;
    final ManagedChannel channel;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * Starts the shards, loads {@code data} and starts a mid-tier over them.
     *
     * @param deadline the request deadline
     * @param callTimeout the shards' call timeout
     */
    SocialCluster(SocialData data, int redisShards, int mongoShards, ComposeService.Settings compose,
            Duration deadline, Duration callTimeout) {
        this.data = data;
        redis = RedisServers.start(redisShards, 0);
        MongoLeafServer m = null;
        try {
            m = MongoLeafServer.builder().shards(mongoShards).start();
            String mongoUri = m.uri();
            SocialLoader.load(redis.uri(), mongoUri, data);
            DriverSettings settings = DriverSettings.DEFAULT.withCallTimeout(callTimeout)
                    .withConnectTimeout(Duration.ofSeconds(2));
            FanoutServer.Builder b = FanoutServer.builder();
            SocialService.install(b, RedisDriver.of(redis.uri(), settings),
                    MongoDriver.of(mongoUri, MongoDriver.Options.DEFAULT.with(settings)
                            .withHeartbeat(Duration.ofMillis(500))), data, compose, true);
            server = b.grpc(0).port(0).adminPort(-1).ioThreads(2).configuration("doubleface").deadline(deadline)
                    .start();
            channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
            mongo = m;
        } catch (RuntimeException e) {
            if (m != null) {
                m.close();
            }
            redis.close();
            throw e;
        }
    }

    HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(pathAndQuery)).timeout(GENEROUS).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String pathAndQuery, String body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(pathAndQuery)).timeout(GENEROUS)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> timeline(int user, int limit) throws IOException, InterruptedException {
        return get(SocialService.TIMELINE_PATH + "?user=" + user + "&limit=" + limit);
    }

    SocialGrpc.SocialBlockingStub stub() {
        return SocialGrpc.newBlockingStub(channel).withDeadlineAfter(GENEROUS.toMillis(), TimeUnit.MILLISECONDS);
    }

    private URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
    }

    @Override
    public void close() {
        try {
            channel.shutdownNow();
            server.close();
        } finally {
            mongo.close();
            redis.close();
            http.shutdownNow();
        }
    }
}
