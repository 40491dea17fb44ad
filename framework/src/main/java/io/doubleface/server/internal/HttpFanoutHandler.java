package io.doubleface.server.internal;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.BodyCodec;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.engine.FanoutEngine;
import io.doubleface.engine.Outcome;
import io.doubleface.engine.RequestStats;
import io.doubleface.engine.RouteStats;
import io.doubleface.engine.ResponseSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ReferenceCounted;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/1.1 upstream of one connection: validates requests, routes them ({@link HttpRouter}:
 * {@code 404} for an unknown path, {@code 405} with {@code Allow} for a wrong method), collects the
 * body (at most {@link io.doubleface.server.HttpLimits#maxBodySize()}), decodes them with the route's binding, submits
 * them to the {@link FanoutEngine} with the route's service, and writes the responses back <em>in
 * request order</em> (pipelining), with keep-alive.
 *
 * <p>State machine per request: {@code IDLE} → (request head) {@code BODY} → (last content)
 * dispatch → {@code IDLE}; a broken request moves to {@code CLOSING}: its error response is
 * queued in order, later input is discarded, and the connection closes once that response is
 * written.
 *
 * <p>Ordering: each request gets a sequence number; responses complete in any order (on any
 * thread — they hop to this channel's loop) and are parked in a ring until all earlier ones are
 * written. Reading stops while {@link io.doubleface.server.HttpLimits#maxPipelined()} requests are unanswered, and while
 * the connection's outbound buffer is above Netty's high water mark (its client reads slower than
 * it asks); a client that leaves more than {@link io.doubleface.server.HttpLimits#maxQueuedBytes()} unread, or reads
 * nothing for {@link io.doubleface.server.HttpLimits#slowReaderTimeout()} while responses wait, is disconnected.
 *
 * <p>Threading: all state is confined to the channel's event loop.
 */
public final class HttpFanoutHandler extends ChannelInboundHandlerAdapter {

    private final io.doubleface.api.ErrorEncoder errors;

    private static final Logger log = LoggerFactory.getLogger(HttpFanoutHandler.class);

    private enum State { IDLE, BODY, DISCARD_BODY, CLOSING }

    private final FanoutEngine engine;
    private final HttpRouter router;
    private final ConnectionLimits limits;
    private final RequestStats stats;
    private final View view = new View();
    private final long maxAgeNanos;
    private final long bornNanos;

    private ChannelHandlerContext ctx;
    private State state = State.IDLE;
    private HttpRequest head;
    private long bodyBytes;
    private CompositeByteBuf body; // the request's body so far; null while there is none

    // pipelining: ring of finished responses waiting for their turn
    private Object[] ring;
    /** The head of the last successful answer ({@link #prefix}). */
    private EncodedResponse.Prefix lastPrefix;
    private boolean[] ringClose;
    private final int maxPipelined;
    private long nextSeq;
    private long nextToWrite;
    private boolean closed;

    // request read timeout: a request begun but unfinished for a whole check period is cut
    private boolean bytesSinceHead;   // bytes arrived (raw) since the last complete request head
    private long progress;            // request heads and bodies completed
    private long progressAtCheck = -1;
    private ScheduledFuture<?> readCheck;
    private boolean readChecksStarted;

    /** Set on a cleartext connection with HTTP/2 on: its first request may ask for {@code h2c}; null after it. */
    private Http2Upstream h2c;
    /** Whether an HTTP/1.1 request needs a {@code Host} header (not on an HTTP/2 stream: {@code :authority} is optional). */
    private boolean requireHost = true;

    // back-pressure: reading stops while either holds
    private boolean pausedByPipeline; // maxPipelined requests unanswered
    private boolean pausedByWrites;   // the outbound buffer is above the high water mark
    private ScheduledFuture<?> slowReaderTimer;
    private final long maxBehindBytesTotal;
    private long behindReported;      // this connection's share of RequestStats.behindBytes

    public HttpFanoutHandler(FanoutEngine engine, HttpRouter router, ConnectionLimits limits, RequestStats stats) {
        this(engine, router, limits, stats, 0, Long.MAX_VALUE, io.doubleface.api.ErrorEncoder.plainText());
    }

    /**
     * @param maxAgeNanos after this long the connection's next answer that leaves nothing in flight
     *     carries {@code Connection: close} and the connection closes (0 = no age limit)
     * @param maxBehindBytesTotal most response bytes the whole server holds for clients that are
     *     behind (connections above the high water mark); the connection that would go over is
     *     closed as a slow reader
     * @param errors the bodies of the answers this handler makes itself
     */
    public HttpFanoutHandler(FanoutEngine engine, HttpRouter router, ConnectionLimits limits, RequestStats stats,
            long maxAgeNanos, long maxBehindBytesTotal, io.doubleface.api.ErrorEncoder errors) {
        this.errors = java.util.Objects.requireNonNull(errors, "errors");
        this.maxBehindBytesTotal = maxBehindBytesTotal;
        this.maxAgeNanos = maxAgeNanos;
        this.bornNanos = maxAgeNanos > 0 ? System.nanoTime() : 0;
        this.engine = engine;
        this.router = router;
        this.limits = limits;
        this.stats = stats;
        this.maxPipelined = limits.maxPipelined();
        this.ring = new Object[16];
        this.ringClose = new boolean[16];
    }

    /**
     * Lets the connection's first request upgrade it to HTTP/2 ({@code Upgrade: h2c}, see
     * {@link Http2Upstream#upgrade}). Call before the connection is registered.
     *
     * @param upstream the server's HTTP/2 upstream
     * @return this handler
     */
    public HttpFanoutHandler h2cUpgrade(Http2Upstream upstream) {
        this.h2c = upstream;
        return this;
    }

    /**
     * Makes this the handler of one HTTP/2 stream: a request without {@code Host} is accepted, and
     * the request read timeout runs only once the stream's codec says a body follows its head
     * ({@link #awaitBody}); a head arrives whole, in one {@code HEADERS} frame.
     */
    HttpFanoutHandler http2Stream() {
        this.requireHost = false;
        this.readChecksStarted = true; // not at add or activation: see awaitBody
        return this;
    }

    /** On an HTTP/2 stream: the request's body is still to come, so the request read timeout applies. */
    void awaitBody() {
        readChecksStarted = false;
        startReadChecks();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) { // added after the channel became active (after ALPN, on a stream)
            startReadChecks();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        startReadChecks();
        ctx.fireChannelActive();
    }

    private void startReadChecks() {
        if (readChecksStarted) {
            return;
        }
        readChecksStarted = true;
        // The first check at a random point of the first period: connections opened together (a
        // client's pool, a burst after a pause) then do not all check in the same loop iteration
        // forever after. A request is still cut one to two periods after it stalled.
        long period = limits.requestReadTimeout().toNanos();
        scheduleReadCheck(period / 2 + ThreadLocalRandom.current().nextLong(period / 2 + 1));
    }

    /** Removed from a live connection (an {@code h2c} upgrade): its timers and buffers go. */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        release();
    }

    /**
     * The idle timeout of the connection, and the raw-bytes side of the request read timeout: sits
     * before the HTTP codec and tells the handler that bytes of a request arrived. One handler for
     * both, so no extra pipeline hop per read.
     */
    public static final class IdleAndBytesSeen extends IdleStateHandler {
        private final HttpFanoutHandler handler;

        /**
         * @param idleMillis the idle timeout; this connection's is up to a tenth longer, at random
         *     (see {@link #spread})
         */
        public IdleAndBytesSeen(HttpFanoutHandler handler, long idleMillis) {
            super(0, 0, spread(idleMillis), TimeUnit.MILLISECONDS);
            this.handler = handler;
        }

        /**
         * {@code idleMillis} plus up to a tenth of it, at random. Connections that went idle
         * together (a client's pool after a burst) would otherwise all close in one loop iteration,
         * and a few hundred closes there delay every request that iteration serves
         * (docs/benchmarks.md, "Fanout 1: the idle close"); spread over the tenth they cost nothing
         * visible.
         */
        static long spread(long idleMillis) {
            return idleMillis + ThreadLocalRandom.current().nextLong(idleMillis / 10 + 1);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            handler.bytesSinceHead = true;
            super.channelRead(ctx, msg);
        }
    }

    private void scheduleReadCheck(long delayNanos) {
        if (!closed) {
            readCheck = ctx.executor().schedule(this::checkRead, delayNanos, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Once per {@link io.doubleface.server.HttpLimits#requestReadTimeout()}: a request whose head or body was under way
     * at the last check and has made no progress since gets {@code 408} and the connection closes.
     */
    private void checkRead() {
        readCheck = null;
        if (closed || state == State.CLOSING) {
            return;
        }
        boolean underWay = state == State.BODY || state == State.DISCARD_BODY || (state == State.IDLE && bytesSinceHead);
        if (underWay && progress == progressAtCheck) {
            releaseBody();
            reject(Outcome.REQUEST_TIMEOUT, (state == State.IDLE ? "request head" : "request body")
                    + " not received within " + limits.requestReadTimeout().toMillis() + " ms");
            return;
        }
        progressAtCheck = underWay ? progress : -1;
        scheduleReadCheck(limits.requestReadTimeout().toNanos());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (state == State.CLOSING) {
                return; // discard everything after a broken request
            }
            if (msg instanceof HttpRequest req) {
                onHead(req);
            }
            // Only while a body is expected: a head the decoder failed on arrives as a
            // FullHttpRequest (head and content in one message) whose failure onHead has already
            // answered; seeing it again as content would answer and count it twice.
            if (msg instanceof HttpContent content && state == State.BODY) {
                onContent(content);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onHead(HttpRequest req) {
        DecoderResult result = req.decoderResult();
        if (result.isFailure()) {
            Throwable cause = result.cause();
            if (cause instanceof TooLongHttpLineException) {
                reject(Outcome.URI_TOO_LONG, "request line longer than " + limits.maxInitialLineLength() + " bytes");
            } else if (cause instanceof TooLongHttpHeaderException) {
                reject(Outcome.HEADERS_TOO_LARGE, "request headers larger than " + limits.maxHeaderSize() + " bytes");
            } else if (cause instanceof TooLongFrameException) {
                reject(Outcome.HEADERS_TOO_LARGE, "request head too large");
            } else {
                reject(Outcome.BAD_REQUEST, "malformed request: " + shortReason(cause));
            }
            return;
        }
        HttpVersion version = req.protocolVersion();
        if (version.majorVersion() != 1) {
            reject(Outcome.VERSION_NOT_SUPPORTED, "HTTP version " + truncate(version.text())
                    + " not supported (expected: HTTP/1.1 or HTTP/1.0)");
            return;
        }
        int hosts = SimpleRequestHead.hostCount(req); // RFC 9112 §3.2
        if (hosts > 1) {
            reject(Outcome.BAD_REQUEST, "malformed request: Host header given " + hosts + " times (expected: once)");
            return;
        }
        if (hosts == 0 && requireHost && version.minorVersion() >= 1) {
            reject(Outcome.BAD_REQUEST, "malformed request: missing Host header (required in HTTP/1.1)");
            return;
        }
        if (h2c != null) { // the connection's first request only
            Http2Upstream upgrade = h2c;
            h2c = null;
            if (req.headers().contains(HttpHeaderNames.UPGRADE) && upgrade.upgrade(ctx, req)) {
                return; // answered on HTTP/2 stream 1; this handler leaves the pipeline
            }
        }
        head = req;
        bodyBytes = 0;
        bytesSinceHead = false;
        progress++;
        releaseBody();
        long declared;
        try {
            declared = SimpleRequestHead.contentLength(req);
        } catch (NumberFormatException e) {
            reject(Outcome.BAD_REQUEST, "malformed request: invalid Content-Length");
            return;
        }
        if (declared > limits.maxBodySize()) {
            reject(Outcome.BODY_TOO_LARGE, "request body of " + declared + " bytes exceeds " + limits.maxBodySize());
            return;
        }
        state = State.BODY;
    }

    private void onContent(HttpContent content) {
        if (content.decoderResult().isFailure()) {
            reject(Outcome.BAD_REQUEST, "malformed request body: " + shortReason(content.decoderResult().cause()));
            return;
        }
        int n = content.content().readableBytes();
        bodyBytes += n;
        if (bodyBytes > limits.maxBodySize()) {
            releaseBody();
            reject(Outcome.BODY_TOO_LARGE, "request body exceeds " + limits.maxBodySize() + " bytes");
            return;
        }
        if (n > 0) {
            if (body == null) {
                body = ctx.alloc().compositeBuffer(64);
            }
            body.addComponent(true, content.content().retain());
        }
        if (content instanceof LastHttpContent) {
            progress++;
            bytesSinceHead = false; // the bytes seen were this request's
            HttpRequest req = head;
            head = null;
            state = State.IDLE;
            try {
                dispatch(req);
            } finally {
                releaseBody();
            }
        }
    }

    private void releaseBody() {
        if (body != null) {
            body.release();
            body = null;
        }
    }

    /** User event: the server is draining; a connection with nothing under way closes now. */
    public static final Object DRAIN = new Object() {
        @Override
        public String toString() {
            return "DRAIN";
        }
    };

    private void dispatch(HttpRequest req) {
        long seq = nextSeq++;
        boolean keepAlive = SimpleRequestHead.isKeepAlive(req);
        if (!keepAlive || engine.isDraining()) {
            // The connection ends with this request's response (RFC 9112 §9.6: no further request
            // on it may be processed), so requests pipelined after it are discarded. Draining, the
            // request is still served and its answer closes the connection: a client that kept the
            // connection moves to another server without a failed request (the grace bounds this).
            state = State.CLOSING;
        }
        String uri = req.uri();
        int pathEnd = QueryScan.pathEnd(uri);
        QueryStringDecoder query = null; // built only when something needs decoding (View.decoder())
        String path;
        if (uri.indexOf('%', 0, pathEnd) < 0) {
            path = uri.substring(0, pathEnd); // what QueryStringDecoder.path() gives for a path without escapes
        } else {
            query = new QueryStringDecoder(uri);
            try {
                path = query.path(); // decodes lazily: a bad %-escape throws here
            } catch (IllegalArgumentException e) {
                stats.answered(Outcome.BAD_REQUEST);
                park(seq, text(HttpResponseStatus.BAD_REQUEST, "malformed request target: " + shortReason(e)), !keepAlive);
                return;
            }
        }
        HttpRouter.Match match = router.route(req.method(), path);
        if (match.route() == null) {
            if (match.allowed().isEmpty()) {
                stats.answered(Outcome.NOT_FOUND);
                park(seq, text(HttpResponseStatus.NOT_FOUND, "no such path: " + truncate(path)), !keepAlive);
                return;
            }
            StringBuilder allow = new StringBuilder();
            for (HttpMethod m : match.allowed()) {
                allow.append(allow.length() == 0 ? "" : ", ").append(m.name());
            }
            stats.answered(Outcome.METHOD_NOT_ALLOWED);
            FullHttpResponse r = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "method " + req.method() + " not allowed on "
                    + truncate(path) + " (use " + allow + ")");
            r.headers().set(HttpHeaderNames.ALLOW, allow.toString());
            park(seq, r, !keepAlive);
            return;
        }
        dispatch(seq, keepAlive, req, query, pathEnd, path, match);
    }

    private <Q, R> void dispatch(long seq, boolean keepAlive, HttpRequest req, QueryStringDecoder query, int pathEnd,
            String path, HttpRouter.Match match) {
        @SuppressWarnings("unchecked")
        HttpRouter.Route<Q, R> route = (HttpRouter.Route<Q, R>) match.route();
        long start = System.nanoTime();
        Q request;
        try {
            view.set(req, query, pathEnd, path, route, match.values(), body);
            request = route.binding().decode(view);
        } catch (BadRequestException e) {
            answerRefused(route, start, Outcome.BAD_REQUEST);
            park(seq, text(HttpResponseStatus.BAD_REQUEST, e.getMessage()), !keepAlive);
            return;
        } catch (io.doubleface.api.StatusException e) {
            answerRefused(route, start, e.status() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS);
            park(seq, statusAnswer(e), !keepAlive);
            return;
        } catch (IllegalArgumentException e) {
            // a bad %-escape in the query (QueryStringDecoder.parameters()), a NumberFormatException of
            // the binding's own parsing, ...: the client's input, as HttpBinding.decode documents
            answerRefused(route, start, Outcome.BAD_REQUEST);
            park(seq, text(HttpResponseStatus.BAD_REQUEST, "bad request: " + shortReason(e)), !keepAlive);
            return;
        } catch (RuntimeException e) {
            stats.decodeErrors.error(log, "decoding a request failed", e);
            answerRefused(route, start, Outcome.INTERNAL_ERROR);
            park(seq, text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "decoding the request failed"), !keepAlive);
            return;
        } finally {
            view.clear();
        }
        if (nextSeq - nextToWrite >= maxPipelined) {
            pausedByPipeline = true; // back-pressure: too many unanswered
            updateAutoRead();
        }
        Sink<R> sink = new Sink<>(seq, !keepAlive, route.binding(), route.stats(), start, req, path, route,
                match.values());
        if (engine.tracesSpans()) {
            io.netty.handler.codec.http.HttpHeaders h = req.headers();
            engine.submit(ctx.channel().eventLoop(), route.service(), request, sink, route.stats().name(), h::get);
        } else {
            engine.submit(ctx.channel().eventLoop(), route.service(), request, sink);
        }
    }

    private void answerRefused(HttpRouter.Route<?, ?> route, long start, Outcome outcome) {
        stats.answered(outcome);
        route.stats().answered(outcome, start);
    }

    /** The request as the binding sees it; one per connection, reused (decode is synchronous). */
    private static final class View implements HttpRequestView {
        private HttpRequest req;
        /** Netty's decoder of the target; null until {@link #query()} or a query that needs decoding asks for it. */
        private QueryStringDecoder query;
        /** Where the target's path ends: its first {@code ?} or {@code #}, or its length. */
        private int pathEnd;
        private String path;
        private HttpRouter.Route<?, ?> route;
        private String[] values;
        private ByteBuf body;

        /** The raw query if it is {@link QueryScan#plain}, {@code ""} if not, {@code null} until first asked. */
        private String plainQuery;

        void set(HttpRequest req, QueryStringDecoder query, int pathEnd, String path, HttpRouter.Route<?, ?> route,
                String[] values, ByteBuf body) {
            this.req = req;
            this.query = query;
            this.pathEnd = pathEnd;
            this.plainQuery = null;
            this.path = path;
            this.route = route;
            this.values = values;
            this.body = body;
        }

        void clear() {
            set(null, null, 0, null, null, null, null);
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
                // a bad %-escape: the handler answers 400 "bad request: malformed query string: ..."
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
        public String queryParam(String name) throws io.doubleface.api.BadRequestException {
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
        public long queryLong(String name, long dflt, long min, long max) throws io.doubleface.api.BadRequestException {
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

        private static io.doubleface.api.BadRequestException repeated(String raw, String name) {
            return new io.doubleface.api.BadRequestException(name + ": given " + QueryScan.count(raw, name)
                    + " times (expected: once)");
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
                throw new BadRequestException("malformed request body: " + truncate(m == null ? e.getClass().getSimpleName()
                        : m.lines().findFirst().orElse(m)));
            }
        }
    }

    /** A broken request: answer in order, then close; discard the rest of the stream. */
    private void reject(Outcome outcome, String reason) {
        releaseBody();
        stats.answered(outcome);
        state = State.CLOSING;
        head = null;
        long seq = nextSeq++;
        park(seq, text(HttpResponseStatus.valueOf(outcome.status()), reason), true);
    }

    /** Completion of one admitted request; may be called on any thread. */
    private final class Sink<R> implements ResponseSink<R>, io.doubleface.engine.RequestInfo {
        private final long seq;
        private final boolean close;
        private final HttpBinding<?, R> binding;
        private final RouteStats routeStats;
        private final long start;
        // what the request's RequestContext reads: the head (its headers are made on first use), path, variables
        private final HttpRequest head;
        private final String path;
        private final HttpRouter.Route<?, ?> route;
        private final String[] variables;

        Sink(long seq, boolean close, HttpBinding<?, R> binding, RouteStats routeStats, long start, HttpRequest head,
                String path, HttpRouter.Route<?, ?> route, String[] variables) {
            this.seq = seq;
            this.close = close;
            this.binding = binding;
            this.routeStats = routeStats;
            this.start = start;
            this.head = head;
            this.path = path;
            this.route = route;
            this.variables = variables;
        }

        @Override
        public io.doubleface.engine.RequestInfo info() {
            return this;
        }

        @Override
        public String route() {
            return routeStats.name();
        }

        @Override
        public String method() {
            return head.method().name();
        }

        @Override
        public String path() {
            return path;
        }

        @Override
        public String pathVariable(String name) {
            return route.variableOrNull(variables, name);
        }

        @Override
        public String header(String name) {
            synchronized (this) { // the head's headers are made on first use; handlers may ask from several threads
                return head.headers().get(name);
            }
        }

        @Override
        public void complete(R response) {
            if (ctx.executor().inEventLoop()) {
                completeOnLoop(response);
            } else {
                ctx.executor().execute(() -> completeOnLoop(response));
            }
        }

        private void answered(Outcome outcome) {
            stats.answered(outcome);
            routeStats.answered(outcome, start);
        }

        private void completeOnLoop(R response) {
            if (closed) {
                answered(Outcome.OK); // the request succeeded; only its client is gone
                ReferenceCountUtil.release(response);
                return;
            }
            HttpResponseStatus status;
            ByteBuf body;
            try {
                status = binding.status(response);
                int code = status.code();
                if (!(code >= 200 && code <= 299) && !(code >= 400 && code <= 599)) {
                    throw new IllegalStateException("status " + status + " (expected: 2xx, 4xx or 5xx)");
                }
                body = binding.encode(response, ctx.alloc());
            } catch (io.doubleface.api.StatusException e) {
                ReferenceCountUtil.release(response);
                answered(e.status() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS);
                park(seq, statusAnswer(e), close);
                return;
            } catch (RuntimeException e) {
                stats.encodeErrors.error(log, "encoding a response failed", e);
                ReferenceCountUtil.release(response);
                answered(Outcome.INTERNAL_ERROR); // answered 500, so counted as such, not as ok
                park(seq, text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "encoding the response failed"), close);
                return;
            }
            EncodedResponse.Prefix head;
            try {
                head = prefix(status, binding.contentType());
            } catch (RuntimeException e) {
                stats.encodeErrors.error(log, "encoding a response failed", e);
                body.release();
                answered(Outcome.INTERNAL_ERROR);
                park(seq, text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "encoding the response failed"), close);
                return;
            }
            answered(status.code() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS);
            park(seq, new EncodedResponse(head, body), close);
        }

        @Override
        public void fail(io.doubleface.api.StatusException answer) {
            if (ctx.executor().inEventLoop()) {
                answered(answer.status() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS);
                park(seq, statusAnswer(answer), close);
            } else {
                ctx.executor().execute(() -> fail(answer));
            }
        }

        @Override
        public void fail(Outcome outcome, String reason) {
            if (ctx.executor().inEventLoop()) {
                failOnLoop(outcome, reason);
            } else {
                ctx.executor().execute(() -> failOnLoop(outcome, reason));
            }
        }

        private void failOnLoop(Outcome outcome, String reason) {
            answered(outcome);
            FullHttpResponse r = text(HttpResponseStatus.valueOf(outcome.status()), reason);
            if (outcome == Outcome.OVERLOADED) {
                r.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
            }
            park(seq, r, close);
        }
    }

    /** The head of a successful answer, kept for the next answer of the same status and content type. Loop only. */
    private EncodedResponse.Prefix prefix(HttpResponseStatus status, String contentType) {
        EncodedResponse.Prefix p = lastPrefix;
        if (p == null || !p.is(status, contentType)) {
            p = new EncodedResponse.Prefix(status, contentType);
            lastPrefix = p;
        }
        return p;
    }

    /**
     * Parks response {@code seq} (a {@link FullHttpResponse}, or an {@link EncodedResponse}) and
     * writes every response that is now in order. Loop only.
     */
    private void park(long seq, ReferenceCounted response, boolean closeAfter) {
        if (closed) {
            response.release();
            return;
        }
        while (nextSeq - nextToWrite > ring.length) {
            grow();
        }
        int slot = (int) (seq % ring.length);
        ring[slot] = response;
        ringClose[slot] = closeAfter;
        boolean wrote = false;
        while (nextToWrite < nextSeq) {
            int s = (int) (nextToWrite % ring.length);
            Object r = ring[s];
            if (r == null) {
                break;
            }
            ring[s] = null;
            nextToWrite++;
            // draining, or the connection past its age: the last answer in flight closes it
            boolean closing = ringClose[s] || (nextToWrite == nextSeq && state != State.BODY
                    && (engine.isDraining() || (maxAgeNanos > 0 && System.nanoTime() - bornNanos > maxAgeNanos)));
            if (r instanceof EncodedResponse e && !closing) {
                ctx.write(e); // the codec's encoder writes its ready-made head and the body
                wrote = true;
                continue;
            }
            FullHttpResponse resp = r instanceof EncodedResponse e ? e.toClosingResponse() : (FullHttpResponse) r;
            HttpUtil.setContentLength(resp, resp.content().readableBytes());
            if (closing) {
                resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE);
                closed = true;
                releaseParked();
                return;
            }
            ctx.write(resp);
            wrote = true;
        }
        if (wrote) {
            ctx.flush();
            if (checkSlowReader()) {
                return;
            }
        }
        if (pausedByPipeline && nextSeq - nextToWrite < maxPipelined) {
            pausedByPipeline = false;
            updateAutoRead();
        }
    }

    private void updateAutoRead() {
        boolean read = !pausedByPipeline && !pausedByWrites;
        if (ctx.channel().config().isAutoRead() != read) {
            ctx.channel().config().setAutoRead(read);
        }
    }

    /**
     * After a write: closes the connection if its client leaves more than
     * {@link io.doubleface.server.HttpLimits#maxQueuedBytes()} unread, else pauses reading while the outbound buffer is
     * above the high water mark (and arms the slow-reader timer).
     *
     * @return whether the connection was closed
     */
    private boolean checkSlowReader() {
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        if (out != null && out.totalPendingWriteBytes() > limits.maxQueuedBytes()) {
            closeSlowReader("more than " + limits.maxQueuedBytes() + " response bytes unread");
            return true;
        }
        if (!ctx.channel().isWritable()) {
            onUnwritable();
            // behind: this connection's queue counts towards the server-wide bound
            long mine = out == null ? 0 : out.totalPendingWriteBytes();
            long total = stats.addBehindBytes(mine - behindReported);
            behindReported = mine;
            if (total > maxBehindBytesTotal) {
                stats.serverQueueFull();
                closeSlowReader("the server holds more than " + maxBehindBytesTotal
                        + " response bytes for clients that are behind");
                return true;
            }
        }
        return false;
    }

    /** Takes this connection's queued bytes out of the server-wide count (caught up, or closed). */
    private void releaseBehind() {
        if (behindReported != 0) {
            stats.addBehindBytes(-behindReported);
            behindReported = 0;
        }
    }

    private void onUnwritable() {
        if (!pausedByWrites) {
            pausedByWrites = true;
            updateAutoRead();
        }
        if (slowReaderTimer == null) {
            long nanos = limits.slowReaderTimeout().toNanos();
            slowReaderTimer = ctx.executor().schedule(() -> {
                slowReaderTimer = null;
                if (!closed && !ctx.channel().isWritable()) {
                    closeSlowReader("responses unread for " + limits.slowReaderTimeout().toMillis() + " ms");
                }
            }, nanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            releaseBehind();
            if (slowReaderTimer != null) {
                slowReaderTimer.cancel(false);
                slowReaderTimer = null;
            }
            if (pausedByWrites) {
                pausedByWrites = false;
                updateAutoRead();
            }
        } else if (!closed) {
            onUnwritable();
        }
        ctx.fireChannelWritabilityChanged();
    }

    /** Closes a connection whose client does not read its responses; the responses are dropped. */
    private void closeSlowReader(String why) {
        if (closed) {
            return;
        }
        log.debug("closing upstream connection {}: slow reader ({})", ctx.channel().remoteAddress(), why);
        stats.slowReaderClosed();
        closed = true;
        releaseParked();
        ctx.close();
    }

    /**
     * Doubles the ring. Needed when one read delivers more pipelined requests than the ring holds
     * (reading stops at {@code maxPipelined}, but bytes already read are still decoded).
     */
    private void grow() {
        Object[] r = new Object[ring.length * 2];
        boolean[] c = new boolean[r.length];
        for (long s = nextToWrite; s < nextToWrite + ring.length; s++) {
            r[(int) (s % r.length)] = ring[(int) (s % ring.length)];
            c[(int) (s % r.length)] = ringClose[(int) (s % ring.length)];
        }
        ring = r;
        ringClose = c;
    }

    private void releaseParked() {
        for (int i = 0; i < ring.length; i++) {
            if (ring[i] != null) {
                ReferenceCountUtil.release(ring[i]);
                ring[i] = null;
            }
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        release();
        ctx.fireChannelInactive();
    }

    private void release() {
        closed = true;
        releaseBehind();
        if (readCheck != null) {
            readCheck.cancel(false);
            readCheck = null;
        }
        if (slowReaderTimer != null) {
            slowReaderTimer.cancel(false);
            slowReaderTimer = null;
        }
        releaseParked();
        releaseBody();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == DRAIN) {
            if (nextToWrite == nextSeq && state == State.IDLE && !bytesSinceHead) {
                closed = true;
                ctx.close();
            }
            return;
        }
        if (evt instanceof IdleStateEvent) {
            if (nextToWrite == nextSeq) { // nothing in flight: an idle keep-alive connection
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("upstream connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }

    /** The answer of a {@link io.doubleface.api.StatusException}: its status, content type and body. */
    static FullHttpResponse statusAnswer(io.doubleface.api.StatusException e) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(e.status()),
                Unpooled.wrappedBuffer(e.body()));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, e.contentType());
        return r;
    }

    /** An answer the handler makes itself: {@code status} with the server's error body of {@code reason}. */
    FullHttpResponse text(HttpResponseStatus status, String reason) {
        io.doubleface.api.ErrorEncoder.Body b;
        try {
            b = errors.encode(status.code(), reason);
        } catch (RuntimeException e) {
            stats.encodeErrors.error(log, "the error encoder failed", e);
            b = PLAIN.encode(status.code(), reason);
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(b.bytes()));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, b.contentType());
        return r;
    }

    private static final io.doubleface.api.ErrorEncoder PLAIN = io.doubleface.api.ErrorEncoder.plainText();

    private static String shortReason(Throwable t) {
        String m = t.getMessage();
        return truncate(m == null ? t.getClass().getSimpleName() : m);
    }

    private static String truncate(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return b.length <= 200 ? s : new String(b, 0, 200, StandardCharsets.UTF_8) + "…";
    }
}
