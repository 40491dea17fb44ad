package peers.vertx5;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisClientType;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.List;
import peers.PeerArgs;
import peers.Workload;

/**
 * The Vert.x 5 peer, written as the Vert.x 5 core and Redis client docs recommend: one {@link VerticleBase}
 * instance per event loop ({@code DeploymentOptions.setInstances(IO_THREADS)}, all listening on the same
 * port: Vert.x balances connections over them), each verticle with its own {@link RedisConnection} per
 * shard (opened in {@code start}, so its callbacks run on the verticle's event loop), {@code Future.all}
 * of the K GETs, the K buffers appended into one. Native transport (epoll) preferred, as the docs advise
 * on Linux. The same workload as the Vert.x 4.5 peer ({@code bench/peers/vertx}), on the current line.
 */
public final class Vertx5Peer extends VerticleBase {

    private static PeerArgs args;
    private RedisConnection[] shards;
    /** The cluster workload: one cluster connection of this verticle (Vert.x routes each command by its key). */
    private RedisConnection cluster;

    public static void main(String[] argv) {
        args = PeerArgs.parse("vertx5", argv, "");
        Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true).setEventLoopPoolSize(args.ioThreads()));
        vertx.deployVerticle(Vertx5Peer::new, new DeploymentOptions().setInstances(args.ioThreads()))
                .onSuccess(id -> args.ready("vertx " + PeerArgs.version("io.vertx", "vertx-core")
                        + ", netty " + PeerArgs.version("io.netty", "netty-transport")
                        + ", redis client " + PeerArgs.version("io.vertx", "vertx-redis-client") + ", native transport "
                        + vertx.isNativeTransportEnabled() + ", " + args.ioThreads() + " verticles"))
                .onFailure(e -> {
                    e.printStackTrace();
                    System.exit(1);
                });
    }

    @Override
    public Future<?> start() {
        shards = new RedisConnection[args.shards()];
        List<Future<?>> connects = new ArrayList<>();
        if (PeerArgs.cluster()) {
            // the Redis client in cluster mode, as its docs show: RedisClientType.CLUSTER with the seeds;
            // the connection learns the slots and sends each command to its key's master
            RedisOptions options = new RedisOptions().setType(RedisClientType.CLUSTER);
            for (int i = 0; i < shards.length; i++) {
                options.addConnectionString("redis://127.0.0.1:" + args.shardPort(i));
            }
            options.setMaxPoolSize(Math.max(6, 2 * shards.length));
            connects.add(Redis.createClient(vertx, options).connect().onSuccess(c -> cluster = c));
        }
        for (int i = 0; i < (PeerArgs.cluster() ? 0 : shards.length); i++) {
            int shard = i;
            connects.add(Redis.createClient(vertx, new RedisOptions()
                            .setConnectionString("redis://127.0.0.1:" + args.shardPort(i)))
                    .connect()
                    .onSuccess(c -> shards[shard] = c));
        }
        return Future.all(connects)
                .compose(v -> vertx.createHttpServer(new HttpServerOptions().setTcpNoDelay(true))
                        .requestHandler(this::handle)
                        .listen(args.port(), "127.0.0.1"));
    }

    private void handle(HttpServerRequest req) {
        Workload.Query q;
        try {
            q = Workload.parse(Workload.queryOf(req.uri()), Workload.maxFanout(shards.length));
        } catch (IllegalArgumentException e) {
            req.response().setStatusCode(400).end(e.getMessage());
            return;
        }
        String key = q.keyName();
        List<Future<Response>> gets = new ArrayList<>(q.fanout());
        for (int i = 0; i < q.fanout(); i++) {
            gets.add(cluster != null ? cluster.send(Request.cmd(Command.GET).arg(q.keyName(i)))
                    : shards[i].send(Request.cmd(Command.GET).arg(key)));
        }
        Future.all(gets).onComplete(ar -> {
            if (ar.failed()) {
                req.response().setStatusCode(502).end();
                return;
            }
            Buffer body = Buffer.buffer(q.fanout() * q.valueLength());
            for (int i = 0; i < q.fanout(); i++) {
                Response r = ar.result().resultAt(i);
                if (r == null) {
                    req.response().setStatusCode(502).end();
                    return;
                }
                body.appendBuffer(r.toBuffer());
            }
            req.response().putHeader("content-type", Workload.CONTENT_TYPE).end(body);
        });
    }
}
