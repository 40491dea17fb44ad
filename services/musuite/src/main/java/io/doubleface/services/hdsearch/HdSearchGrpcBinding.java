package io.doubleface.services.hdsearch;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.GrpcBinding;
import io.doubleface.services.hdsearch.v1.HdSearchGrpc;
import io.doubleface.services.hdsearch.v1.SearchReply;
import io.doubleface.services.hdsearch.v1.SearchRequest;
import io.grpc.MethodDescriptor;

/**
 * {@code doubleface.hdsearch.v1.HdSearch/Search} for the {@link HdSearchService}: the gRPC twin of
 * {@link HdSearchHttpBinding}, with the same parameters, limits and error texts. Thread-safe.
 */
public final class HdSearchGrpcBinding implements GrpcBinding<HdSearchQuery, HdSearchResult, SearchRequest, SearchReply> {

    private final HdSearchData data;

    /**
     * The binding for queries over {@code data}.
     *
     * @param data the corpus (its dimension and query vectors)
     */
    public HdSearchGrpcBinding(HdSearchData data) {
        this.data = data;
    }

    @Override
    public MethodDescriptor<SearchRequest, SearchReply> method() {
        return HdSearchGrpc.getSearchMethod();
    }

    @Override
    public HdSearchQuery decode(SearchRequest r) throws BadRequestException {
        int k = r.getK() == 0 ? HdSearchQuery.DEFAULT_K : r.getK();
        if (k < 1 || k > HdSearchQuery.MAX_K) {
            throw new BadRequestException("k: " + r.getK() + " (expected: 1.." + HdSearchQuery.MAX_K + ")");
        }
        if (r.hasQuery() == (r.getVectorCount() > 0)) {
            throw new BadRequestException("give exactly one of query (a query number) and vector (" + data.dims()
                    + " numbers)");
        }
        if (r.hasQuery()) {
            if (r.getQuery() < 0) {
                throw new BadRequestException("query: " + r.getQuery() + " (expected: 0.." + Integer.MAX_VALUE + ")");
            }
            return new HdSearchQuery(data.query(r.getQuery()), k, r.getQuery());
        }
        float[] v = new float[r.getVectorCount()];
        for (int i = 0; i < v.length; i++) {
            v[i] = r.getVector(i);
        }
        return new HdSearchQuery(HdSearchHttpBinding.checkVector(v, data.dims()), k, -1);
    }

    @Override
    public SearchReply encode(HdSearchResult response) {
        return response.toProto();
    }
}
