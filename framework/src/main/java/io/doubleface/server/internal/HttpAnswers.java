package io.doubleface.server.internal;

import io.doubleface.api.ErrorEncoder;
import io.doubleface.api.StatusException;
import io.doubleface.internal.engine.RequestStats;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The answers the HTTP front end makes itself (malformed input, unknown routes, failures), shared by
 * its stages: the server's error body of a reason, and the answer of a {@link StatusException}.
 * Stateless.
 */
final class HttpAnswers {

    private static final Logger log = LoggerFactory.getLogger(HttpAnswers.class);

    private static final ErrorEncoder PLAIN = ErrorEncoder.plainText();

    private HttpAnswers() {}

    /**
     * {@return {@code status} with the server's error body of {@code reason}}; a failing encoder is
     * counted (and logged) in {@code stats} and the plain-text body used instead
     */
    static FullHttpResponse text(ErrorEncoder errors, RequestStats stats, HttpResponseStatus status, String reason) {
        ErrorEncoder.Body b;
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

    /** {@return the answer of a {@link StatusException}: its status, content type and body} */
    static FullHttpResponse statusAnswer(StatusException e) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(e.status()),
                Unpooled.wrappedBuffer(e.body()));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, e.contentType());
        return r;
    }

    /** {@return a throwable's message for an answer (its class name if it has none), at most 200 bytes} */
    static String shortReason(Throwable t) {
        String m = t.getMessage();
        return truncate(m == null ? t.getClass().getSimpleName() : m);
    }

    /** {@return {@code s} cut to its first 200 UTF-8 bytes, with an ellipsis if it was longer} */
    static String truncate(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return b.length <= 200 ? s : new String(b, 0, 200, StandardCharsets.UTF_8) + "…";
    }
}
