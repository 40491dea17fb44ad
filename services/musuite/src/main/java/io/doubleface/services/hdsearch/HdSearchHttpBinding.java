package io.doubleface.services.hdsearch;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.services.musuite.QueryParams;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * {@code GET /hdsearch?query=J&k=K} or {@code GET /hdsearch?vector=x1,x2,...&k=K} for the
 * {@link HdSearchService}:
 *
 * <ul>
 *   <li>{@code query}: the data set's query vector number J ({@code >= 0}), or
 *   <li>{@code vector}: the data set's dimension of comma-separated finite numbers in
 *       ±{@value HdSearchQuery#MAX_COORDINATE} — exactly one of the two;
 *   <li>{@code k}: 1 … {@value HdSearchQuery#MAX_K}; default {@value HdSearchQuery#DEFAULT_K}.
 * </ul>
 *
 * Answer ({@code application/json}): {@link HdSearchResult#toJson()}. Unknown parameters are
 * rejected. Thread-safe.
 */
public final class HdSearchHttpBinding implements HttpBinding<HdSearchQuery, HdSearchResult> {

    private final HdSearchData data;

    /**
     * The binding for queries over {@code data}.
     *
     * @param data the corpus (its dimension and query vectors)
     */
    public HdSearchHttpBinding(HdSearchData data) {
        this.data = data;
    }

    @Override
    public HdSearchQuery decode(HttpRequestView request) throws BadRequestException {
        QueryParams.requireOnly(request, "query", "vector", "k");
        String number = request.queryParam("query");
        String vector = request.queryParam("vector");
        int k = request.queryInt("k", HdSearchQuery.DEFAULT_K, 1, HdSearchQuery.MAX_K);
        if ((number == null) == (vector == null)) {
            throw new BadRequestException("give exactly one of query (a query number) and vector (" + data.dims()
                    + " comma-separated numbers)");
        }
        if (number != null) {
            int j = request.queryInt("query", 0, 0, Integer.MAX_VALUE);
            return new HdSearchQuery(data.query(j), k, j);
        }
        String[] parts = vector.split(",", -1);
        float[] v = new float[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                v[i] = Float.parseFloat(parts[i].strip());
            } catch (NumberFormatException e) {
                throw new BadRequestException("vector: '" + QueryParams.abbreviate(parts[i]) + "' at " + i
                        + " (expected: a number)");
            }
        }
        return new HdSearchQuery(checkVector(v, data.dims()), k, -1);
    }

    /** {@code v} if it has {@code dims} finite coordinates within ±{@value HdSearchQuery#MAX_COORDINATE}. */
    static float[] checkVector(float[] v, int dims) throws BadRequestException {
        if (v.length != dims) {
            throw new BadRequestException("vector: " + v.length + " numbers (expected: " + dims + ")");
        }
        for (int i = 0; i < v.length; i++) {
            if (!(Math.abs(v[i]) <= HdSearchQuery.MAX_COORDINATE)) {
                throw new BadRequestException("vector: " + v[i] + " at " + i + " (expected: a finite number in -"
                        + HdSearchQuery.MAX_COORDINATE + ".." + HdSearchQuery.MAX_COORDINATE + ")");
            }
        }
        return v;
    }

    @Override
    public ByteBuf encode(HdSearchResult response, ByteBufAllocator alloc) {
        byte[] json = response.toJson().getBytes(StandardCharsets.US_ASCII);
        return alloc.buffer(json.length).writeBytes(json);
    }
}
