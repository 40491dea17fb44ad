package io.doubleface.services.recommend;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.services.musuite.QueryParams;
import io.doubleface.services.recommend.v1.PredictReply;
import io.doubleface.services.recommend.v1.PredictRequest;
import io.doubleface.services.recommend.v1.RecommendGrpc;
import io.grpc.MethodDescriptor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * Recommend's upstream bindings: {@code GET /recommend?user=U&item=I} or {@code GET /recommend?query=J}
 * (JSON, {@link RecommendResult#toJson}) and {@code doubleface.recommend.v1.Recommend/Predict}, with
 * the same rules: exactly one of {@code query} and the pair {@code user}, {@code item}; users
 * {@code 0 .. users-1}, items {@code 0 .. items-1}. Thread-safe.
 */
public final class RecommendBindings {

    private RecommendBindings() {}

    static RecommendService.Query query(RecommendData data, Integer number, Integer user, Integer item)
            throws BadRequestException {
        if (number != null ? user != null || item != null : user == null || item == null) {
            throw new BadRequestException("give either query (a query number) or both user (0.." + (data.users() - 1)
                    + ") and item (0.." + (data.items() - 1) + ")");
        }
        if (number != null) {
            if (number < 0) {
                throw new BadRequestException("query: " + number + " (expected: 0.." + Integer.MAX_VALUE + ")");
            }
            int[] q = data.query(number);
            return new RecommendService.Query(q[0], q[1]);
        }
        if (user < 0 || user >= data.users()) {
            throw new BadRequestException("user: " + user + " (expected: 0.." + (data.users() - 1) + ")");
        }
        if (item < 0 || item >= data.items()) {
            throw new BadRequestException("item: " + item + " (expected: 0.." + (data.items() - 1) + ")");
        }
        return new RecommendService.Query(user, item);
    }

    /** {@code GET /recommend}. */
    public static final class Http implements HttpBinding<RecommendService.Query, RecommendResult> {
        private final RecommendData data;

        /**
         * The binding for queries over {@code data}.
         *
         * @param data the ratings (their users, items and synthetic queries)
         */
        public Http(RecommendData data) {
            this.data = data;
        }

        @Override
        public RecommendService.Query decode(HttpRequestView request) throws BadRequestException {
            QueryParams.requireOnly(request, "query", "user", "item");
            return query(data, number(request, "query"), number(request, "user"), number(request, "item"));
        }

        private static Integer number(HttpRequestView request, String name) throws BadRequestException {
            return request.queryParam(name) == null ? null
                    : request.queryInt(name, 0, Integer.MIN_VALUE, Integer.MAX_VALUE);
        }

        @Override
        public ByteBuf encode(RecommendResult response, ByteBufAllocator alloc) {
            byte[] b = response.toJson().getBytes(StandardCharsets.US_ASCII);
            return alloc.buffer(b.length).writeBytes(b);
        }
    }

    /** {@code doubleface.recommend.v1.Recommend/Predict}. */
    public static final class Grpc implements GrpcBinding<RecommendService.Query, RecommendResult, PredictRequest, PredictReply> {
        private final RecommendData data;

        /**
         * The binding for queries over {@code data}.
         *
         * @param data the ratings
         */
        public Grpc(RecommendData data) {
            this.data = data;
        }

        @Override
        public MethodDescriptor<PredictRequest, PredictReply> method() {
            return RecommendGrpc.getPredictMethod();
        }

        @Override
        public RecommendService.Query decode(PredictRequest r) throws BadRequestException {
            return query(data, r.hasQuery() ? r.getQuery() : null, r.hasUser() ? r.getUser() : null,
                    r.hasItem() ? r.getItem() : null);
        }

        @Override
        public PredictReply encode(RecommendResult response) {
            return response.toProto();
        }
    }
}
