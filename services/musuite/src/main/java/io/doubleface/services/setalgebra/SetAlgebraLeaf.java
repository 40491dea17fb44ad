package io.doubleface.services.setalgebra;

import io.doubleface.services.setalgebra.v1.LeafReply;
import io.doubleface.services.setalgebra.v1.LeafRequest;
import io.doubleface.services.setalgebra.v1.SetAlgebraLeafGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/**
 * One Set Algebra leaf: the inverted index ({@link PostingIndex}) of documents {@code d} with
 * {@code d % leaves == leaf}, served as {@code doubleface.setalgebra.v1.SetAlgebraLeaf/Intersect}.
 * Thread-safe: the index is read-only after construction.
 */
public final class SetAlgebraLeaf extends SetAlgebraLeafGrpc.SetAlgebraLeafImplBase {

    private final PostingIndex index;

    /**
     * Indexes the leaf's shard of {@code data}.
     *
     * @param data the corpus
     * @param leaf this leaf's index
     * @param leaves the number of leaves
     */
    public SetAlgebraLeaf(SetAlgebraData data, int leaf, int leaves) {
        if (leaves < 1 || leaf < 0 || leaf >= leaves) {
            throw new IllegalArgumentException("leaf: " + leaf + " of " + leaves + " (expected: 0.." + (leaves - 1) + ")");
        }
        this.index = new PostingIndex(data, leaf, leaves);
    }

    @Override
    public void intersect(LeafRequest request, StreamObserver<LeafReply> reply) {
        if (request.getTermsCount() < 1 || request.getTermsCount() > SetAlgebraQuery.MAX_TERMS) {
            reply.onError(Status.INVALID_ARGUMENT.withDescription("terms: " + request.getTermsCount() + " (expected: 1.."
                    + SetAlgebraQuery.MAX_TERMS + ")").asRuntimeException());
            return;
        }
        if (request.getLimit() < 1) {
            reply.onError(Status.INVALID_ARGUMENT.withDescription("limit: " + request.getLimit() + " (expected: > 0)")
                    .asRuntimeException());
            return;
        }
        int[] docs = index.intersect(request.getTermsList());
        LeafReply.Builder out = LeafReply.newBuilder().setCount(docs.length);
        for (int i = 0; i < Math.min(docs.length, request.getLimit()); i++) {
            out.addDocs(docs[i]);
        }
        reply.onNext(out.build());
        reply.onCompleted();
    }
}
