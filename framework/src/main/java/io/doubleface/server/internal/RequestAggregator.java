package io.doubleface.server.internal;

import io.doubleface.api.ErrorEncoder;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.RequestStats;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;

/**
 * The validation and aggregation stage of the HTTP front end: checks each request head (the
 * decoder's verdict, the version, {@code Host}, {@code Content-Length} against
 * {@link ConnectionLimits#maxBodySize()}), collects the body, and hands the whole request on as the
 * connection's {@link RequestView} (no copy: the body's buffers are gathered in a composite). Input
 * it refuses gets a clear {@code 4xx} — {@code 400} malformed, {@code 413} body too large,
 * {@code 414} request line too long, {@code 431} headers too large, {@code 505} not HTTP/1.x, and
 * {@code 408} when {@link RequestReadTimeout} finds the request stalled — answered in order, and
 * the connection closes after it.
 *
 * <p>State machine per request: {@code IDLE} → (request head) {@code BODY} → (last content)
 * hand-on → {@code IDLE}; a broken request, or one after which the connection ends (no keep-alive,
 * or the server draining), moves to {@code CLOSING}: later input is discarded.
 *
 * <p>It also keeps what the other stages ask of the request under way: whether bytes of a request
 * arrived ({@link HttpFanoutHandler.IdleAndBytesSeen} tells it), whether a body is being read, and
 * a progress count (heads and bodies completed) for the read timeout.
 *
 * <p>Threading: confined to the channel's event loop.
 */
final class RequestAggregator extends ChannelInboundHandlerAdapter {

    private enum State { IDLE, BODY, CLOSING }

    private final PipelinedResponseWriter writer;
    private final ConnectionLimits limits;
    private final RequestStats stats;
    private final ErrorEncoder errors;
    private final FanoutEngine engine;
    private final RequestView view = new RequestView();

    private ChannelHandlerContext ctx;
    private State state = State.IDLE;
    private HttpRequest head;
    private long bodyBytes;
    private CompositeByteBuf body; // the request's body so far; null while there is none

    private boolean bytesSinceHead; // bytes arrived (raw) since the last complete request head
    private long progress;          // request heads and bodies completed

    /** Set on a cleartext connection with HTTP/2 on: its first request may ask for {@code h2c}; null after it. */
    private Http2Upstream h2c;
    /** Whether an HTTP/1.1 request needs a {@code Host} header (not on an HTTP/2 stream: {@code :authority} is optional). */
    private boolean requireHost = true;

    /**
     * @param writer answers the requests refused here, in order
     * @param engine asked whether the server is draining (the connection then ends after the request)
     */
    RequestAggregator(PipelinedResponseWriter writer, ConnectionLimits limits, RequestStats stats, ErrorEncoder errors,
            FanoutEngine engine) {
        this.writer = writer;
        this.limits = limits;
        this.stats = stats;
        this.errors = errors;
        this.engine = engine;
    }

    /** Lets the connection's first request upgrade it to HTTP/2 ({@link Http2Upstream#upgrade}). */
    void h2cUpgrade(Http2Upstream upstream) {
        this.h2c = upstream;
    }

    /** On an HTTP/2 stream: a request without {@code Host} is accepted. */
    void hostOptional() {
        this.requireHost = false;
    }

    /** Bytes of a request arrived (before the codec). */
    void bytesSeen() {
        bytesSinceHead = true;
    }

    /** {@return whether the connection reads no more requests (a broken one, or its last one, was read)} */
    boolean closing() {
        return state == State.CLOSING;
    }

    /** {@return whether a request's head or body is under way: bytes of a head, or a body not yet whole} */
    boolean underWay() {
        return state == State.BODY || (state == State.IDLE && bytesSinceHead);
    }

    /** {@return whether a request's body is being read} */
    boolean bodyUnderWay() {
        return state == State.BODY;
    }

    /** {@return whether nothing of a request is under way and more may come (no bytes since the last request)} */
    boolean idle() {
        return state == State.IDLE && !bytesSinceHead;
    }

    /** {@return the request heads and bodies completed so far} */
    long progress() {
        return progress;
    }

    /** The request under way stalled ({@link RequestReadTimeout}): {@code 408}, and the connection closes. */
    void timedOut(long timeoutMillis) {
        reject(Outcome.REQUEST_TIMEOUT, (state == State.IDLE ? "request head" : "request body")
                + " not received within " + timeoutMillis + " ms");
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseBody();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releaseBody();
        ctx.fireChannelInactive();
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
                reject(Outcome.BAD_REQUEST, "malformed request: " + HttpAnswers.shortReason(cause));
            }
            return;
        }
        HttpVersion version = req.protocolVersion();
        if (version.majorVersion() != 1) {
            reject(Outcome.VERSION_NOT_SUPPORTED, "HTTP version " + HttpAnswers.truncate(version.text())
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
                return; // answered on HTTP/2 stream 1; the HTTP/1.1 stages leave the pipeline
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
            reject(Outcome.BAD_REQUEST, "malformed request body: " + HttpAnswers.shortReason(content.decoderResult().cause()));
            return;
        }
        int n = content.content().readableBytes();
        bodyBytes += n;
        if (bodyBytes > limits.maxBodySize()) {
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
            boolean keepAlive = SimpleRequestHead.isKeepAlive(req);
            if (!keepAlive || engine.isDraining()) {
                // The connection ends with this request's response (RFC 9112 §9.6: no further request
                // on it may be processed), so requests pipelined after it are discarded. Draining, the
                // request is still served and its answer closes the connection: a client that kept the
                // connection moves to another server without a failed request (the grace bounds this).
                state = State.CLOSING;
            }
            view.request(req, body, keepAlive);
            try {
                ctx.fireChannelRead(view);
            } finally {
                view.clear();
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

    /** A broken request: answer in order, then close; discard the rest of the stream. */
    private void reject(Outcome outcome, String reason) {
        releaseBody();
        stats.answered(outcome);
        state = State.CLOSING;
        head = null;
        writer.answer(HttpAnswers.text(errors, stats, HttpResponseStatus.valueOf(outcome.status()), reason), true);
    }
}
