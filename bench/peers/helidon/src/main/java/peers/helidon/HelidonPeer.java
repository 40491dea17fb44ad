package peers.helidon;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import peers.PeerArgs;
import peers.Workload;

/**
 * The Helidon peer: Helidon 4 SE WebServer, whose handlers run on a virtual thread per request (its
 * default), with Lettuce, one thread-safe {@link StatefulRedisConnection} per shard shared by every
 * request ({@link ByteArrayCodec}). Blocking style, as Helidon 4's docs write handlers: by default
 * ({@code join}) the handler issues the K {@code GET}s with the async API and then blocks its virtual
 * thread on each future in shard order (the K calls overlap, as in every other peer); with the fifth
 * argument {@code sync} it calls the sync API K times in a row (K round trips per request). The
 * virtual-thread scheduler's parallelism is IO_THREADS; Lettuce's I/O and computation pools too.
 */
public final class HelidonPeer {

    private HelidonPeer() {}

    public static void main(String[] argv) {
        PeerArgs args = PeerArgs.parse("helidon", argv, " [join|sync]");
        boolean sync = args.extra().length > 0 && args.extra()[0].equals("sync");
        // before the first virtual thread: the carrier pool has IO_THREADS threads
        System.setProperty("jdk.virtualThreadScheduler.parallelism", Integer.toString(args.ioThreads()));
        ClientResources resources = DefaultClientResources.builder()
                .ioThreadPoolSize(args.ioThreads())
                .computationThreadPoolSize(args.ioThreads())
                .build();
        RedisClient client = RedisClient.create(resources);
        List<StatefulRedisConnection<byte[], byte[]>> shards = new ArrayList<>();
        for (int i = 0; i < args.shards(); i++) {
            shards.add(client.connect(ByteArrayCodec.INSTANCE, RedisURI.create("127.0.0.1", args.shardPort(i))));
        }
        WebServer server = WebServer.builder()
                .host("127.0.0.1")
                .port(args.port())
                .routing(r -> r.get("/", (req, res) -> handle(req, res, shards, sync)))
                .build()
                .start();
        args.ready("helidon " + io.helidon.common.Version.VERSION + ", lettuce " + PeerArgs.version("io.lettuce", "lettuce-core")
                + ", netty " + PeerArgs.version("io.netty", "netty-transport")
                + ", " + (sync ? "sync API, K GETs in a row" : "async GETs joined") + ", virtual threads on "
                + args.ioThreads() + " carriers");
    }

    private static void handle(ServerRequest req, ServerResponse res, List<StatefulRedisConnection<byte[], byte[]>> shards,
            boolean sync) {
        Workload.Query q;
        try {
            String raw = req.query().rawValue();
            q = Workload.parse(raw.isEmpty() ? null : raw, shards.size());
        } catch (IllegalArgumentException e) {
            res.status(Status.BAD_REQUEST_400).send(e.getMessage());
            return;
        }
        byte[] key = q.keyName().getBytes(StandardCharsets.US_ASCII);
        byte[][] values = new byte[q.fanout()][];
        try {
            if (sync) {
                for (int i = 0; i < values.length; i++) {
                    values[i] = shards.get(i).sync().get(key);
                }
            } else {
                List<RedisFuture<byte[]>> gets = new ArrayList<>(values.length);
                for (int i = 0; i < values.length; i++) {
                    gets.add(shards.get(i).async().get(key));
                }
                for (int i = 0; i < values.length; i++) {
                    values[i] = gets.get(i).get();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            res.status(Status.BAD_GATEWAY_502).send();
            return;
        } catch (ExecutionException | RuntimeException e) {
            res.status(Status.BAD_GATEWAY_502).send();
            return;
        }
        int n = 0;
        for (byte[] v : values) {
            if (v == null) {
                res.status(Status.BAD_GATEWAY_502).send();
                return;
            }
            n += v.length;
        }
        byte[] body = new byte[n];
        int at = 0;
        for (byte[] v : values) {
            System.arraycopy(v, 0, body, at, v.length);
            at += v.length;
        }
        res.header(HeaderNames.CONTENT_TYPE, Workload.CONTENT_TYPE).send(body);
    }
}
