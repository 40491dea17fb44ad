package peers.reactor;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.reactive.RedisClusterReactiveCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.reactivestreams.Publisher;
import peers.PeerArgs;
import peers.Workload;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * The Reactor peer: Reactor Netty's {@link HttpServer} (the server under Spring WebFlux) with the Lettuce
 * reactive API, as Lettuce recommends: one {@link StatefulRedisConnection} per shard, thread-safe and
 * shared by every request ({@link ByteArrayCodec}). A request is {@code Flux.mergeSequential} of the K
 * {@code GET} monos (subscribed together, emitted in shard order), collected and concatenated into one
 * {@code byte[]} sent with its Content-Length. Reactor Netty runs IO_THREADS event loops (native epoll,
 * its default on Linux); Lettuce's own I/O and computation pools are sized IO_THREADS too.
 */
public final class ReactorPeer {

    private ReactorPeer() {}

    public static void main(String[] argv) {
        PeerArgs args = PeerArgs.parse("reactor", argv, "");
        ClientResources resources = DefaultClientResources.builder()
                .ioThreadPoolSize(args.ioThreads())
                .computationThreadPoolSize(args.ioThreads())
                .build();
        List<RedisReactiveCommands<byte[], byte[]>> shards = new ArrayList<>();
        RedisClusterReactiveCommands<byte[], byte[]> cluster = null;
        if (PeerArgs.cluster()) {
            // Lettuce's cluster client, as its docs show: one StatefulRedisClusterConnection (thread-safe,
            // routing each command by its key's slot, MOVED/ASK followed) shared by every request
            List<RedisURI> seeds = new ArrayList<>();
            for (int i = 0; i < args.shards(); i++) {
                seeds.add(RedisURI.create("127.0.0.1", args.shardPort(i)));
            }
            RedisClusterClient cc = RedisClusterClient.create(resources, seeds);
            cluster = cc.connect(ByteArrayCodec.INSTANCE).reactive();
        } else {
            RedisClient client = RedisClient.create(resources);
            for (int i = 0; i < args.shards(); i++) {
                StatefulRedisConnection<byte[], byte[]> c =
                        client.connect(ByteArrayCodec.INSTANCE, RedisURI.create("127.0.0.1", args.shardPort(i)));
                shards.add(c.reactive());
            }
        }
        RedisClusterReactiveCommands<byte[], byte[]> clusterCommands = cluster;
        int maxFanout = Workload.maxFanout(args.shards());
        DisposableServer server = HttpServer.create()
                .host("127.0.0.1")
                .port(args.port())
                .runOn(LoopResources.create("http", args.ioThreads(), true))
                .handle((req, res) -> handle(req, res, shards, clusterCommands, maxFanout))
                .bindNow();
        args.ready("reactor-netty " + PeerArgs.pinned("reactor-netty.version")
                + ", lettuce " + PeerArgs.version("io.lettuce", "lettuce-core")
                + ", netty " + PeerArgs.version("io.netty", "netty-transport") + ", " + args.ioThreads() + " loops");
        server.onDispose().block();
    }

    private static Publisher<Void> handle(HttpServerRequest req, HttpServerResponse res,
            List<RedisReactiveCommands<byte[], byte[]>> shards, RedisClusterReactiveCommands<byte[], byte[]> cluster,
            int maxFanout) {
        Workload.Query q;
        try {
            q = Workload.parse(Workload.queryOf(req.uri()), maxFanout);
        } catch (IllegalArgumentException e) {
            return res.status(HttpResponseStatus.BAD_REQUEST).sendString(Mono.just(e.getMessage()));
        }
        List<Mono<byte[]>> gets = new ArrayList<>(q.fanout());
        if (cluster != null) {
            for (int i = 0; i < q.fanout(); i++) {
                gets.add(cluster.get(q.keyName(i).getBytes(StandardCharsets.US_ASCII)));
            }
        } else {
            byte[] key = q.keyName().getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < q.fanout(); i++) {
                gets.add(shards.get(i).get(key));
            }
        }
        Mono<byte[]> body = Flux.mergeSequential(gets)
                .collectList()
                .map(values -> {
                    if (values.size() != q.fanout()) {
                        throw new IllegalStateException("missing value");
                    }
                    byte[] out = new byte[values.stream().mapToInt(v -> v.length).sum()];
                    int at = 0;
                    for (byte[] v : values) {
                        System.arraycopy(v, 0, out, at, v.length);
                        at += v.length;
                    }
                    return out;
                });
        return body.flatMap(b -> Mono.from(res.header(HttpHeaderNames.CONTENT_TYPE, Workload.CONTENT_TYPE)
                        .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(b.length))
                        .sendByteArray(Mono.just(b))))
                .onErrorResume(e -> Mono.from(res.status(HttpResponseStatus.BAD_GATEWAY).send()));
    }
}
