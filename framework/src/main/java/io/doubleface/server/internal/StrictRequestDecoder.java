package io.doubleface.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.ArrayDeque;
import java.util.List;

/**
 * Netty's request decoder, plus one rule it does not enforce: a request head with an obs-fold
 * (a header line continued on the next line by leading space or tab) is refused. RFC 9112 §5.2
 * lets a server either refuse it with 400 or unfold it; Netty unfolds it silently, so a proxy in
 * front and this server could read different header values. Here the head is handed on with a
 * failed {@link DecoderResult} (an {@link ObsFoldException}), which the handler answers with 400
 * and a close, as any other malformed head.
 *
 * <p>How: the bytes the decoder consumed while reading a head are scanned once (a line feed
 * followed by a space or tab, before the empty line ending the head). Each decode call returns
 * after at most one head, and a head is only handed on in the call that consumed its empty
 * line, so every byte of a head is scanned before its {@link HttpRequest} leaves. Bodies are not
 * scanned (an indented JSON body is not a fold). Cost: one pass over the head bytes.
 *
 * <p>The common head first: at the start of each request, a head that {@link SimpleRequestHead}
 * can read whole (a bodiless {@code GET}, {@code HEAD} or {@code DELETE} in the strict grammar it
 * documents, with no obs-fold by construction) is decoded there, into the same request Netty's
 * decoder would make, and handed on with an empty last content; any other request goes to Netty's
 * decoder from its first byte, and the next request starts with the fast path again.
 */
public final class StrictRequestDecoder extends HttpRequestDecoder {

