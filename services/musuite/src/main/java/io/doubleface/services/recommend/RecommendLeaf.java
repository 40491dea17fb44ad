package io.doubleface.services.recommend;

import io.doubleface.services.recommend.v1.LeafReply;
import io.doubleface.services.recommend.v1.LeafRequest;
import io.doubleface.services.recommend.v1.RecommendLeafGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/**
 * One Recommend leaf: the rating tuples {@code t} with {@code t % leaves == leaf}, served as
 * {@code doubleface.recommend.v1.RecommendLeaf/Predict} by a {@link Predictor} over them.
 * Thread-safe: read-only after construction.
 */
public final class RecommendLeaf extends RecommendLeafGrpc.RecommendLeafImplBase {

    private final RecommendData data;
    private final Predictor predictor;

    /**
     * The leaf's shard of {@code data}.
     *
     * @param data the ratings
     * @param leaf this leaf's index
     * @param leaves the number of leaves
     */
    public RecommendLeaf(RecommendData data, int leaf, int leaves) {
        if (leaves < 1 || leaf < 0 || leaf >= leaves) {
            throw new IllegalArgumentException("leaf: " + leaf + " of " + leaves + " (expected: 0.." + (leaves - 1) + ")");
        }
        this.data = data;
        this.predictor = new Predictor(data, leaf, leaves);
    }

    @Override
    public void predict(LeafRequest request, StreamObserver<LeafReply> reply) {
        if (request.getUser() < 0 || request.getUser() >= data.users() || request.getItem() < 0
                || request.getItem() >= data.items()) {
            reply.onError(Status.INVALID_ARGUMENT.withDescription("user " + request.getUser() + ", item "
                    + request.getItem() + " (expected: users 0.." + (data.users() - 1) + ", items 0.."
                    + (data.items() - 1) + ")").asRuntimeException());
            return;
        }
        Predictor.Prediction p = predictor.predict(request.getUser(), request.getItem());
        reply.onNext(LeafReply.newBuilder().setPredicted(p.predicted()).setRating(p.rating())
                .setNeighbours(p.neighbours()).build());
        reply.onCompleted();
    }
}
