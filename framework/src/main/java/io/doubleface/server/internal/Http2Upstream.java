package io.doubleface.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ServerUpgradeCodec;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTTP/2 on the HTTP port, next to HTTP/1.1: a cleartext connection whose first bytes are the
 * client preface ({@code PRI * HTTP/2.0…}, "prior knowledge") or whose first request asks for
 * {@code Upgrade: h2c}, and a TLS connection that negotiated {@code h2} by ALPN, is served by
 * Netty's {@link Http2FrameCodec} and {@link Http2MultiplexHandler}: each stream is a child channel
 * on the connection's loop, whose pipeline is a {@link Http2StreamCodec} and the stages of an
 * {@link HttpFanoutHandler} of its own, so a stream's request is validated, routed, limited,
 * answered and counted exactly as an HTTP/1.1 request is.
 *
 * <p>HTTP/1.1 connections pay for this once: the first bytes are compared with the preface, and
 * the first request's head is looked at for {@code Upgrade}; then the HTTP/1.1 pipeline is the one
 * it would be without HTTP/2.
 *
 * <p>Settings: {@code SETTINGS_MAX_CONCURRENT_STREAMS} from the builder, {@code
 * SETTINGS_MAX_HEADER_LIST_SIZE} the HTTP/1.1 head's limits (request line and headers) together;
 * the windows are HTTP/2's defaults. Flow control is the back-pressure: a stream's answer larger
 * than the client's window waits in Netty's flow controller for {@code WINDOW_UPDATE}s (its stream
 * channel turns unwritable, and the handler's slow-reader timeout applies to it), and a request
 * body is taken only as the stream's window lets the client send it.
 *
 * <p>Connection life: idle (no frame either way) for the idle timeout with no stream open, the
 * connection closes; past the maximum connection age, and when the server drains, it sends
 * {@code GOAWAY} and closes once its open streams are answered.
 *
 * <p>Threading: immutable and shared by the server's connections; the handlers it makes are
 * confined to their connection's loop.
 */
public final class Http2Upstream {

    private static final Logger log = LoggerFactory.getLogger(Http2Upstream.class);

    /** The name of the HTTP/1.1 idle handler ({@link HttpFanoutHandler.IdleAndBytesSeen}) in a connection's pipeline. */
    public static final String HTTP1_IDLE = "http1-idle";
    /** The name of the HTTP/1.1 codec ({@link StrictRequestDecoder#codec}) in a connection's pipeline. */
    public static final String HTTP1_CODEC = "http1-codec";
    /**
     * The name of the HTTP/1.1 {@link HttpFanoutHandler} in a connection's pipeline (it puts its
     * stages in its place when added; they are removed by type).
     */
    public static final String HTTP1_HANDLER = "http1";

    /** The client connection preface (RFC 9113 §3.4). */
    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final AsciiString H2C = AsciiString.cached("h2c");

    private final Supplier<HttpFanoutHandler> streamHandlers;
    private final int maxConcurrentStreams;
    private final long maxHeaderListSize;
    private final int maxTargetLength;
    private final long idleMillis;
    private final long maxAgeNanos;
    private final ChannelInitializer<Http2StreamChannel> streams;

    /**
     * @param streamHandlers makes the handler of one stream (made a stream's handler here)
     * @param maxConcurrentStreams {@code SETTINGS_MAX_CONCURRENT_STREAMS}
     * @param maxInitialLineLength the HTTP/1.1 request line's limit; a longer {@code :path} gets {@code 414}
     * @param maxHeaderSize the HTTP/1.1 headers' limit
     * @param idleMillis the idle timeout of a connection
     * @param maxAgeNanos the most time a connection lives before its {@code GOAWAY} (0 = no limit)
     */
    public Http2Upstream(Supplier<HttpFanoutHandler> streamHandlers, int maxConcurrentStreams, int maxInitialLineLength,
            int maxHeaderSize, long idleMillis, long maxAgeNanos) {
        this.streamHandlers = streamHandlers;
        this.maxConcurrentStreams = maxConcurrentStreams;
        this.maxTargetLength = maxInitialLineLength;
        this.maxHeaderListSize = (long) maxInitialLineLength + maxHeaderSize;
        this.idleMillis = idleMillis;
        this.maxAgeNanos = maxAgeNanos;
        this.streams = new ChannelInitializer<>() {
            @Override
            protected void initChannel(Http2StreamChannel ch) {
                HttpFanoutHandler handler = Http2Upstream.this.streamHandlers.get().http2Stream();
                ch.pipeline().addLast(new Http2StreamCodec(maxTargetLength, handler.readTimeout()));
                handler.addTo(ch.pipeline());
            }
        };
    }

    private Http2FrameCodec newCodec() {
        Http2Settings settings = new Http2Settings()
                .maxConcurrentStreams(maxConcurrentStreams)
                .maxHeaderListSize(maxHeaderListSize);
        return Http2FrameCodecBuilder.forServer().initialSettings(settings).validateHeaders(true).build();
    }

    /** Adds an HTTP/2 connection's handlers at the end of {@code p} (whose HTTP/1.1 handlers are gone). */
    void addTo(ChannelPipeline p) {
        Http2FrameCodec codec = newCodec();
        p.addLast(new IdleStateHandler(0, 0, HttpFanoutHandler.IdleAndBytesSeen.spread(idleMillis),
                TimeUnit.MILLISECONDS), codec, new Http2MultiplexHandler(streams), new Connection(codec));
    }

    private static void removeHttp1(ChannelPipeline p) {
        // the front end's stages first: the codec hands bytes it still holds to what follows it
        HttpFanoutHandler.removeStages(p);
        p.remove(HTTP1_IDLE);
        p.remove(HTTP1_CODEC);
    }

    /**
     * {@return the first handler of a cleartext connection: on the client preface it replaces the
     * HTTP/1.1 handlers (named {@link #HTTP1_IDLE}, {@link #HTTP1_CODEC}, and the front end's stages)
     * with HTTP/2's; on anything else it leaves them; either way it then leaves the pipeline}
     */
    public ChannelHandler prefaceDetector() {
        return new PrefaceDetector();
    }

    /**
     * {@return the handler that follows the TLS handler: after the handshake it adds HTTP/2's handlers
     * if ALPN chose {@code h2}, else hands the pipeline to {@code http1} (also without ALPN); a drain
     * before the handshake is done closes the connection}
     *
     * @param http1 adds the HTTP/1.1 handlers to a pipeline
     */
    public ChannelHandler alpn(Consumer<ChannelPipeline> http1) {
        return new ApplicationProtocolNegotiationHandler(ApplicationProtocolNames.HTTP_1_1) {
            @Override
            protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
                if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                    addTo(ctx.pipeline());
                } else {
                    http1.accept(ctx.pipeline());
                }
            }

            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
                if (evt == HttpFanoutHandler.DRAIN) { // the handshake is not done: no request under way
                    ctx.close();
                    return;
                }
                super.userEventTriggered(ctx, evt);
            }
        };
    }

    /** Compares the first bytes of a cleartext connection with the client preface, once. */
    private final class PrefaceDetector extends ChannelInboundHandlerAdapter {
        /** The bytes so far while fewer than the preface's arrived and all matched it; else null. */
        private ByteBuf held;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof ByteBuf in)) {
                ctx.fireChannelRead(msg);
                return;
            }
            ByteBuf buf = in;
            if (held != null) {
                buf = held.writeBytes(in);
                in.release();
                held = null;
            }
            int n = Math.min(buf.readableBytes(), PREFACE.length);
            boolean match = true;
            for (int i = 0; i < n && match; i++) {
                match = buf.getByte(buf.readerIndex() + i) == PREFACE[i];
            }
            if (match && n < PREFACE.length) { // a prefix of the preface so far: wait for more
                held = ctx.alloc().buffer(PREFACE.length).writeBytes(buf);
                buf.release();
                return;
            }
            ChannelPipeline p = ctx.pipeline();
            if (match) {
                removeHttp1(p);
                addTo(p);
            }
            p.remove(this);
            ctx.fireChannelRead(buf);
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            if (held != null) {
                held.release();
                held = null;
            }
        }
    }

    /**
     * Starts an {@code h2c} upgrade if {@code req}, the first request of a cleartext HTTP/1.1
     * connection, asks for one that will succeed: {@code Upgrade} names {@code h2c},
     * {@code Connection} names {@code Upgrade} and {@code HTTP2-Settings}, one well-formed
     * {@code HTTP2-Settings} header, and no body (a request with a body is served over HTTP/1.1, on a
     * connection that stays HTTP/1.1). Netty's {@link HttpServerUpgradeHandler} then takes the
     * request's end, answers {@code 101 Switching Protocols}, replaces the HTTP/1.1 handlers with
     * HTTP/2's and hands the request to stream 1, which answers it.
     *
     * @param ctx the context of the front end's stage that read the head ({@link RequestAggregator})
     * @param req the first request's head
     * @return whether the upgrade was started (the request is then no longer the caller's)
     */
    boolean upgrade(ChannelHandlerContext ctx, HttpRequest req) {
        HttpHeaders h = req.headers();
        if (!hasToken(h.getAll(HttpHeaderNames.UPGRADE), H2C)
                || !hasToken(h.getAll(HttpHeaderNames.CONNECTION), HttpHeaderNames.UPGRADE)
                || !hasToken(h.getAll(HttpHeaderNames.CONNECTION), Http2CodecUtil.HTTP_UPGRADE_SETTINGS_HEADER)
                || h.contains(HttpHeaderNames.TRANSFER_ENCODING)) {
            return false;
        }
        List<String> settings = h.getAll(Http2CodecUtil.HTTP_UPGRADE_SETTINGS_HEADER);
        if (settings.size() != 1 || !validSettings(settings.get(0))) {
            return false;
        }
        try {
            if (SimpleRequestHead.contentLength(req) > 0) {
                return false;
            }
        } catch (NumberFormatException e) {
            return false;
        }
        Http2FrameCodec codec = newCodec();
        HttpServerUpgradeHandler.SourceCodec source = upCtx -> {
            removeHttp1(upCtx.pipeline());
            upCtx.pipeline().addBefore(upCtx.name(), null, new IdleStateHandler(0, 0,
                    HttpFanoutHandler.IdleAndBytesSeen.spread(idleMillis), TimeUnit.MILLISECONDS));
        };
        HttpServerUpgradeHandler.UpgradeCodecFactory factory = protocol -> H2C.contentEqualsIgnoreCase(protocol)
                ? new Http2ServerUpgradeCodec(codec, new Http2MultiplexHandler(streams), new Connection(codec))
                : null;
        HttpServerUpgradeHandler upgrade = new HttpServerUpgradeHandler(source, factory, 0);
        ctx.pipeline().addBefore(ctx.name(), null, upgrade);
        try {
            // the head goes to the upgrade handler; the request's end follows it there from the codec
            upgrade.channelRead(ctx.pipeline().context(upgrade), ReferenceCountUtil.retain(req));
        } catch (Exception e) {
            ctx.fireExceptionCaught(e);
        }
        return true;
    }

    private static boolean hasToken(List<String> values, CharSequence token) {
        for (String v : values) {
            for (String t : v.split(",")) {
                if (AsciiString.contentEqualsIgnoreCase(t.trim(), token)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether {@code v} is base64url (RFC 9113's {@code token68}) of whole 6-byte settings. */
    private static boolean validSettings(String v) {
        try {
            return Base64.getUrlDecoder().decode(v.trim()).length % 6 == 0;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * The last handler of an HTTP/2 connection: closes it when idle with no stream open, sends
     * {@code GOAWAY} (and closes once the open streams are answered) past its maximum age and on
     * the server's drain, and drops the connection-level frames Netty has already acted on.
     */
    private final class Connection extends ChannelInboundHandlerAdapter {
        private final Http2FrameCodec codec;
        private ScheduledFuture<?> ageTimer;

        Connection(Http2FrameCodec codec) {
            this.codec = codec;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            if (maxAgeNanos > 0) {
                ageTimer = ctx.executor().schedule(() -> {
                    ageTimer = null;
                    ctx.close(); // Http2FrameCodec: GOAWAY, then close after the open streams
                }, maxAgeNanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg); // SETTINGS, PING, GOAWAY, …: answered by the codec
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == HttpFanoutHandler.DRAIN) {
                ctx.close();
            } else if (evt instanceof IdleStateEvent) {
                if (codec.connection().numActiveStreams() == 0) {
                    ctx.close();
                }
            } else {
                ReferenceCountUtil.release(evt);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (ageTimer != null) {
                ageTimer.cancel(false);
                ageTimer = null;
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // protocol errors are answered by the codec (GOAWAY or RST_STREAM); anything else ends the connection
            log.debug("upstream HTTP/2 connection {}: {}", ctx.channel().remoteAddress(), cause.toString());
            if (Http2CodecUtil.getEmbeddedHttp2Exception(cause) == null) {
                ctx.close();
            }
        }
    }
}
