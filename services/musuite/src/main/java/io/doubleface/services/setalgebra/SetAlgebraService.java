package io.doubleface.services.setalgebra;

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
import io.doubleface.services.setalgebra.v1.LeafReply;
import io.doubleface.services.setalgebra.v1.LeafRequest;
import io.doubleface.services.setalgebra.v1.SetAlgebraLeafGrpc;
import java.util.ArrayList;
import java.util.List;

/**
 * The Set Algebra mid-tier (μSuite, μTune OSDI '18 §3): document search by posting-list
 * intersection over gRPC leaves, each holding the inverted index of its shard of the documents.
 *
 * <pre>
 *   terms (stop words removed by the binding) ──broadcast──▶ SetAlgebraLeaf/Intersect(terms, limit)
 *        ──▶ onReply: the leaf's ids as a checked ascending int[] and its count
 *        ──▶ merge: union of the (disjoint) sorted lists, the `limit` smallest; counts summed
 * </pre>
 *
 * <p><b>Failures.</b> {@link FailurePolicy#quorum quorum(1)}: a leaf that fails or is late is left
 * out and listed in {@code missing_leaves} (its documents are missing from {@code count} and
 * {@code docs}); no leaf at all is a {@code 503} (gRPC {@code UNAVAILABLE}), {@code 504} at the
 * deadline.
 *
 * <p>Thread-safe and stateless.
 */
public final class SetAlgebraService implements FanoutService<SetAlgebraQuery, SetAlgebraService.Partial, SetAlgebraResult> {

    /** Name of the leaves' backend: {@value}. */
    public static final String BACKEND = "setalgebra";
    /** The HTTP route: {@value}. */
    public static final String PATH = "/setalgebra";

    /**
     * One leaf's processed reply.
     *
     * @param count documents of the leaf containing every term
     * @param docs the smallest of their ids, ascending
     */
    public record Partial(long count, int[] docs) {}

    private static final ReplyHandler<SetAlgebraQuery, LeafReply, Partial> PARTIAL = SetAlgebraService::partial;

    private final Backend<GrpcCall<?, ?>> leaves;

    /**
     * Adds Set Algebra to a server: a backend {@value #BACKEND} over {@code leaves} (closed by the
     * server), {@code GET} {@value #PATH} and, if {@code grpc}, {@code doubleface.setalgebra.v1.SetAlgebra/Search}.
     *
     * @param builder the server being built
     * @param leaves the leaves' driver, leaf i holding documents {@code i % leaves} of {@code data}
     * @param data the corpus (its stop words and synthetic queries)
     * @param grpc whether to add the gRPC method
     * @return the service
     */
    public static SetAlgebraService install(FanoutServer.Builder builder, ShardDriver<GrpcCall<?, ?>> leaves,
            SetAlgebraData data, boolean grpc) {
        SetAlgebraService service = new SetAlgebraService(builder.backend(BACKEND, leaves));
        builder.get(PATH, service, new SetAlgebraBindings.Http(data));
        if (grpc) {
            builder.grpcMethod(service, new SetAlgebraBindings.Grpc(data));
        }
        return service;
    }

    /**
     * As {@link #install(FanoutServer.Builder, ShardDriver, SetAlgebraData, boolean)} over the leaves of a URI.
     *
     * @param builder the server being built
     * @param leavesUri e.g. {@code grpc://127.0.0.1:7801-7804}
     * @param data the corpus
     * @param grpc whether to add the gRPC method
     * @return the service
     */
    public static SetAlgebraService install(FanoutServer.Builder builder, String leavesUri, SetAlgebraData data,
            boolean grpc) {
        return install(builder, GrpcDriver.of(leavesUri), data, grpc);
    }

    /**
     * The service over a backend of leaves.
     *
     * @param leaves the leaves
     */
    public SetAlgebraService(Backend<GrpcCall<?, ?>> leaves) {
        this.leaves = leaves;
    }

    @Override
    public void plan(SetAlgebraQuery q, FanoutPlan<SetAlgebraQuery, Partial> plan) {
        plan.failurePolicy(FailurePolicy.quorum(1));
        LeafRequest r = LeafRequest.newBuilder().addAllTerms(q.terms()).setLimit(q.limit()).build();
        plan.broadcast(leaves, GrpcCall.of(SetAlgebraLeafGrpc.getIntersectMethod(), r), PARTIAL);
    }

    /** The per-reply work: the leaf's ids as an ascending int[], checked. */
    static Partial partial(SetAlgebraQuery q, int call, LeafReply reply) {
        int n = reply.getDocsCount();
        if (n > q.limit() || n > reply.getCount()) {
            throw new IllegalStateException("malformed leaf reply: " + n + " ids, count " + reply.getCount()
                    + ", limit " + q.limit());
        }
        int[] docs = new int[n];
        for (int i = 0; i < n; i++) {
            docs[i] = reply.getDocs(i);
            if (i > 0 && docs[i] <= docs[i - 1]) {
                throw new IllegalStateException("malformed leaf reply: not ascending at " + i);
            }
        }
        return new Partial(reply.getCount(), docs);
    }

    @Override
    public SetAlgebraResult merge(SetAlgebraQuery q, Replies<Partial> replies,
            FanoutPlan<SetAlgebraQuery, Partial> next) {
        Answered<Partial> a = Answered.of(replies);
        List<int[]> parts = new ArrayList<>(a.values().size());
        long count = 0;
        for (Partial p : a.values()) {
            parts.add(p.docs());
            count += p.count();
        }
        return new SetAlgebraResult(q, count, union(parts, q.limit()), a.missing());
    }

    /** The {@code limit} smallest ids of ascending lists, ascending: a k-way walk of their heads. */
    static List<Integer> union(List<int[]> parts, int limit) {
        int[] heads = new int[parts.size()];
        List<Integer> out = new ArrayList<>();
        while (out.size() < limit) {
            int best = -1;
            for (int p = 0; p < heads.length; p++) {
                int[] part = parts.get(p);
                if (heads[p] < part.length && (best < 0 || part[heads[p]] < parts.get(best)[heads[best]])) {
                    best = p;
                }
            }
            if (best < 0) {
                break;
            }
            int id = parts.get(best)[heads[best]++];
            if (out.isEmpty() || out.get(out.size() - 1) != id) {
                out.add(id);
            }
        }
        return out;
    }
}
