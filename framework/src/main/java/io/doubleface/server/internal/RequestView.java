package io.doubleface.server.internal;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.BodyCodec;
import io.doubleface.api.HttpRequestView;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Map;

/**
 * One whole request — its head and its body — as {@link RequestAggregator} hands it to
 * {@link RouteDispatcher}, and as the route's binding reads it ({@link HttpRequestView}): the
 * aggregator sets the head, body and whether the connection stays open; the dispatcher adds the
 * path and the route's variables before the binding decodes.
 *
 * <p>One per connection, reused for every request: it is valid only while the aggregator's
 * {@code fireChannelRead} of it runs (a binding's {@code decode} is synchronous), and cleared
 * after. The body stays the aggregator's (it releases it). Loop-confined.
 */
final class RequestView implements HttpRequestView {
    private HttpRequest req;
    private boolean keepAlive;
    private ByteBuf body;
    /** Netty's decoder of the target; null until {@link #query()} or a query that needs decoding asks for it. */
    private QueryStringDecoder query;
    /** Where the target's path ends: its first {@code ?} or {@code #}, or its length. */
    private int pathEnd;
    private String path;
    private HttpRouter.Route<?, ?> route;
    private String[] values;

    /** The raw query if it is {@link QueryScan#plain}, {@code ""} if not, {@code null} until first asked. */
    private String plainQuery;

    /** The aggregator's part: a whole request. */
    void request(HttpRequest req, ByteBuf body, boolean keepAlive) {
        this.req = req;
        this.body = body;
        this.keepAlive = keepAlive;
    }

    /** The dispatcher's part: where the request goes. */
    void route(QueryStringDecoder query, int pathEnd, String path, HttpRouter.Route<?, ?> route, String[] values) {
        this.query = query;
        this.pathEnd = pathEnd;
        this.plainQuery = null;
        this.path = path;
        this.route = route;
        this.values = values;
    }

    void clear() {
        request(null, null, false);
        route(null, 0, null, null, null);
    }

    /** {@return the request's head} */
    HttpRequest head() {
        return req;
    }

    /** {@return whether the connection stays open after this request's answer (RFC 9112 §9.3)} */
    boolean keepAlive() {
        return keepAlive;
    }

    private QueryStringDecoder decoder() {
        QueryStringDecoder q = query;
        if (q == null) {
            q = query = new QueryStringDecoder(req.uri());
        }
        return q;
    }

    @Override
    public HttpMethod method() {
        return req.method();
    }

    @Override
    public String path() {
        return path;
    }

    @Override
    public String pathParam(String name) {
        return route.variable(values, name);
    }

    @Override
    public Map<String, List<String>> query() {
        try {
            return decoder().parameters();
        } catch (IllegalArgumentException e) {
            // a bad %-escape: the dispatcher answers 400 "bad request: malformed query string: ..."
            throw new IllegalArgumentException("malformed query string: " + e.getMessage(), e);
        }
    }

    /** The raw query if it can be scanned as it is ({@link QueryScan#plain}), else {@code null}; computed once per request. */
    private String plainQuery() {
        String p = plainQuery;
        if (p == null) {
            String raw = QueryScan.plainQuery(req.uri(), pathEnd);
            p = plainQuery = raw == null ? "" : raw;
        }
        return p.isEmpty() ? null : p;
    }

    @Override
    public String queryParam(String name) throws BadRequestException {
        String raw = name.isEmpty() ? null : plainQuery();
        if (raw == null) {
            return HttpRequestView.super.queryParam(name);
        }
        String v = QueryScan.find(raw, name);
        if (v == QueryScan.REPEATED) {
            throw repeated(raw, name);
        }
        return v;
    }

    /** As the interface's, parsing the value where it is in the query (no string per parameter). */
    @Override
    public long queryLong(String name, long dflt, long min, long max) throws BadRequestException {
        String raw = name.isEmpty() ? null : plainQuery();
        if (raw == null) {
            return HttpRequestView.super.queryLong(name, dflt, min, max);
        }
        long r = QueryScan.range(raw, name);
        if (r == QueryScan.ABSENT) {
            return dflt;
        }
        if (r == QueryScan.REPEATED_RANGE) {
            throw repeated(raw, name);
        }
        int from = (int) (r >>> 32);
        int to = (int) r;
        try {
            long v = Long.parseLong(raw, from, to, 10);
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // the interface's message, from the value's text
        }
        return HttpRequestView.super.queryLong(name, dflt, min, max);
    }

    private static BadRequestException repeated(String raw, String name) {
        return new BadRequestException(name + ": given " + QueryScan.count(raw, name) + " times (expected: once)");
    }

    @Override
    public HttpHeaders headers() {
        return req.headers();
    }

    @Override
    public ByteBuf body() {
        return body == null ? Unpooled.EMPTY_BUFFER : body.asReadOnly();
    }

    @Override
    public <T> T body(BodyCodec<T> codec) throws BadRequestException {
        if (body == null || !body.isReadable()) {
            throw new BadRequestException("request body: empty (expected: a body)");
        }
        try {
            return codec.decode(body.asReadOnly());
        } catch (BadRequestException e) {
            throw e;
        } catch (Exception e) {
            String m = e.getMessage();
            throw new BadRequestException("malformed request body: " + HttpAnswers.truncate(
                    m == null ? e.getClass().getSimpleName() : m.lines().findFirst().orElse(m)));
        }
    }
}
