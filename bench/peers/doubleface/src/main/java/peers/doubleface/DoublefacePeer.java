package peers.doubleface;

import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import peers.PeerArgs;
import peers.Workload;

/**
 * The workload on doubleface's public API, written as a user would from {@code examples/timeline}: a
 * {@code redis://} backend, route {@code GET /}, plan = K {@code Redis.bytes().get(key)} calls to shards
 * 0..K-1, merge = the K values in shard order, written as the response body one after the other. The fifth
 * argument is the configuration (default {@code doubleface}; e.g. {@code type2a-1f1b}).
 */
public final class DoublefacePeer {

    private DoublefacePeer() {}

    static final Redis<byte[], byte[]> REDIS = Redis.bytes();
    static final ReplyHandler<Workload.Query, byte[], byte[]> VALUE = (q, call, value) -> value;

    /**
     * K GETs of one key, the values in shard order; the binding writes them as one body without
     * copying them again ({@link Unpooled#wrappedBuffer(byte[]...)}).
     */
    static final class Service implements FanoutService<Workload.Query, byte[], byte[][]> {
        private final Backend<RedisCommand<?>> redis;

        Service(Backend<RedisCommand<?>> redis) {
            this.redis = redis;
        }

        @Override
        public void plan(Workload.Query q, FanoutPlan<Workload.Query, byte[]> plan) {
            byte[] key = q.keyName().getBytes(StandardCharsets.US_ASCII);
            for (int shard = 0; shard < q.fanout(); shard++) {
                plan.call(redis, shard, REDIS.get(key), VALUE);
            }
        }

        @Override
        public byte[][] merge(Workload.Query q, Replies<byte[]> replies, FanoutPlan<Workload.Query, byte[]> next) {
            byte[][] values = new byte[replies.size()][];
            for (int i = 0; i < values.length; i++) {
                values[i] = replies.get(i);
                if (values[i] == null) {
                    throw new IllegalStateException("no value for " + q.keyName() + " on shard " + replies.shard(i));
                }
            }
            return values;
        }
    }

    /** {@code ?fanout=K&size=small|large[&key=N]} in, the bytes out. */
    static final class Binding implements HttpBinding<Workload.Query, byte[][]> {
        private final int shards;

        Binding(int shards) {
            this.shards = shards;
        }

        @Override
        public Workload.Query decode(HttpRequestView req) throws BadRequestException {
            int fanout = (int) req.queryLong("fanout", 1, 1, shards);
            int key = (int) req.queryLong("key", -1, 0, Workload.KEYS - 1);
            String size = req.queryParam("size");
            if (size != null && !size.equals("small") && !size.equals("large")) {
                throw new BadRequestException("size: expected small or large");
            }
            return Workload.query(fanout, "large".equals(size), key);
        }

        @Override
        public ByteBuf encode(byte[][] values, ByteBufAllocator alloc) {
            return Unpooled.wrappedBuffer(values);
        }

        @Override
        public String contentType() {
            return Workload.CONTENT_TYPE;
        }
    }

    public static void main(String[] argv) throws InterruptedException {
        PeerArgs args = PeerArgs.parse("doubleface", argv, " [CONFIGURATION]");
        // CONFIGURATION[@SHARD-OPTIONS], e.g. doubleface@connection=native (the redis:// URI's options)
        String spec = args.extra().length > 0 ? args.extra()[0] : "doubleface";
        int at = spec.indexOf('@');
        String config = at < 0 ? spec : spec.substring(0, at);
        String uri = "redis://127.0.0.1:" + args.shardPort(0) + "-" + args.shardPort(args.shards() - 1)
                + (at < 0 ? "" : "?" + spec.substring(at + 1));
        FanoutServer.Builder b = FanoutServer.builder()
                .host("127.0.0.1")
                .port(args.port())
                .adminPort(-1)
                .ioThreads(args.ioThreads())
                .configuration(config);
        Backend<RedisCommand<?>> redis = b.backend("redis", RedisDriver.of(uri));
        b.get("/", new Service(redis), new Binding(args.shards()));
        try (FanoutServer server = b.start()) {
            args.ready("doubleface " + PeerArgs.version("io.doubleface", "doubleface-framework") + " " + config
                    + ", netty " + PeerArgs.version("io.netty", "netty-transport") + ", lettuce " + PeerArgs.version("io.lettuce", "lettuce-core") + ", " + args.ioThreads() + " I/O threads, " + uri);
            Thread.currentThread().join();
        }
    }
}
