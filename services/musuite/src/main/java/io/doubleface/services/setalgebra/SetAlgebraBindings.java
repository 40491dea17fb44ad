package io.doubleface.services.setalgebra;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.services.musuite.QueryParams;
import io.doubleface.services.setalgebra.v1.SearchReply;
import io.doubleface.services.setalgebra.v1.SearchRequest;
import io.doubleface.services.setalgebra.v1.SetAlgebraGrpc;
import io.grpc.MethodDescriptor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Set Algebra's upstream bindings: {@code GET /setalgebra?terms=w1,w2&limit=N} or
 * {@code GET /setalgebra?query=J&limit=N} (JSON, {@link SetAlgebraResult#toJson}) and
 * {@code doubleface.setalgebra.v1.SetAlgebra/Search}, with the same rules: exactly one of
 * {@code query} and {@code terms}; terms are 1..{@value SetAlgebraQuery#MAX_TERMS} words of letters
 * and digits (at most {@value SetAlgebraQuery#MAX_TERM_LENGTH} characters; duplicates dropped); stop
 * words are removed and reported, a query of nothing but stop words is refused; {@code limit}
 * 1..{@value SetAlgebraQuery#MAX_LIMIT}, default {@value SetAlgebraQuery#DEFAULT_LIMIT}. Thread-safe.
 */
public final class SetAlgebraBindings {

    private SetAlgebraBindings() {}

    /** The query of {@code words} (or synthetic query {@code number} if {@code words} is null). */
    static SetAlgebraQuery query(SetAlgebraData data, Integer number, List<String> words, int limit)
            throws BadRequestException {
        if ((number == null) == (words == null)) {
            throw new BadRequestException("give exactly one of query (a query number) and terms (1.."
                    + SetAlgebraQuery.MAX_TERMS + " words)");
        }
        if (limit < 1 || limit > SetAlgebraQuery.MAX_LIMIT) {
            throw new BadRequestException("limit: " + limit + " (expected: 1.." + SetAlgebraQuery.MAX_LIMIT + ")");
        }
        if (number != null) {
            if (number < 0) {
                throw new BadRequestException("query: " + number + " (expected: 0.." + Integer.MAX_VALUE + ")");
            }
            return new SetAlgebraQuery(data.query(number), List.of(), limit);
        }
        if (words.isEmpty() || words.size() > SetAlgebraQuery.MAX_TERMS) {
            throw new BadRequestException("terms: " + words.size() + " words (expected: 1.." + SetAlgebraQuery.MAX_TERMS
                    + ")");
        }
        List<String> terms = new ArrayList<>();
        List<String> stop = new ArrayList<>();
        for (String w : words) {
            if (w.isEmpty() || w.length() > SetAlgebraQuery.MAX_TERM_LENGTH || !w.chars().allMatch(Character::isLetterOrDigit)) {
                throw new BadRequestException("terms: '" + QueryParams.abbreviate(w) + "' (expected: 1.."
                        + SetAlgebraQuery.MAX_TERM_LENGTH + " letters or digits)");
            }
            List<String> into = data.isStopWord(w) ? stop : terms;
            if (!into.contains(w)) {
                into.add(w);
            }
        }
        if (terms.isEmpty()) {
            throw new BadRequestException("terms: only stop words (" + String.join(", ", stop) + "), which are not indexed");
        }
        return new SetAlgebraQuery(terms, stop, limit);
    }

    /** {@code GET /setalgebra}. */
    public static final class Http implements HttpBinding<SetAlgebraQuery, SetAlgebraResult> {
        private final SetAlgebraData data;

        /**
         * The binding for queries over {@code data}.
         *
         * @param data the corpus (its stop words and synthetic queries)
         */
        public Http(SetAlgebraData data) {
            this.data = data;
        }

        @Override
        public SetAlgebraQuery decode(HttpRequestView request) throws BadRequestException {
            QueryParams.requireOnly(request, "query", "terms", "limit");
            int limit = request.queryInt("limit", SetAlgebraQuery.DEFAULT_LIMIT, 1, SetAlgebraQuery.MAX_LIMIT);
            String terms = request.queryParam("terms");
            Integer number = request.queryParam("query") == null ? null
                    : request.queryInt("query", 0, 0, Integer.MAX_VALUE);
            return query(data, number, terms == null ? null : Arrays.asList(terms.split(",", -1)), limit);
        }

        @Override
        public ByteBuf encode(SetAlgebraResult response, ByteBufAllocator alloc) {
            byte[] b = response.toJson().getBytes(StandardCharsets.UTF_8);
            return alloc.buffer(b.length).writeBytes(b);
        }
    }

    /** {@code doubleface.setalgebra.v1.SetAlgebra/Search}. */
    public static final class Grpc implements GrpcBinding<SetAlgebraQuery, SetAlgebraResult, SearchRequest, SearchReply> {
        private final SetAlgebraData data;

        /**
         * The binding for queries over {@code data}.
         *
         * @param data the corpus (its stop words and synthetic queries)
         */
        public Grpc(SetAlgebraData data) {
            this.data = data;
        }

        @Override
        public MethodDescriptor<SearchRequest, SearchReply> method() {
            return SetAlgebraGrpc.getSearchMethod();
        }

        @Override
        public SetAlgebraQuery decode(SearchRequest r) throws BadRequestException {
            int limit = r.getLimit() == 0 ? SetAlgebraQuery.DEFAULT_LIMIT : r.getLimit();
            return query(data, r.hasQuery() ? r.getQuery() : null, r.getTermsCount() == 0 ? null : r.getTermsList(),
                    limit);
        }

        @Override
        public SearchReply encode(SetAlgebraResult response) {
            return response.toProto();
        }
    }
}