    /** The failure a head with an obs-fold is handed on with. */
    static final class ObsFoldException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ObsFoldException() {
            // no stack trace: it is a client's mistake, answered with 400, never logged
            super("obs-fold (a header line continued by leading space or tab) is not accepted (RFC 9112 §5.2)", null,
                    false, false);
        }
    }

    private final HeadScanner scanner = new HeadScanner();
    /** Per request decoded and not yet answered, in order: whether it was a {@code HEAD}. */
    final ArrayDeque<Boolean> heads = new ArrayDeque<>();
    /** True from the start of a request until its head has been handed on. */
    private boolean inHead = true;

    /** Whether the fast path for common heads is on (tests compare both). */
    private final boolean fastPath;
    private final int maxInitialLineLength;
    private final int maxHeaderSize;
    /**
     * The fast path's parser, one per thread rather than per connection: a parse is synchronous
     * and keeps nothing between calls, and its arrays (~0.8 KB) were a fifth of a connection's
     * heap — copied at every young collection while the connection is young (docs/tracing.md, GC).
     */
    private static final FastThreadLocal<SimpleRequestHead> PARSERS = new FastThreadLocal<>();
    /** True when the next byte starts a request and Netty's decoder holds no part of one. */
    private boolean atRequestStart = true;

    StrictRequestDecoder(HttpDecoderConfig config, boolean fastPath) {
        super(config);
        this.fastPath = fastPath;
        this.maxInitialLineLength = config.getMaxInitialLineLength();
        this.maxHeaderSize = config.getMaxHeaderSize();
    }

    /** This thread's parser for this decoder's limits. */
    private SimpleRequestHead parser() {
        SimpleRequestHead p = PARSERS.get();
        if (p == null || !p.hasLimits(maxInitialLineLength, maxHeaderSize)) {
            p = new SimpleRequestHead(maxInitialLineLength, maxHeaderSize);
            PARSERS.set(p);
        }
        return p;
    }

    /**
     * The server side of HTTP/1.1 for one connection: this decoder and Netty's response encoder,
     * which, as in Netty's {@code HttpServerCodec}, sends the answer to a {@code HEAD} request
     * without its body (RFC 9110 §9.3.2: it keeps its headers, Content-Length included).
     */
    public static CombinedChannelDuplexHandler<StrictRequestDecoder, HttpResponseEncoder> codec(
            HttpDecoderConfig config) {
        return codec(config, true);
    }

    /** {@link #codec(HttpDecoderConfig)}, with the fast path for common heads on or off. */
    static CombinedChannelDuplexHandler<StrictRequestDecoder, HttpResponseEncoder> codec(HttpDecoderConfig config,
            boolean fastPath) {
        StrictRequestDecoder decoder = new StrictRequestDecoder(config, fastPath);
        return new CombinedChannelDuplexHandler<>(decoder, new HttpResponseEncoder() {
            @Override
            protected boolean isContentAlwaysEmpty(HttpResponse msg) {
                // one answer per request, in order (the handler answers every request it is given)
                return decoder.heads.poll() == Boolean.TRUE || super.isContentAlwaysEmpty(msg);
            }

            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
                if (!(msg instanceof EncodedResponse r)) {
                    super.write(ctx, msg, promise);
                    return;
                }
                // the fast path's answer: its ready-made head, then its body (none for a HEAD request)
                r.writeTo(ctx, decoder.heads.poll() == Boolean.TRUE, promise);
            }
        });
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
        if (atRequestStart && fastPath) {
            SimpleRequestHead simple = parser();
            HttpRequest req = simple.parse(buffer);
            if (req != null) {
                buffer.skipBytes(simple.consumed());
                heads.add(req.method() == HttpMethod.HEAD);
                out.add(req);
                out.add(LastHttpContent.EMPTY_LAST_CONTENT);
                return;
            }
            atRequestStart = false; // Netty's decoder reads this request, from its first byte
        }
        int start = buffer.readerIndex();
        int before = out.size();
        super.decode(ctx, buffer, out);
        int consumed = buffer.readerIndex() - start;
        if (inHead && consumed > 0 && !scanner.done) {
            scanner.scan(buffer, start, start + consumed);
        }
        for (int i = before; i < out.size(); i++) {
            Object o = out.get(i);
            if (o instanceof HttpRequest req) {
                heads.add(HttpMethod.HEAD.equals(req.method()));
                if (scanner.folded && req.decoderResult().isSuccess()) {
                    req.setDecoderResult(DecoderResult.failure(new ObsFoldException()));
                }
                inHead = false;
            }
            if (o instanceof LastHttpContent last) {
                inHead = true;
                scanner.reset();
                // Netty's decoder is back at a request's start unless the request failed (then it
                // discards everything that follows, and so must the fast path)
                atRequestStart = last.decoderResult().isSuccess();
            }
        }
    }

    /**
     * A tiny state machine over a head's bytes: finds a line feed followed by space or tab. Jumps
     * from line feed to line feed with {@link ByteBuf#indexOf} (word-at-a-time in Netty), looking
     * only at the first byte of each line, so a head costs a few probes, not one call per byte.
     */
    private static final class HeadScanner {
        private static final int BEFORE_REQUEST_LINE = 0;
        private static final int IN_LINE = 1;
        private static final int AFTER_LF = 2;

        private int state = BEFORE_REQUEST_LINE;
        boolean folded;
        boolean done;

        void reset() {
            state = BEFORE_REQUEST_LINE;
            folded = false;
            done = false;
        }

        /** Scans {@code buf[from, to)}, the next bytes of the head. */
        void scan(ByteBuf buf, int from, int to) {
            int i = from;
            while (i < to && !done) {
                switch (state) {
                    case BEFORE_REQUEST_LINE -> {
                        // the decoder skips control characters and whitespace before a request line
                        if (buf.getByte(i++) > ' ') {
                            state = IN_LINE;
                        }
                    }
                    case IN_LINE -> {
                        int lf = buf.indexOf(i, to, (byte) '\n');
                        if (lf < 0) {
                            return;
                        }
                        state = AFTER_LF;
                        i = lf + 1;
                    }
                    default -> { // AFTER_LF: the first byte of a line
                        byte b = buf.getByte(i++);
                        if (b == ' ' || b == '\t') {
                            folded = true;
                            done = true;
                        } else if (b == '\r' || b == '\n') {
                            done = true; // the empty line: the head ends here
                        } else {
                            state = IN_LINE;
                        }
                    }
                }
            }
        }
    }
}
