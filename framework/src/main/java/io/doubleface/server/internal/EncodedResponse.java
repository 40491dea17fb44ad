package io.doubleface.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/**
 * A service's successful answer on the HTTP fast path: its status, content type and body, written
 * by {@link StrictRequestDecoder#codec}'s encoder as one ready-made head ({@code HTTP/1.1 200 OK},
 * {@code content-type}, {@code content-length}) followed by the body, without building a
 * {@link FullHttpResponse} and its header maps and without Netty's header validation (the status
 * comes from the binding and is checked to be 2xx; the content type is the binding's constant).
 * Small bodies are copied behind the head (one buffer to write), larger ones written as a second
 * buffer (gathered by the transport's {@code writev}).
 *
 * <p>Owns the body until written or released. Loop-confined, like the handler that makes it.
 */
final class EncodedResponse extends DefaultByteBufHolder {

    /** Bodies up to this size are copied behind the head: {@value} bytes. */
    static final int COPY_LIMIT = 1024;

    private static final byte[] CRLF_CRLF = {'\r', '\n', '\r', '\n'};

    /** The head up to the content length's digits: {@code HTTP/1.1 200 OK\r\ncontent-type: …\r\ncontent-length: }. */
    private final byte[] prefix;
    private final HttpResponseStatus status;
    private final String contentType;

    EncodedResponse(Prefix prefix, ByteBuf body) {
        super(body);
        this.prefix = prefix.bytes;
        this.status = prefix.status;
        this.contentType = prefix.contentType;
    }

    /** {@return the answer's status} */
    HttpResponseStatus status() {
        return status;
    }

    /** {@return the answer's content type} */
    String contentType() {
        return contentType;
    }

    /** The head's constant part for one status and content type; build once per binding and reuse. */
    static final class Prefix {
        final HttpResponseStatus status;
        final String contentType;
        final byte[] bytes;

        /** @throws IllegalArgumentException if the content type holds a control character (no header injection) */
        Prefix(HttpResponseStatus status, String contentType) {
            for (int i = 0; i < contentType.length(); i++) {
                char c = contentType.charAt(i);
                if (c < 0x20 && c != '\t' || c == 0x7f || c > 0xff) {
                    throw new IllegalArgumentException("content type: character " + (int) c + " at " + i
                            + " (expected: visible ISO-8859-1 characters, spaces and tabs)");
                }
            }
            this.status = status;
            this.contentType = contentType;
            this.bytes = ("HTTP/1.1 " + status.code() + " " + status.reasonPhrase() + "\r\ncontent-type: " + contentType
                    + "\r\ncontent-length: ").getBytes(StandardCharsets.ISO_8859_1);
        }

        boolean is(HttpResponseStatus s, String ct) {
            return status.equals(s) && contentType.equals(ct);
        }
    }

    /**
     * Writes the head (and, for small bodies, the body copied behind it; else the body as a second
     * buffer) to {@code ctx}; releases the body if it was copied or {@code headOnly}.
     *
     * @param ctx the encoder's context
     * @param headOnly whether to leave the body out (the answer to a {@code HEAD} request keeps its
     *     {@code content-length}, RFC 9110 §9.3.2)
     * @param promise completed when the last buffer is written
     */
    void writeTo(ChannelHandlerContext ctx, boolean headOnly, ChannelPromise promise) {
        ByteBuf body = content();
        int n = body.readableBytes();
        boolean inline = !headOnly && n <= COPY_LIMIT;
        ByteBuf head = ctx.alloc().buffer(prefix.length + 14 + (inline ? n : 0));
        head.writeBytes(prefix);
        writeDecimal(head, n);
        head.writeBytes(CRLF_CRLF);
        if (headOnly || inline) {
            if (inline) {
                head.writeBytes(body, body.readerIndex(), n);
            }
            body.release();
            ctx.write(head, promise);
        } else {
            ctx.write(head, ctx.voidPromise());
            ctx.write(body, promise);
        }
    }

    private static void writeDecimal(ByteBuf out, int v) {
        if (v < 10) {
            out.writeByte('0' + v);
            return;
        }
        int digits = 0;
        for (int t = v; t > 0; t /= 10) {
            digits++;
        }
        int at = out.writerIndex() + digits;
        out.ensureWritable(digits);
        for (int t = v; t > 0; t /= 10) {
            out.setByte(--at, '0' + t % 10);
        }
        out.writerIndex(out.writerIndex() + digits);
    }

    /**
     * The same answer as a {@link FullHttpResponse} with {@code connection: close} (the rare path of
     * a connection's last answer); takes over the body.
     */
    FullHttpResponse toClosingResponse() {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content(),
                new io.netty.handler.codec.http.DefaultHttpHeaders(), EmptyHttpHeaders.INSTANCE);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        return r;
    }
}
