package io.doubleface.services.router;

import io.doubleface.api.Backend;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.grpc.GrpcCall;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.musuite.Answered;
import io.doubleface.services.router.v1.LeafGetReply;
import io.doubleface.services.router.v1.LeafGetRequest;
import io.doubleface.services.router.v1.LeafSetReply;
import io.doubleface.services.router.v1.LeafSetRequest;
import io.doubleface.services.router.v1.RouterLeafGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Router mid-tier (μSuite, μTune OSDI '18 §3): replicated key-value routing over gRPC leaves.
 * A key's group of replicas is {@link RouterKeys#group} (XXH64, then jump consistent hash).
 *
 * <pre>
 *   get key ──▶ one replica of the key's group (round robin over the replicas)
 *               └─ failed or late ─▶ next round: the next replica, … at most `replicas` rounds
 *   set key ──▶ every replica of the group at once; a majority must store it
 * </pre>
 *
 * <p><b>Failures.</b> A get fails ({@code 503}, gRPC {@code UNAVAILABLE}; {@code 504} at the
 * deadline) only when every replica of the group failed; a failed or late replica costs one more
 * round (late: after the leaf call timeout). A set is {@link FailurePolicy#quorum quorum(majority)}:
 * answered once a majority ({@code replicas/2 + 1}) stored the value, the others listed in
 * {@code missing_replicas}; fewer is a {@code 503}. There is no read repair: a replica that missed a
 * set answers the old value until the key is set again.
 *
 * <p><b>Stores.</b> The replicas are gRPC Router leaves ({@link RouterLeaf}, {@code doubleface leaf router})
 * or Redis servers ({@link #installOnRedis}, {@code doubleface leaf router --store redis}: each
 * replica a {@code redis-server}, a get one {@code GET}, a set one {@code SET}); routing, failover
 * and the majority rule are the same over both.
 *
 * <p>Thread-safe: the only shared state is the round-robin counter (an {@link AtomicInteger}).
 */
public final class RouterService {

    /** Name of the leaves' backend: {@value}. */
    public static final String BACKEND = "router";
    /** The HTTP route of gets: {@value}. */
    public static final String GET_PATH = "/router/get";
    /** The HTTP route of sets: {@value}. */
    public static final String SET_PATH = "/router/set";

    private RouterService() {}

    /**
     * Adds Router to a server: a backend {@value #BACKEND} over {@code leaves} (closed by the server),
     * {@code GET} {@value #GET_PATH}{@code ?key=K} and {@code GET} {@value #SET_PATH}{@code ?key=K&value=V}
     * and, if {@code grpc}, the gRPC methods {@code doubleface.router.v1.Router/Get} and {@code /Set}.
     *
     * @param builder the server being built
     * @param leaves the leaves' driver: {@code groups × replicas} leaves
     * @param replicas replicas per group
     * @param grpc whether to add the gRPC methods
     * @return the key layout
     */
    public static RouterKeys install(FanoutServer.Builder builder, ShardDriver<GrpcCall<?, ?>> leaves, int replicas,
            boolean grpc) {
        return install(builder, new LeafStore(builder.backend(BACKEND, leaves)), leaves.shardCount(), replicas, grpc);
    }

    /**
     * As {@link #install(FanoutServer.Builder, ShardDriver, int, boolean)} with Redis servers as the
     * replicas: a get is {@code GET key} on one replica, a set {@code SET key value} on every replica of
     * the group. The servers are laid out as the leaves would be ({@code groups × replicas}, replica
     * {@code r} of group {@code g} is shard {@code g × replicas + r}); {@link RouterLoader} fills them.
     *
     * @param builder the server being built
     * @param redis the Redis servers' driver (closed by the server)
     * @param replicas replicas per group
     * @param grpc whether to add the gRPC methods
     * @return the key layout
     */
    public static RouterKeys installOnRedis(FanoutServer.Builder builder, ShardDriver<RedisCommand<?>> redis,
            int replicas, boolean grpc) {
        return install(builder, new RedisStore(builder.backend(BACKEND, redis)), redis.shardCount(), replicas, grpc);
    }

    private static RouterKeys install(FanoutServer.Builder builder, Store store, int shards, int replicas,
            boolean grpc) {
        RouterKeys layout = new RouterKeys(shards, replicas);
        Get get = new Get(store, layout);
        Set set = new Set(store, layout);
        builder.get(GET_PATH, get, new RouterBindings.GetHttp());
        builder.get(SET_PATH, set, new RouterBindings.SetHttp());
        if (grpc) {
            builder.grpcMethod(get, new RouterBindings.GetGrpc());
            builder.grpcMethod(set, new RouterBindings.SetGrpc());
        }
        return layout;
    }

    /**
     * As {@link #install(FanoutServer.Builder, ShardDriver, int, boolean)} over the replicas of a URI:
     * {@code grpc://} Router leaves, or {@code redis://} servers ({@link #installOnRedis}).
     *
     * @param builder the server being built
     * @param leavesUri e.g. {@code grpc://127.0.0.1:7701-7712} or {@code redis://127.0.0.1:7701-7712}
     * @param replicas replicas per group
     * @param grpc whether to add the gRPC methods
     * @return the key layout
     * @throws IllegalArgumentException if the URI is malformed or of another scheme
     */
    public static RouterKeys install(FanoutServer.Builder builder, String leavesUri, int replicas, boolean grpc) {
        if (leavesUri.startsWith("redis://")) {
            return installOnRedis(builder, RedisDriver.of(leavesUri), replicas, grpc);
        }
        if (!leavesUri.startsWith("grpc://")) {
            throw new IllegalArgumentException("leaves: " + leavesUri
                    + " (expected: grpc://HOST:PORT… for Router leaves or redis://HOST:PORT… for Redis replicas)");
        }
        return install(builder, GrpcDriver.of(leavesUri), replicas, grpc);
    }

    /** How a get and a set reach one replica. */
    private interface Store {
        /** Plans the get of {@code q} on replica {@code leaf}. */
        void get(FanoutPlan<GetQuery, RouterResult.Got> plan, int leaf, GetQuery q);

        /** Plans the set of {@code q} on each replica of {@code leaves}. */
        void set(FanoutPlan<SetQuery, Boolean> plan, int[] leaves, SetQuery q);
    }

    /** Router leaves over gRPC. */
    private record LeafStore(Backend<GrpcCall<?, ?>> leaves) implements Store {
        /** Per reply: the leaf's reply as the answer. */
        private static final ReplyHandler<GetQuery, LeafGetReply, RouterResult.Got> GOT =
                (q, call, r) -> new RouterResult.Got(q.key, r.getFound(), r.getValue());
        /** Per reply: an acknowledgement. */
        private static final ReplyHandler<SetQuery, LeafSetReply, Boolean> ACK = (q, call, r) -> Boolean.TRUE;

        @Override
        public void get(FanoutPlan<GetQuery, RouterResult.Got> plan, int leaf, GetQuery q) {
            plan.call(leaves, leaf, GrpcCall.of(RouterLeafGrpc.getGetMethod(),
                    LeafGetRequest.newBuilder().setKey(q.key).build()), GOT);
        }

        @Override
        public void set(FanoutPlan<SetQuery, Boolean> plan, int[] replicas, SetQuery q) {
            GrpcCall<LeafSetRequest, LeafSetReply> call = GrpcCall.of(RouterLeafGrpc.getSetMethod(),
                    LeafSetRequest.newBuilder().setKey(q.key()).setValue(q.value()).build());
            for (int leaf : replicas) {
                plan.call(leaves, leaf, call, ACK);
            }
        }
    }

    /** Redis servers: {@code GET} and {@code SET} of UTF-8 strings. */
    private record RedisStore(Backend<RedisCommand<?>> servers) implements Store {
        private static final Redis<String, String> REDIS = Redis.utf8();
        /** Per reply: the value ({@code null}: not found) as the answer. */
        private static final ReplyHandler<GetQuery, String, RouterResult.Got> GOT =
                (q, call, v) -> new RouterResult.Got(q.key, v != null, v == null ? "" : v);
        /** Per reply: {@code OK}, an acknowledgement (any other reply fails the call as a shard error). */
        private static final ReplyHandler<SetQuery, String, Boolean> ACK = (q, call, r) -> Boolean.TRUE;

        @Override
        public void get(FanoutPlan<GetQuery, RouterResult.Got> plan, int leaf, GetQuery q) {
            plan.call(servers, leaf, REDIS.get(q.key), GOT);
        }

        @Override
        public void set(FanoutPlan<SetQuery, Boolean> plan, int[] replicas, SetQuery q) {
            RedisCommand<String> set = REDIS.set(q.key(), q.value());
            for (int leaf : replicas) {
                plan.call(servers, leaf, set, ACK);
            }
        }
    }

    /** A decoded get: the key, and (set by plan and merge) its group, first replica and attempts so far. */
    public static final class GetQuery {
        final String key;
        int group;
        int first;
        int attempt;

        /**
         * A get.
         *
         * @param key the key (checked by the binding)
         */
        public GetQuery(String key) {
            this.key = key;
        }

        @Override
        public String toString() {
            return "get " + key;
        }
    }

    /**
     * A decoded set.
     *
     * @param key the key
     * @param value the value
     */
    public record SetQuery(String key, String value) {}

    /** Gets: one replica per round, the next one after a failure. */
    static final class Get implements FanoutService<GetQuery, RouterResult.Got, RouterResult.Got> {
        private final Store store;
        private final RouterKeys layout;
        /** Spreads the gets of a group over its replicas; contended only by gets, one increment each. */
        private final AtomicInteger next = new AtomicInteger();

        Get(Store store, RouterKeys layout) {
            this.store = store;
            this.layout = layout;
        }

        @Override
        public void plan(GetQuery q, FanoutPlan<GetQuery, RouterResult.Got> plan) {
            q.group = layout.group(q.key);
            q.first = Math.floorMod(next.getAndIncrement(), layout.replicas());
            q.attempt = 0;
            call(q, plan);
        }

        private void call(GetQuery q, FanoutPlan<GetQuery, RouterResult.Got> plan) {
            // the last replica's failure fails the request; earlier ones go to merge, which tries the next
            boolean last = q.attempt == layout.replicas() - 1;
            plan.failurePolicy(last ? FailurePolicy.failFast() : FailurePolicy.bestEffort());
            int replica = (q.first + q.attempt) % layout.replicas();
            store.get(plan, layout.leaf(q.group, replica), q);
        }

        @Override
        public RouterResult.Got merge(GetQuery q, Replies<RouterResult.Got> replies,
                FanoutPlan<GetQuery, RouterResult.Got> next) {
            if (replies.ok(0)) {
                return replies.get(0);
            }
            q.attempt++;
            call(q, next);
            return null;
        }
    }

    /** Sets: every replica of the group, a majority needed. */
    static final class Set implements FanoutService<SetQuery, Boolean, RouterResult.Stored> {
        private final Store store;
        private final RouterKeys layout;
        private final FailurePolicy majority;

        Set(Store store, RouterKeys layout) {
            this.store = store;
            this.layout = layout;
            this.majority = FailurePolicy.quorum(layout.replicas() / 2 + 1);
        }

        @Override
        public void plan(SetQuery q, FanoutPlan<SetQuery, Boolean> plan) {
            plan.failurePolicy(majority);
            int group = layout.group(q.key());
            int[] replicas = new int[layout.replicas()];
            for (int r = 0; r < replicas.length; r++) {
                replicas[r] = layout.leaf(group, r);
            }
            store.set(plan, replicas, q);
        }

        @Override
        public RouterResult.Stored merge(SetQuery q, Replies<Boolean> replies, FanoutPlan<SetQuery, Boolean> next) {
            List<Integer> stored = new ArrayList<>(replies.size());
            for (int i = 0; i < replies.size(); i++) {
                if (replies.ok(i)) {
                    stored.add(replies.shard(i));
                }
            }
            return new RouterResult.Stored(q.key(), stored, Answered.of(replies).missing());
        }
    }
}
