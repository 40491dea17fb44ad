package example.search;

import example.search.v1.Hit;
import example.search.v1.LeafGrpc;
import example.search.v1.LeafHits;
import example.search.v1.LeafQuery;
import example.search.v1.SearchReply;
import example.search.v1.SearchRequest;
import example.search.v1.SearchGrpc;
import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.grpc.GrpcCall;
import io.grpc.MethodDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The search mid-tier: asks every leaf for its best {@code limit} documents
 * ({@code Leaf/Search}, one {@link GrpcCall} broadcast to the {@code leaves} backend) and merges
 * them into the global best {@code limit}. Best effort: a leaf that fails or is late by the
 * deadline is left out and listed in {@code missing_shards}, unless no leaf answered.
 *
 * <p>Per reply ({@code onReply}) nothing is copied: the reply handler hands the leaf's typed reply
 * to the merge. Thread-safe and stateless, as every service must be.
 */
public final class SearchService implements FanoutService<SearchService.Query, LeafHits, SearchReply> {

    /** Most words in a query: {@value}. */
    public static final int MAX_TERMS = 10;

    /** Most documents a query may ask for: {@value}. */
    public static final int MAX_LIMIT = 100;

    /** A decoded query: distinct lower-case words, and how many documents to answer. */
    public record Query(List<String> terms, int limit) {}

    private final Backend<GrpcCall<?, ?>> leaves;
    private final ReplyHandler<Query, LeafHits, LeafHits> keep = (q, call, hits) -> hits;

    public SearchService(Backend<GrpcCall<?, ?>> leaves) {
        this.leaves = leaves;
    }

    @Override
    public void plan(Query q, FanoutPlan<Query, LeafHits> plan) {
        plan.failurePolicy(FailurePolicy.bestEffort());
        LeafQuery leafQuery = LeafQuery.newBuilder().addAllTerms(q.terms()).setLimit(q.limit()).build();
        plan.broadcast(leaves, GrpcCall.of(LeafGrpc.getSearchMethod(), leafQuery), keep);
    }

    @Override
    public SearchReply merge(Query q, Replies<LeafHits> replies, FanoutPlan<Query, LeafHits> next) {
        SearchReply.Builder out = SearchReply.newBuilder();
        List<Hit> all = new ArrayList<>();
        for (int i = 0; i < replies.size(); i++) {
            if (replies.ok(i)) {
                all.addAll(replies.get(i).getHitsList());
            } else {
                out.addMissingShards(replies.shard(i));
            }
        }
        all.sort(SearchLeaf.RANKING);
        return out.addAllHits(all.size() > q.limit() ? all.subList(0, q.limit()) : all).build();
    }

    /** {@code example.search.v1.Search/Query}: validates the request, answers the reply as it is. */
    public static final class Binding implements GrpcBinding<Query, SearchReply, SearchRequest, SearchReply> {

        @Override
        public MethodDescriptor<SearchRequest, SearchReply> method() {
            return SearchGrpc.getQueryMethod();
        }

        @Override
        public Query decode(SearchRequest r) throws BadRequestException {
            List<String> terms = new ArrayList<>();
            for (String w : r.getText().trim().toLowerCase(Locale.ROOT).split("\\s+")) {
                if (!w.isEmpty() && !terms.contains(w)) {
                    terms.add(w);
                }
            }
            if (terms.isEmpty() || terms.size() > MAX_TERMS) {
                throw new BadRequestException("text: " + terms.size() + " distinct words (expected: 1.." + MAX_TERMS + ")");
            }
            int limit = r.getLimit() == 0 ? 10 : r.getLimit();
            if (limit < 1 || limit > MAX_LIMIT) {
                throw new BadRequestException("limit: " + r.getLimit() + " (expected: 1.." + MAX_LIMIT + ", 0 = 10)");
            }
            return new Query(List.copyOf(terms), limit);
        }

        @Override
        public SearchReply encode(SearchReply response) {
            return response;
        }
    }
}
