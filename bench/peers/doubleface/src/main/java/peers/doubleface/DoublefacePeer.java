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
 * 0..K-1, merge = the K values concatenated in shard order, encoded as the response body. The fifth
 * argument is the configuration (default {@code doubleface}; e.g. {@code type2a-1f1b}).
 */
public final class DoublefacePeer {

    private DoublefacePeer() {}

    static final Redis<byte[], byte[]> REDIS = Redis.bytes();
    static final ReplyHandler<Workload.Query, byte[], byte[]> VALUE = (q, call, value) -> value;

    /**
     * K GETs of one key, the values in shard order: copied into one array in merge, or (with
     * {@code +wrapped}) handed to the binding as they are, which writes them with
     * {@link Unpooled#wrappedBuffer(byte[]...)}. Measured side by side (docs/benchmarks.md): the
     * copy in merge is not what costs at 20 kB, so the plain form is the default.
     */
    static final class Service implements FanoutService<Workload.Query, byte[], byte[][]> {
        private final Backend<RedisCommand<?>> redis;
        private final boolean concat;

        /** @param concat copy the values into one array in merge (the default) */
        Service(Backend<RedisCommand<?>> redis, boolean concat) {
            this.redis = redis;
            this.concat = concat;
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
            if (concat) {
                int n = 0;
                for (byte[] v : values) {
                    n += v.length;
                }
                byte[] body = new byte[n];
                int at = 0;
                for (byte[] v : values) {
                    System.arraycopy(v, 0, body, at, v.length);
                    at += v.length;
                }
                return new byte[][] {body};
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
        // CONFIGURATION[+wrapped][@SHARD-OPTIONS], e.g. doubleface@connection=native (the redis:// URI's
        // options); +wrapped: merge hands the values over uncopied, the binding wraps them
        String spec = args.extra().length > 0 ? args.extra()[0] : "doubleface";
        boolean concat = !spec.contains("+wrapped");
        spec = spec.replace("+wrapped", "");
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
        b.get("/", new Service(redis, concat), new Binding(args.shards()));
        try (FanoutServer server = b.start()) {
            args.ready("doubleface " + PeerArgs.version("io.doubleface", "doubleface-framework") + " " + config
                    + (concat ? "" : " (values wrapped, not copied in merge)") + ", netty " + PeerArgs.version("io.netty", "netty-transport") + ", lettuce " + PeerArgs.version("io.lettuce", "lettuce-core") + ", " + args.ioThreads() + " I/O threads, " + uri);
            Thread.currentThread().join();
        }
    }
}
