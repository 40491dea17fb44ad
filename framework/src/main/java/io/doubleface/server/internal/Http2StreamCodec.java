package io.doubleface.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.util.Map;

/**
 * One HTTP/2 stream as the HTTP/1.1 handler sees a connection: the request's {@code HEADERS} become
 * an {@link HttpRequest} (its pseudo-headers the method and target, {@code :authority} the
 * {@code Host}), its {@code DATA} frames {@link io.netty.handler.codec.http.HttpContent}s, the end of
 * the stream the {@link LastHttpContent}; the answers ({@link EncodedResponse} or
 * {@link FullHttpResponse}) go out as a {@code HEADERS} frame and a {@code DATA} frame that ends the
 * stream (only the {@code HEADERS} frame, with the {@code content-length}, for a {@code HEAD}
 * request). Connection-specific headers of an answer ({@code connection}, {@code keep-alive}, …)
 * are left out, as RFC 9113 §8.2.2 requires.
 *
 * <p>A request target longer than {@link io.doubleface.server.HttpLimits#maxInitialLineLength()} is
 * handed on failed, as the HTTP/1.1 decoder does (the handler answers {@code 414}); a header value
 * with a NUL, CR or LF (RFC 9113 §8.2.1) is handed on failed too ({@code 400}).
 *
 * <p>One per stream channel; loop-confined.
 */
final class Http2StreamCodec extends ChannelDuplexHandler {

    private static final AsciiString COOKIE = HttpHeaderNames.COOKIE;

    private final int maxTargetLength;
    /** The stream's read timeout, told when a body follows the head (it then runs). */
    private final RequestReadTimeout readTimeout;
    /** Whether the request is a {@code HEAD}: its answer leaves its body out. */
    private boolean headRequest;
    /** Whether the request's head was handed on: a later {@code HEADERS} frame is its trailers. */
    private boolean headSeen;
    /** Whether the client ended the stream (the whole request arrived). */
    private boolean requestEnded;
    /** Whether the answer's last frame was written. */
    private boolean answerSent;

    Http2StreamCodec(int maxTargetLength, RequestReadTimeout readTimeout) {
        this.maxTargetLength = maxTargetLength;
        this.readTimeout = readTimeout;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Http2HeadersFrame h) {
            requestEnded |= h.isEndStream();
            if (headSeen) { // trailers: the end of the request (their fields are not used)
                if (h.isEndStream()) {
                    ctx.fireChannelRead(LastHttpContent.EMPTY_LAST_CONTENT);
                }
                return;
            }
            headSeen = true;
            ctx.fireChannelRead(request(h.headers()));
            if (h.isEndStream()) {
                ctx.fireChannelRead(LastHttpContent.EMPTY_LAST_CONTENT);
            } else {
                readTimeout.awaitBody();
            }
        } else if (msg instanceof Http2DataFrame d) {
            requestEnded |= d.isEndStream();
            ByteBuf content = d.content();
            // the frame's content goes on in the HttpContent; the stream channel has already
            // counted its bytes for flow control when it read the frame
            ctx.fireChannelRead(d.isEndStream() ? new DefaultLastHttpContent(content) : new DefaultHttpContent(content));
        } else {
            ReferenceCountUtil.release(msg); // resets, window updates, unknown frames: nothing for the handler
        }
    }

    /** The request of a {@code HEADERS} frame, as the HTTP/1.1 decoder would hand it on. */
    private HttpRequest request(Http2Headers in) {
        CharSequence method = in.method();
        CharSequence path = in.path();
        HttpRequest req = new DefaultHttpRequest(HttpVersion.HTTP_1_1,
                method == null ? HttpMethod.GET : HttpMethod.valueOf(method.toString()),
                path == null ? "" : path.toString());
        headRequest = HttpMethod.HEAD.equals(req.method());
        HttpHeaders out = req.headers();
        StringBuilder cookies = null;
        boolean bad = method == null || path == null || path.isEmpty();
        for (Map.Entry<CharSequence, CharSequence> e : in) {
            CharSequence name = e.getKey();
            if (name.length() > 0 && name.charAt(0) == ':') {
                continue; // pseudo-headers: read above (:scheme has no HTTP/1.1 header)
            }
            CharSequence value = e.getValue();
            bad |= !validValue(value);
            if (COOKIE.contentEqualsIgnoreCase(name)) { // RFC 9113 §8.2.3: split crumbs are joined again
                cookies = cookies == null ? new StringBuilder(value) : cookies.append("; ").append(value);
                continue;
            }
            out.add(name, value);
        }
        if (cookies != null) {
            out.add(COOKIE, cookies.toString());
        }
        CharSequence authority = in.authority();
        if (authority != null && !out.contains(HttpHeaderNames.HOST)) {
            bad |= !validValue(authority);
            out.add(HttpHeaderNames.HOST, authority);
        }
        if (path != null && path.length() > maxTargetLength) {
            req.setDecoderResult(DecoderResult.failure(new TooLongHttpLineException(
                    "request target longer than " + maxTargetLength + " bytes")));
        } else if (bad) {
            req.setDecoderResult(DecoderResult.failure(new IllegalArgumentException(
                    method == null || path == null || path.isEmpty() ? "missing :method or :path"
                            : "a header value holds NUL, CR or LF")));
        }
        return req;
    }

    private static boolean validValue(CharSequence v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == 0 || c == '\r' || c == '\n') {
                return false;
            }
        }
        return true;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof EncodedResponse r) {
            ByteBuf body = r.content();
            Http2Headers h = new DefaultHttp2Headers(false, 3)
                    .status(r.status().codeAsText())
                    .add(HttpHeaderNames.CONTENT_TYPE, r.contentType())
                    .addInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
            writeAnswer(ctx, h, body, promise);
        } else if (msg instanceof FullHttpResponse r) {
            Http2Headers h;
            try {
                h = HttpConversionUtil.toHttp2Headers(r, false); // :status; connection-specific headers left out
            } catch (RuntimeException e) {
                r.release();
                promise.setFailure(e);
                return;
            }
            h.setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
            writeAnswer(ctx, h, r.content(), promise);
        } else {
            ctx.write(msg, promise);
        }
    }

    /**
     * Closing the stream after its whole answer, before the whole request (an early {@code 413}):
     * {@code RST_STREAM} with {@code NO_ERROR}, which asks the client to stop sending without failing
     * the answer it has (RFC 9113 §8.1), instead of the {@code CANCEL} a closing stream channel sends.
     */
    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (answerSent && !requestEnded) {
            ctx.write(new DefaultHttp2ResetFrame(Http2Error.NO_ERROR));
            ctx.flush();
        }
        ctx.close(promise);
    }

    /** The answer's head, then its body in a frame that ends the stream; takes over {@code body}. */
    private void writeAnswer(ChannelHandlerContext ctx, Http2Headers h, ByteBuf body, ChannelPromise promise) {
        promise = promise.unvoid();
        promise.addListener(f -> answerSent = f.isSuccess());
        if (headRequest || !body.isReadable()) {
            body.release();
            ctx.write(new DefaultHttp2HeadersFrame(h, true), promise);
            return;
        }
        ctx.write(new DefaultHttp2HeadersFrame(h, false), ctx.voidPromise());
        ctx.write(new DefaultHttp2DataFrame(body, true), promise);
    }
}
