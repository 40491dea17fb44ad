package io.doubleface.services.hdsearch;

import io.doubleface.services.hdsearch.v1.HdSearchLeafGrpc;
import io.doubleface.services.hdsearch.v1.LeafReply;
import io.doubleface.services.hdsearch.v1.LeafRequest;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.Arrays;

/**
 * One HDSearch leaf: the points {@code i} of {@link HdSearchData} with {@code i % leaves == leaf}, held
 * in one flat {@code float[]}, served as {@code doubleface.hdsearch.v1.HdSearchLeaf/Nearest}: the
 * distances of the candidates the mid-tier sends, the {@code k} nearest returned nearest first
 * (distance, then id). A plain grpc-java service; start it with
 * {@link io.doubleface.services.musuite.LeafServers}.
 *
 * <p>Thread-safe: the points are read-only after construction.
 */
public final class HdSearchLeaf extends HdSearchLeafGrpc.HdSearchLeafImplBase {

    /** Most candidates one request may name: {@value}. */
    public static final int MAX_IDS = 1 << 20;

    private final int leaf;
    private final int leaves;
    private final int points;
    private final int dims;
    /** local point j (global id j * leaves + leaf) at [j * dims]. */
    private final float[] vectors;

    /**
     * Generates the leaf's shard of {@code data}.
     *
     * @param data the corpus
     * @param leaf this leaf's index, {@code 0 .. leaves-1}
     * @param leaves the number of leaves
     */
    public HdSearchLeaf(HdSearchData data, int leaf, int leaves) {
        if (leaves < 1 || leaf < 0 || leaf >= leaves) {
            throw new IllegalArgumentException("leaf: " + leaf + " of " + leaves + " (expected: 0.." + (leaves - 1) + ")");
        }
        this.leaf = leaf;
        this.leaves = leaves;
        this.points = data.points();
        this.dims = data.dims();
        int local = points > leaf ? (points - leaf + leaves - 1) / leaves : 0;
        this.vectors = new float[local * dims];
        for (int j = 0; j < local; j++) {
            data.point(j * leaves + leaf, vectors, j * dims);
        }
    }

    @Override
    public void nearest(LeafRequest request, StreamObserver<LeafReply> reply) {
        String error = check(request);
        if (error != null) {
            reply.onError(Status.INVALID_ARGUMENT.withDescription(error).asRuntimeException());
            return;
        }
        float[] q = new float[dims];
        for (int d = 0; d < dims; d++) {
            q[d] = request.getVector(d);
        }
        long[] keys = nearest(request, q);
        LeafReply.Builder out = LeafReply.newBuilder();
        for (long key : keys) {
            out.addIds(HdSearchService.id(key)).addDistances(HdSearchService.distance(key));
        }
        reply.onNext(out.build());
        reply.onCompleted();
    }

    private String check(LeafRequest r) {
        if (r.getK() < 1) {
            return "k: " + r.getK() + " (expected: > 0)";
        }
        if (r.getVectorCount() != dims) {
            return "vector: " + r.getVectorCount() + " numbers (expected: " + dims + ")";
        }
        if (r.getIdsCount() > MAX_IDS) {
            return "ids: " + r.getIdsCount() + " (expected: at most " + MAX_IDS + ")";
        }
        for (int i = 0; i < r.getIdsCount(); i++) {
            int id = r.getIds(i);
            if (id < 0 || id >= points || id % leaves != leaf) {
                return "id " + id + " is not a point of leaf " + leaf + " of " + leaves + " (" + points + " points)";
            }
        }
        return null;
    }

    /** The k nearest candidates as sorted {@link HdSearchService#key keys}. */
    private long[] nearest(LeafRequest r, float[] q) {
        long[] keys = new long[r.getIdsCount()];
        for (int i = 0; i < keys.length; i++) {
            int id = r.getIds(i);
            keys[i] = HdSearchService.key(HdSearchData.squaredDistance(vectors, (id / leaves) * dims, q), id);
        }
        Arrays.sort(keys);
        return keys.length > r.getK() ? Arrays.copyOf(keys, r.getK()) : keys;
    }

    @Override
    public String toString() {
        return "HdSearchLeaf[" + leaf + " of " + leaves + ", " + vectors.length / Math.max(1, dims) + " points]";
    }
}
