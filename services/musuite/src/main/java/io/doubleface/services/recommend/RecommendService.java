package io.doubleface.services.recommend;

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
import io.doubleface.services.recommend.v1.LeafReply;
import io.doubleface.services.recommend.v1.LeafRequest;
import io.doubleface.services.recommend.v1.RecommendLeafGrpc;

/**
 * The Recommend mid-tier (μSuite, μTune OSDI '18 §3): user-based collaborative filtering over
 * rating tuples sharded over gRPC leaves.
 *
 * <pre>
 *   (user, item) ──broadcast──▶ RecommendLeaf/Predict: each leaf predicts from similar users on its shard
 *        ──▶ onReply: the leaf's prediction, checked (a rating in 1..5)
 *        ──▶ merge: the mean of the leaves that predicted
 * </pre>
 *
 * <p><b>Failures.</b> {@link FailurePolicy#quorum quorum(1)}: a failed or late leaf is left out and
 * listed in {@code missing_leaves}; no leaf at all is a {@code 503} (gRPC {@code UNAVAILABLE}),
 * {@code 504} at the deadline. No leaf with a prediction is an answer with no rating.
 *
 * <p>Thread-safe and stateless.
 */
public final class RecommendService implements FanoutService<RecommendService.Query, Predictor.Prediction, RecommendResult> {

    /** Name of the leaves' backend: {@value}. */
    public static final String BACKEND = "recommend";
    /** The HTTP route: {@value}. */
    public static final String PATH = "/recommend";

    /**
     * A decoded request.
     *
     * @param user the user
     * @param item the item
     */
    public record Query(int user, int item) {}

    private static final ReplyHandler<Query, LeafReply, Predictor.Prediction> PREDICTION = RecommendService::prediction;

    private final Backend<GrpcCall<?, ?>> leaves;

    /**
     * Adds Recommend to a server: a backend {@value #BACKEND} over {@code leaves} (closed by the
     * server), {@code GET} {@value #PATH} and, if {@code grpc}, {@code doubleface.recommend.v1.Recommend/Predict}.
     *
     * @param builder the server being built
     * @param leaves the leaves' driver, leaf i holding tuples {@code i % leaves} of {@code data}
     * @param data the ratings (their users, items and synthetic queries)
     * @param grpc whether to add the gRPC method
     * @return the service
     */
    public static RecommendService install(FanoutServer.Builder builder, ShardDriver<GrpcCall<?, ?>> leaves,
            RecommendData data, boolean grpc) {
        RecommendService service = new RecommendService(builder.backend(BACKEND, leaves));
        builder.get(PATH, service, new RecommendBindings.Http(data));
        if (grpc) {
            builder.grpcMethod(service, new RecommendBindings.Grpc(data));
        }
        return service;
    }

    /**
     * As {@link #install(FanoutServer.Builder, ShardDriver, RecommendData, boolean)} over the leaves of a URI.
     *
     * @param builder the server being built
     * @param leavesUri e.g. {@code grpc://127.0.0.1:7901-7904}
     * @param data the ratings
     * @param grpc whether to add the gRPC method
     * @return the service
     */
    public static RecommendService install(FanoutServer.Builder builder, String leavesUri, RecommendData data,
            boolean grpc) {
        return install(builder, GrpcDriver.of(leavesUri), data, grpc);
    }

    /**
     * The service over a backend of leaves.
     *
     * @param leaves the leaves
     */
    public RecommendService(Backend<GrpcCall<?, ?>> leaves) {
        this.leaves = leaves;
    }

    @Override
    public void plan(Query q, FanoutPlan<Query, Predictor.Prediction> plan) {
        plan.failurePolicy(FailurePolicy.quorum(1));
        plan.broadcast(leaves, GrpcCall.of(RecommendLeafGrpc.getPredictMethod(),
                LeafRequest.newBuilder().setUser(q.user()).setItem(q.item()).build()), PREDICTION);
    }

    /** The per-reply work: the leaf's prediction, checked. */
    static Predictor.Prediction prediction(Query q, int call, LeafReply r) {
        if (!r.getPredicted()) {
            return new Predictor.Prediction(false, 0, 0);
        }
        if (!(r.getRating() >= 1 && r.getRating() <= 5) || r.getNeighbours() < 1) {
            throw new IllegalStateException("malformed leaf reply: rating " + r.getRating() + " from "
                    + r.getNeighbours() + " neighbours");
        }
        return new Predictor.Prediction(true, r.getRating(), r.getNeighbours());
    }

    @Override
    public RecommendResult merge(Query q, Replies<Predictor.Prediction> replies,
            FanoutPlan<Query, Predictor.Prediction> next) {
        Answered<Predictor.Prediction> a = Answered.of(replies);
        return RecommendResult.of(q.user(), q.item(), a.values(), a.missing());
    }
}
