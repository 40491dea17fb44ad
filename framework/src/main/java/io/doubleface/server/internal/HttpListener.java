package io.doubleface.server.internal;

import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.loop.LoopGroup;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.ServerChannel;
import io.netty.channel.ServerChannelRecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The HTTP upstream listener (HTTP/1.1, and HTTP/2 by prior knowledge, {@code Upgrade: h2c} or
 * ALPN): one server channel on the first I/O loop, each accepted connection registered on a
 * frontend loop of the configuration active at accept time ({@link FanoutEngine#nextFrontendLoop()};
 * the reason this is not a {@link ServerBootstrap}, whose child group is fixed) and given its
 * pipeline: TLS, HTTP/2 detection, then the HTTP/1.1 codec and the request handler
 * ({@link #addHttp1}). Tracks the open connections, for the drain and {@link #close()}.
 *
 * <p>Threading: thread-safe; the acceptor runs on the first I/O loop.
 */
public final class HttpListener {

    private static final Logger log = ServerRuntime.LOG;

    /** After a failed accept (e.g. out of file descriptors), accepting pauses for {@value} ms. */
    public static final long ACCEPT_BACKOFF_MILLIS = 1000;

    /** Most connections accepted per read of the listening socket (Netty's default is 16): {@value}. */
    public static final int ACCEPTS_PER_READ = 1024;

    /** Write-buffer water marks of upstream HTTP connections: 512 KiB / 1 MiB. */
    public static final WriteBufferWaterMark UPSTREAM_WATER_MARK = new WriteBufferWaterMark(512 << 10, 1 << 20);

    private final Channel server;
    private final ChannelGroup connections = new DefaultChannelGroup("upstream", GlobalEventExecutor.INSTANCE);
    private volatile boolean closing;

    /**
     * The listening sockets' read policy (HTTP and gRPC): up to {@link #ACCEPTS_PER_READ}
     * connections per read, until accept() finds the queue empty, whatever the transport's "maybe
     * more data" test says.
     *
     * @return a new allocator (one per listening socket)
     */
    public static ServerChannelRecvByteBufAllocator acceptAllocator() {
        ServerChannelRecvByteBufAllocator accepts = new ServerChannelRecvByteBufAllocator();
        accepts.maxMessagesPerRead(ACCEPTS_PER_READ);
        accepts.respectMaybeMoreData(false);
        return accepts;
    }

    private HttpListener(ServerConfig config, HttpRouter router, FanoutEngine engine, LoopGroup io, SslContext tls)
            throws InterruptedException {
        ServerChannel ch;
        try {
            ch = io.serverChannelClass().getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create server channel", e);
        }
        ch.config().setOption(ChannelOption.SO_BACKLOG, 1024);
        ch.config().setOption(ChannelOption.SO_REUSEADDR, true);
        // A burst of new connections (a client pool opening, a balancer failing over) is taken in
        // one read of the listening socket, until accept() finds the queue empty. Netty's epoll
        // transport (level-triggered) otherwise accepts one connection per read: its "maybe more
        // data" test compares the accepted descriptor with one byte attempted. The listener shares
        // a loop with requests, and under load each iteration is long, so the last connections of
        // a few hundred waited one iteration each (docs/benchmarks.md, "The layouts users run").
        ch.config().setRecvByteBufAllocator(acceptAllocator());
        ch.pipeline().addLast(new Acceptor(config, router, engine, tls));
        io.loops().get(0).register(ch).sync();
        try {
            ch.bind(new InetSocketAddress(config.host(), config.port())).sync();
        } catch (Exception e) {
            ch.close();
            throw new IllegalStateException("cannot listen on " + config.host() + ":" + config.port() + ": "
                    + e.getMessage(), e);
        }
        this.server = ch;
    }

    /**
     * Binds the listener on {@code config}'s host and port.
     *
     * @param router the routes (with stats of this server's own)
     * @param tls the TLS context (ALPN {@code h2} too with HTTP/2 on), or {@code null} for plain text
     * @throws IllegalStateException if the port cannot be bound
     * @throws InterruptedException if interrupted while binding
     */
    public static HttpListener start(ServerConfig config, HttpRouter router, FanoutEngine engine, LoopGroup io,
            SslContext tls) throws InterruptedException {
        return new HttpListener(config, router, engine, io, tls);
    }

    /** {@return the bound port} */
    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** {@return whether upstream connections are still open} */
    public boolean hasOpenConnections() {
        return !connections.isEmpty();
    }

    /** {@return how many upstream connections are open} */
    public int openConnections() {
        return connections.size();
    }

    /**
     * Starts the drain on every open connection ({@link HttpFanoutHandler#DRAIN}): idle ones close,
     * and each closes after its last answer.
     */
    public void drain() {
        for (Channel ch : connections) {
            ch.eventLoop().execute(() -> ch.pipeline().fireUserEventTriggered(HttpFanoutHandler.DRAIN));
        }
    }

    /**
     * Stops accepting: closes the listening socket (a connection accepted meanwhile is closed at
     * once). Open connections stay. Idempotent.
     */
    public void stopAccepting() {
        closing = true;
        server.close().syncUninterruptibly();
    }

    /** Stops accepting and closes every open connection (waiting up to 5 s for them). Idempotent. */
    public void close() {
        stopAccepting();
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** Registers each accepted connection on a frontend loop of the active configuration. */
    private final class Acceptor extends ChannelInboundHandlerAdapter {
        private final ServerConfig config;
        private final HttpRouter router;
        private final FanoutEngine engine;
        private final SslContext tls;
        private final ConnectionLimits limits;
        private final long maxConnectionAgeNanos;
        /** HTTP/2 on the HTTP port, or {@code null} when it is off. */
        private final Http2Upstream http2;

        Acceptor(ServerConfig config, HttpRouter router, FanoutEngine engine, SslContext tls) {
            this.config = config;
            this.router = router;
            this.engine = engine;
            this.tls = tls;
            this.limits = config.limits();
            this.maxConnectionAgeNanos = config.maxConnectionAge() == null ? 0 : config.maxConnectionAge().toNanos();
            this.http2 = !config.http2() ? null : new Http2Upstream(
                    () -> newRequestHandler(0), config.http2MaxConcurrentStreams(), limits.maxInitialLineLength(),
                    limits.maxHeaderSize(), config.idleTimeout().toMillis(), maxConnectionAgeNanos);
        }

        /**
         * The request handler of one HTTP/1.1 connection or one HTTP/2 stream: routing, limits,
         * dispatch to the engine, responses in order.
         *
         * @param maxAgeNanos the connection's most age (0: none; streams leave it to their connection)
         */
        private HttpFanoutHandler newRequestHandler(long maxAgeNanos) {
            return new HttpFanoutHandler(engine, router, limits, engine.stats(), maxAgeNanos,
                    config.maxQueuedBytesTotal(), config.errorEncoder());
        }

        /** The HTTP/1.1 handlers, at the end of {@code p}; {@code h2c}: whether the first request may upgrade. */
        private void addHttp1(ChannelPipeline p, boolean h2c) {
            HttpFanoutHandler handler = newRequestHandler(maxConnectionAgeNanos);
            if (h2c) {
                handler.h2cUpgrade(http2);
            }
            p.addLast(Http2Upstream.HTTP1_IDLE,
                    new HttpFanoutHandler.IdleAndBytesSeen(handler, config.idleTimeout().toMillis()));
            // No pipeline-depth limit in the codec (Netty's HttpServerCodec has one): bytes already
            // read are still decoded after HttpFanoutHandler stops reading; what one read can hold
            // bounds the depth.
            p.addLast(Http2Upstream.HTTP1_CODEC, StrictRequestDecoder.codec(new HttpDecoderConfig()
                    .setMaxInitialLineLength(limits.maxInitialLineLength())
                    .setMaxHeaderSize(limits.maxHeaderSize())
                    .setMaxChunkSize(8192)));
            p.addLast(Http2Upstream.HTTP1_HANDLER, handler);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Channel child = (Channel) msg;
            if (closing) {
                child.unsafe().closeForcibly();
                return;
            }
            if (connections.size() >= config.maxConnections()) {
                // over the limit: closed at once (the client sees the connection reset or closed)
                engine.stats().connectionRefused();
                child.unsafe().closeForcibly();
                return;
            }
            // Tracked so close() can close it even if it registers while the loops shut down
            // (Netty closes only the channels registered when a loop starts shutting down).
            connections.add(child);
            child.config().setOption(ChannelOption.TCP_NODELAY, true);
            // Reading pauses above the high mark (HttpFanoutHandler): high enough that one large
            // answer the client is taking normally does not flip it, so no epoll_ctl per answer.
            child.config().setOption(ChannelOption.WRITE_BUFFER_WATER_MARK, UPSTREAM_WATER_MARK);
            child.pipeline().addLast(new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel ch) {
                    if (tls != null) {
                        ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        if (http2 != null) { // ALPN picks HTTP/2 or HTTP/1.1 after the handshake
                            ch.pipeline().addLast(http2.alpn(p -> addHttp1(p, false)));
                            return;
                        }
                    } else if (http2 != null) {
                        // the client preface switches the connection to HTTP/2 (prior knowledge)
                        ch.pipeline().addLast(http2.prefaceDetector());
                    }
                    addHttp1(ch.pipeline(), tls == null && http2 != null);
                }
            });
            EventLoop loop = engine.nextFrontendLoop();
            loop.register(child).addListener(f -> {
                if (!f.isSuccess()) {
                    log.warn("could not register an accepted connection: {}", f.cause().toString());
                    child.unsafe().closeForcibly();
                }
            });
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // e.g. EMFILE: stop accepting for a moment instead of failing in a tight loop (as
            // Netty's own ServerBootstrap acceptor does), then resume.
            log.warn("accept failed, pausing accepts for {} ms: {}", ACCEPT_BACKOFF_MILLIS, cause.toString());
            ctx.channel().config().setAutoRead(false);
            ctx.channel().eventLoop().schedule(() -> {
                ctx.channel().config().setAutoRead(true);
            }, ACCEPT_BACKOFF_MILLIS, TimeUnit.MILLISECONDS);
        }
    }
}
