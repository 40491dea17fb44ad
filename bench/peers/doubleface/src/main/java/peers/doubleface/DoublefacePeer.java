package peers.doubleface;

import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.CallRef;
import io.doubleface.driver.FlushMode;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import peers.PeerArgs;
import peers.Workload;

/**
 * The workload on doubleface's public API, written as a user would from {@code examples/timeline}: a
 * {@code redis://} backend, route {@code GET /}, plan = K {@code Redis.bytes().getBuffer(key)} calls to
 * shards 0..K-1, merge = the K values in shard order as the response body. The fifth argument is the
 * configuration (default {@code doubleface}; e.g. {@code type2a-1f1b}, {@code doubleface+bytes},
 * {@code doubleface+flush=per-write}).
 */
public final class DoublefacePeer {

    private DoublefacePeer() {}

    static final Redis<byte[], byte[]> REDIS = Redis.bytes();

    /**
     * K GETs of one key, the values in shard order, as the response body. By default the values are
     * never copied: {@link Redis#getBuffer} hands each over as a slice of the bytes read from its
     * shard (on {@code connection=native}), the handler keeps it, and merge answers a composite of
     * the slices, taken over from the framework ({@code Replies.take}). With {@code +bytes} the form most users write first: {@link Redis#get}
     * to {@code byte[]} values, copied into one array in merge.
     */
    static final class Service implements FanoutService<Workload.Query, Object, ByteBuf> {
        /** Each shard's value as the driver handed it over: {@code byte[]} with {@code +bytes}, else a buffer. */
        static final CallRef<byte[]> BYTES = CallRef.named("bytes");
        static final CallRef<ByteBuf> BUFFER = CallRef.named("buffer");

        private final Backend<RedisCommand<?>> redis;
        private final boolean copy;
        /** The cluster workload: K distinct keys, each call routed by its key. */
        private final boolean cluster = PeerArgs.cluster();

        /** @param copy {@code byte[]} values copied into one array (else buffers, uncopied) */
        Service(Backend<RedisCommand<?>> redis, boolean copy) {
            this.redis = redis;
            this.copy = copy;
        }

        @Override
        public void plan(Workload.Query q, FanoutPlan<Workload.Query, Object> plan) {
            if (cluster) {
                for (int j = 0; j < q.fanout(); j++) {
                    byte[] k = q.keyName(j).getBytes(StandardCharsets.US_ASCII);
                    if (copy) {
                        plan.call(redis, REDIS.get(k), BYTES);
                    } else {
                        plan.call(redis, REDIS.getBuffer(k), BUFFER);
                    }
                }
                return;
            }
            // one command for every shard: a RedisCommand is immutable and reusable, and it encodes
            // its RESP bytes once, when it is built
            byte[] key = q.keyName().getBytes(StandardCharsets.US_ASCII);
            if (copy) {
                RedisCommand<byte[]> get = REDIS.get(key);
                for (int shard = 0; shard < q.fanout(); shard++) {
                    plan.call(redis, shard, get, BYTES);
                }
            } else {
                RedisCommand<ByteBuf> get = REDIS.getBuffer(key);
                for (int shard = 0; shard < q.fanout(); shard++) {
                    plan.call(redis, shard, get, BUFFER);
                }
            }
        }

        @Override
        public ByteBuf merge(Workload.Query q, Replies<Object> replies, FanoutPlan<Workload.Query, Object> next) {
            for (int i = 0; i < replies.size(); i++) {
                if (replies.get(i) == null) {
                    throw new IllegalStateException("no value for " + q.keyName() + " on shard " + replies.shard(i));
                }
            }
            if (copy) {
                int n = 0;
                for (int i = 0; i < replies.size(); i++) {
                    n += replies.get(i, BYTES).length;
                }
                byte[] body = new byte[n];
                int at = 0;
                for (int i = 0; i < replies.size(); i++) {
                    byte[] v = replies.get(i, BYTES);
                    System.arraycopy(v, 0, body, at, v.length);
                    at += v.length;
                }
                return Unpooled.wrappedBuffer(body);
            }
            // each value taken over from the framework (its reference, not a retain) into the body
            CompositeByteBuf body = Unpooled.compositeBuffer(replies.size());
            for (int i = 0; i < replies.size(); i++) {
                body.addComponent(true, replies.take(i, BUFFER));
            }
            return body;
        }
    }

    /** {@code ?fanout=K&size=small|large[&key=N]} in, the bytes out. */
    static final class Binding implements HttpBinding<Workload.Query, ByteBuf> {
        private final int shards;

