package io.doubleface.services.hdsearch;

import io.doubleface.api.Backend;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.grpc.GrpcCall;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.musuite.Answered;
import io.doubleface.services.hdsearch.v1.HdSearchLeafGrpc;
import io.doubleface.services.hdsearch.v1.LeafReply;
import io.doubleface.services.hdsearch.v1.LeafRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * The HDSearch mid-tier (μSuite, μTune OSDI '18 §3): k-nearest-neighbour search over feature
 * vectors sharded over gRPC leaves.
 *
 * <pre>
 *   query vector ──plan: probe the LSH tables──▶ candidate ids, split by leaf (id % leaves)
 *        ──▶ HdSearchLeaf/Nearest(ids of that leaf, vector, k) to each leaf with candidates
 *        ──▶ onReply: check the leaf's top k and pack it into sorted (distance, id) keys
 *        ──▶ merge: k-way merge of the sorted keys into the global k nearest
 * </pre>
 *
 * <p><b>Per-reply work.</b> The reply handler turns a leaf's reply into one sorted {@code long[]} of
 * {@link #key keys} (distance bits, then id; a non-negative float's bits order as the float does),
 * checking that the leaf answered at most k points, sorted, so that merge only walks k heads. A
 * handler may not write per-request state (handlers of one request can run concurrently), so the
 * merge into one per-request heap cannot happen in the handler itself; the sorted partial list is
 * the part of the merge that each reply can do alone.
 *
 * <p><b>Failures.</b> {@link FailurePolicy#quorum quorum(1)}: a leaf that fails or is late is left
 * out and listed in {@code missing_leaves} (the answer is then the k nearest of the other leaves'
 * candidates); if no leaf answers, the request fails ({@code 503}, gRPC {@code UNAVAILABLE}; at the
 * deadline {@code 504}). A query without candidates calls no leaf and answers no neighbours.
 *
 * <p>Thread-safe: the index is read-only; per-request state is in {@link HdSearchQuery}.
 */
public final class HdSearchService implements FanoutService<HdSearchQuery, long[], HdSearchResult> {

    /** Name of the leaves' backend: {@value}. */
    public static final String BACKEND = "hdsearch";
    /** The HTTP route: {@value}. */
    public static final String PATH = "/hdsearch";

    private static final ReplyHandler<HdSearchQuery, LeafReply, long[]> PARTIAL = HdSearchService::partial;

    private final Backend<GrpcCall<?, ?>> leaves;
    private final HdSearchData data;
    private final LshIndex index;

    /**
     * Adds HDSearch to a server: a backend {@value #BACKEND} over {@code leaves} (closed by the
     * server), {@code GET} {@value #PATH} ({@link HdSearchHttpBinding}) and, if {@code grpc}, the gRPC
     * method {@code doubleface.hdsearch.v1.HdSearch/Search} (the caller sets the gRPC port).
     *
     * @param builder the server being built
     * @param leaves the leaves' driver, leaf i serving points {@code i % leaves} of {@code data}
     * @param data the corpus the leaves serve
     * @param index the LSH tables over {@code data}
     * @param grpc whether to add the gRPC method
     * @return the service
     */
    public static HdSearchService install(FanoutServer.Builder builder, ShardDriver<GrpcCall<?, ?>> leaves,
            HdSearchData data, LshIndex index, boolean grpc) {
        HdSearchService service = new HdSearchService(builder.backend(BACKEND, leaves), data, index);
        builder.get(PATH, service, new HdSearchHttpBinding(data));
        if (grpc) {
            builder.grpcMethod(service, new HdSearchGrpcBinding(data));
        }
        return service;
    }

    /**
     * As {@link #install(FanoutServer.Builder, ShardDriver, HdSearchData, LshIndex, boolean)} over
     * the leaves of a URI.
     *
     * @param builder the server being built
     * @param leavesUri e.g. {@code grpc://127.0.0.1:7601-7604}
     * @param data the corpus the leaves serve
     * @param index the LSH tables over {@code data}
     * @param grpc whether to add the gRPC method
     * @return the service
     */
    public static HdSearchService install(FanoutServer.Builder builder, String leavesUri, HdSearchData data,
            LshIndex index, boolean grpc) {
        return install(builder, GrpcDriver.of(leavesUri), data, index, grpc);
    }

    /**
     * The service over a backend of leaves.
     *
     * @param leaves the leaves, leaf i serving points {@code i % leaves.shardCount()}
     * @param data the corpus
     * @param index the LSH tables over {@code data}
     */
    public HdSearchService(Backend<GrpcCall<?, ?>> leaves, HdSearchData data, LshIndex index) {
        if (index.dims() != data.dims()) {
            throw new IllegalArgumentException("index of " + index.dims() + "-d vectors for " + data.dims()
                    + "-d data");
        }
        this.leaves = leaves;
        this.data = data;
        this.index = index;
    }

    /** {@return the corpus} */
    public HdSearchData data() {
        return data;
    }

    /** {@return the LSH tables} */
    public LshIndex index() {
        return index;
    }

    @Override
    public void plan(HdSearchQuery q, FanoutPlan<HdSearchQuery, long[]> plan) {
        plan.failurePolicy(FailurePolicy.quorum(1));
        int[] candidates = index.candidates(q.vector());
        if (candidates.length == 0) {
            q.candidates = 0;
            return; // no call: merged at once, with no neighbours
        }
        int n = leaves.shardCount();
        List<int[]> split = split(candidates, n);
        q.candidates = 0;
        for (int leaf = 0; leaf < n; leaf++) {
            int[] ids = split.get(leaf);
            if (ids.length == 0) {
                continue;
            }
            q.candidates += ids.length;
            LeafRequest.Builder r = LeafRequest.newBuilder().setK(q.k());
            for (int id : ids) {
                r.addIds(id);
            }
            for (float x : q.vector()) {
                r.addVector(x);
            }
            plan.call(leaves, leaf, GrpcCall.of(HdSearchLeafGrpc.getNearestMethod(), r.build()), PARTIAL);
        }
    }

    /** The candidates of each leaf ({@code id % leaves}), each ascending. */
    static List<int[]> split(int[] candidates, int leaves) {
        int[] counts = new int[leaves];
        for (int id : candidates) {
            counts[id % leaves]++;
        }
        List<int[]> out = new ArrayList<>(leaves);
        for (int leaf = 0; leaf < leaves; leaf++) {
            out.add(new int[counts[leaf]]);
        }
        int[] fill = new int[leaves];
        for (int id : candidates) {
            int leaf = id % leaves;
            out.get(leaf)[fill[leaf]++] = id;
        }
        return out;
    }

    /** The per-reply work: the leaf's top k as sorted keys, checked. */
    static long[] partial(HdSearchQuery q, int call, LeafReply reply) {
        int n = reply.getIdsCount();
        if (n != reply.getDistancesCount() || n > q.k()) {
            throw new IllegalStateException("malformed leaf reply: " + n + " ids, " + reply.getDistancesCount()
                    + " distances for k=" + q.k());
        }
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            float d = reply.getDistances(i);
            if (!(d >= 0f)) {
                throw new IllegalStateException("malformed leaf reply: distance " + d);
            }
            keys[i] = key(d, reply.getIds(i));
            if (i > 0 && keys[i] <= keys[i - 1]) {
                throw new IllegalStateException("malformed leaf reply: not sorted at " + i);
            }
        }
        return keys;
    }

    @Override
    public HdSearchResult merge(HdSearchQuery q, Replies<long[]> replies, FanoutPlan<HdSearchQuery, long[]> next) {
        Answered<long[]> a = Answered.of(replies);
        return result(mergeSorted(a.values(), q.k()), q.candidates, a.missing());
    }

    /** The {@code k} smallest keys of sorted arrays, ascending: a k-way merge of their heads. */
    static long[] mergeSorted(List<long[]> parts, int k) {
        int[] heads = new int[parts.size()];
        long[] out = new long[k];
        int n = 0;
        while (n < k) {
            int best = -1;
            for (int p = 0; p < heads.length; p++) {
                long[] part = parts.get(p);
                if (heads[p] < part.length && (best < 0 || part[heads[p]] < parts.get(best)[heads[best]])) {
                    best = p;
                }
            }
            if (best < 0) {
                break;
            }
            out[n++] = parts.get(best)[heads[best]++];
        }
        return n == k ? out : java.util.Arrays.copyOf(out, n);
    }

    static HdSearchResult result(long[] keys, int candidates, List<Integer> missing) {
        List<HdSearchResult.Neighbor> neighbors = new ArrayList<>(keys.length);
        for (long key : keys) {
            neighbors.add(new HdSearchResult.Neighbor(id(key), distance(key)));
        }
        return new HdSearchResult(neighbors, candidates, missing);
    }

    /**
     * The sort key of a neighbour: distance first, then id (a non-negative float's bits order as it does).
     *
     * @param distance a distance, {@code >= 0}
     * @param id the point's id, {@code >= 0}
     * @return the key
     */
    static long key(float distance, int id) {
        return ((long) Float.floatToIntBits(distance) << 32) | (id & 0xFFFF_FFFFL);
    }

    static int id(long key) {
        return (int) key;
    }

    static float distance(long key) {
        return Float.intBitsToFloat((int) (key >>> 32));
    }
}
