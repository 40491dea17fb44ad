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
import io.doubleface.api.CallRef;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.Replies;
import io.doubleface.driver.ShardException;
import io.doubleface.grpc.GrpcCall;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The search mid-tier: asks every leaf for its best {@code limit} documents
 * ({@code Leaf/Search}, one {@link GrpcCall} broadcast to the {@code leaves} backend) and merges
 * them into the global best {@code limit}. Best effort: a leaf that fails, or takes longer than
 * the leaf timeout (a per-call timeout), is left out and listed in {@code missing_shards}.
 *
 * <p>Per reply nothing is copied or converted: each leaf's typed reply reaches the merge as it
 * came, by the reference {@link #HITS}. Thread-safe and stateless, as every service must be.
 */
public final class SearchService implements FanoutService<SearchService.Query, Object, SearchReply> {

    /** Most words in a query: {@value}. */
    public static final int MAX_TERMS = 10;

    /** Most documents a query may ask for: {@value}. */
    public static final int MAX_LIMIT = 100;

    /** How long a leaf may take by default before the answer goes without it. */
    public static final Duration DEFAULT_LEAF_TIMEOUT = Duration.ofMillis(500);

    /** A decoded query: distinct lower-case words, and how many documents to answer. */
    public record Query(List<String> terms, int limit) {}

    /** Every leaf's reply, as it came: read in merge with {@code replies.all(HITS)}. */
    static final CallRef<LeafHits> HITS = CallRef.named("hits");

    private final Backend<GrpcCall<?, ?>> leaves;
    private final Duration leafTimeout;

    public SearchService(Backend<GrpcCall<?, ?>> leaves) {
        this(leaves, DEFAULT_LEAF_TIMEOUT);
    }

    /**
     * @param leaves the leaves' backend, one shard per leaf
     * @param leafTimeout how long one leaf may take: a slower leaf is left out of the answer (and
     *     listed in {@code missing_shards}) instead of holding it up until the deadline
     */
    public SearchService(Backend<GrpcCall<?, ?>> leaves, Duration leafTimeout) {
        this.leaves = leaves;
        this.leafTimeout = leafTimeout;
    }

    @Override
    public void plan(Query q, FanoutPlan<Query, Object> plan) {
        plan.failurePolicy(FailurePolicy.bestEffort());
        LeafQuery leafQuery = LeafQuery.newBuilder().addAllTerms(q.terms()).setLimit(q.limit()).build();
        int first = plan.broadcast(leaves, GrpcCall.of(LeafGrpc.getSearchMethod(), leafQuery), HITS);
        for (int c = first; c < plan.calls(); c++) {
            plan.timeout(c, leafTimeout);
        }
    }

    @Override
    public SearchReply merge(Query q, Replies<Object> replies, FanoutPlan<Query, Object> next) {
        SearchReply.Builder out = SearchReply.newBuilder();
        List<Hit> all = new ArrayList<>();
        for (LeafHits hits : replies.all(HITS)) {
            all.addAll(hits.getHitsList());
        }
        for (ShardException f : replies.failures()) { // down, or slower than the leaf timeout
            out.addMissingShards(f.shard());
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