        Binding(int shards) {
            this.shards = shards;
        }

        @Override
        public Workload.Query decode(HttpRequestView req) throws BadRequestException {
            int fanout = (int) req.queryLong("fanout", 1, 1, Workload.maxFanout(shards));
            int key = (int) req.queryLong("key", -1, 0, Workload.KEYS - 1);
            String size = req.queryParam("size");
            if (size != null && !size.equals("small") && !size.equals("large")) {
                throw new BadRequestException("size: expected small or large");
            }
            return Workload.query(fanout, "large".equals(size), key);
        }

        @Override
        public ByteBuf encode(ByteBuf body, ByteBufAllocator alloc) {
            return body;
        }

        @Override
        public String contentType() {
            return Workload.CONTENT_TYPE;
        }
    }

    /** {@code PEER_ADMIN_PORT} (a diagnostic: the admin listener on loopback), else -1 (off). */
    private static int adminPort() {
        String p = System.getenv("PEER_ADMIN_PORT");
        return p == null || p.isBlank() ? -1 : Integer.parseInt(p.strip());
    }

    public static void main(String[] argv) throws InterruptedException {
        PeerArgs args = PeerArgs.parse("doubleface", argv, " [CONFIGURATION]");
        // CONFIGURATION[+bytes][@SHARD-OPTIONS], e.g. doubleface@connection=native (the redis:// URI's
        // options); +bytes: byte[] values copied into one array in merge instead of uncopied buffers
        // +flush=POLICY: the shard connections' flush mode (per-iteration, the default; per-write;
        // batch:N[:MICROS]), as --flush-policy and PUT /admin/knobs?flush-policy= take it; +loops=N: N I/O
        // threads instead of the harness's (its layout's) count
        String spec = args.extra().length > 0 ? args.extra()[0] : "doubleface";
        int at = spec.indexOf('@');
        String[] parts = (at < 0 ? spec : spec.substring(0, at)).split("\\+");
        String config = parts[0];
        boolean copy = false;
        FlushMode flush = FlushMode.PER_ITERATION;
        int ioThreads = args.ioThreads();
        for (int i = 1; i < parts.length; i++) {
            if (parts[i].equals("bytes")) {
                copy = true;
            } else if (parts[i].startsWith("flush=")) {
                flush = FlushMode.parse(parts[i].substring("flush=".length()));
            } else if (parts[i].startsWith("loops=")) {
                String n = parts[i].substring("loops=".length());
                try {
                    ioThreads = Integer.parseInt(n);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("+loops=" + n + ": not a number of I/O threads");
                }
                if (ioThreads < 1) {
                    throw new IllegalArgumentException("+loops=" + ioThreads + ": at least 1");
                }
            } else {
                throw new IllegalArgumentException("configuration suffix '+" + parts[i] + "' (expected: +bytes, +flush=POLICY, +loops=N)");
            }
        }
        String uri = (PeerArgs.cluster() ? "redis-cluster://127.0.0.1:" + args.shardPort(0) + ",127.0.0.1:"
                + args.shardPort(args.shards() - 1) : "redis://127.0.0.1:" + args.shardPort(0) + "-"
                + args.shardPort(args.shards() - 1)) + (at < 0 ? "" : "?" + spec.substring(at + 1));
        FanoutServer.Builder b = FanoutServer.builder()
                .host("127.0.0.1")
                .port(args.port())
                // off, as in every measurement; bench/peers.sh --trace-stages sets PEER_ADMIN_PORT to read
                // the per-stage tracing of an open-loop window (docs/tracing.md)
                .adminPort(adminPort())
                .ioThreads(ioThreads)
                .configuration(config)
                .flushMode(flush);
        Backend<RedisCommand<?>> redis = b.backend("redis", RedisDriver.of(uri));
        b.get("/", new Service(redis, copy), new Binding(args.shards()));
        try (FanoutServer server = b.start()) {
            args.ready("doubleface " + PeerArgs.version("io.doubleface", "doubleface-framework") + " " + config
                    + (copy ? " (byte[] values, copied in merge)" : " (values as buffers, uncopied)")
                    + ", flush " + flush + ", netty " + PeerArgs.version("io.netty", "netty-transport") + ", lettuce " + PeerArgs.version("io.lettuce", "lettuce-core") + ", " + ioThreads + " I/O threads, " + uri);
            Thread.currentThread().join();
        }
    }
}
