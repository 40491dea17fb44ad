package io.doubleface.server;

import io.doubleface.api.Backend;
import io.doubleface.api.ErrorEncoder;
import io.doubleface.driver.Command;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.driver.FlushPolicy;
import io.doubleface.driver.LoopFlush;
import io.doubleface.driver.ShardDriver;
import io.doubleface.engine.AdmissionLimiter;
import io.doubleface.engine.FanoutEngine;
import io.doubleface.engine.OtelTracing;
import io.doubleface.engine.RouteStats;
import io.doubleface.loop.LoopGroup;
import io.doubleface.model.Configuration;
import io.doubleface.engine.ModelContext;
import io.doubleface.engine.ThreadingModel;
import io.doubleface.sched.SchedulingPolicy;
import io.doubleface.server.internal.AdminHandler;
import io.doubleface.server.internal.ConnectionLimits;
import io.doubleface.server.internal.FrontendLoopGroup;
import io.doubleface.server.internal.GrpcFanoutHandler;
import io.doubleface.server.internal.Http2Upstream;
import io.doubleface.server.internal.HttpFanoutHandler;
import io.doubleface.server.internal.HttpRouter;
import io.doubleface.server.internal.KnobsEndpoint;
import io.doubleface.server.internal.ServerMetrics;
import io.doubleface.server.internal.StrictRequestDecoder;
import io.doubleface.server.internal.Tls;
import io.doubleface.tune.LoadAdapter;
import io.doubleface.tune.TuneSettings;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.ServerChannel;
import io.netty.channel.ServerChannelRecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running mid-tier: named backends, HTTP routes (HTTP/1.1 and HTTP/2), optionally gRPC methods
 * ({@link Builder#grpc}), and an admin listener, around one {@link FanoutEngine}.
 *
 * <pre>{@code
 * FanoutServer.Builder b = FanoutServer.builder().port(8080).adminPort(9090);
 * Backend<RedisCommand<?>> cache = b.backend("cache", RedisDriver.of("redis://127.0.0.1:7201-7220"));
 * Backend<MongoCommand<?>> posts = b.backend("posts", MongoDriver.of("mongodb://127.0.0.1:7301-7304"));
 * TimelineService timeline = new TimelineService(cache, posts);
 * b.route(HttpMethod.GET, "/users/{user}/timeline", timeline, new TimelineBinding());
 * try (FanoutServer server = b.configuration("doubleface").start()) {
 *     server.switchTo("type2a-1f2b");   // or PUT /admin/config?name=type2a-1f2b
 *     ...
 * }
 * }</pre>
 *
 * <p>Loops: the I/O loops ({@code io-0 … io-(n-1)}) carry the upstream connections and, under
 * DoubleFace, the downstream ones. Each accepted connection is registered on a frontend loop of
 * the configuration active at accept time and stays there; requests on it use the configuration
 * active when they arrive. The gRPC upstream (grpc-java's {@link NettyServerBuilder}) runs on the
 * same I/O loops: its accepted connections are placed on the active frontends the same way
 * ({@link FrontendLoopGroup}), and its calls are admitted by the same engine on the connection's
 * loop ({@code directExecutor}, see {@link GrpcFanoutHandler}). The admin listener has its own loop ({@code admin-0}), so scraping
 * stats never shows up in the measured loops' counters.
 *
 * <p>Ownership: the server owns its loops; it closes a backend's driver on {@link #close()} unless
 * the builder was told not to ({@link Builder#backend(String, ShardDriver, boolean)}).
 *
 * <p>Threading: thread-safe.
 */
public final class FanoutServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FanoutServer.class);

    /** After a failed accept (e.g. out of file descriptors), accepting pauses for {@value} ms. */
    static final long ACCEPT_BACKOFF_MILLIS = 1000;

    /** Most connections accepted per read of the listening socket (Netty's default is 16): {@value}. */
    static final int ACCEPTS_PER_READ = 1024;

    /** Most concurrent calls on one gRPC upstream connection (HTTP/2 streams): {@value}. */
    public static final int GRPC_MAX_CONCURRENT_CALLS = 1024;

    /** Default per-request deadline: {@value} ms. */
    public static final long DEFAULT_DEADLINE_MS = 1000;

    private final LoopGroup io;
    private final LoopGroup admin;
    private final FanoutEngine engine;
    private final List<Backend<?>> backends;
    private final List<ShardDriver<?>> ownedDrivers;
    private final Channel listener;
    /** TLS of the HTTP listener (ALPN {@code h2} too with HTTP/2 on), or {@code null} for plain text. */
    private final SslContext httpTls;
    /** TLS of the admin listener (ALPN {@code http/1.1} only), or {@code null} for plain text. */
    private final SslContext adminTls;
    private final Server grpcServer;
    private final Channel adminListener;
    private final ServerMetrics metrics;
    private final LoadAdapter adapter;
    private final ChannelGroup connections = new DefaultChannelGroup("upstream", GlobalEventExecutor.INSTANCE);
    private volatile boolean closing;
    /** Loop knobs, applied to every loop group of the server (also those a switch starts). */
    private volatile FlushPolicy flushPolicy;
    private volatile List<Integer> pinCpus;
    /** Counted down when {@link #close()} has finished: a second {@link #stop} waits for it. */
    private final CountDownLatch terminated = new CountDownLatch(1);
    private boolean closed; // under this

    /** Default {@link Builder#http2MaxConcurrentStreams}: {@value}. */
    public static final int DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS = 256;

    /** Default most open upstream HTTP connections: {@value}. */
    public static final int DEFAULT_MAX_CONNECTIONS = 20_000;

    /** Default {@link Builder#maxQueuedBytesTotal}: {@value} bytes (256 MiB). */
    public static final long DEFAULT_MAX_QUEUED_BYTES_TOTAL = 256L << 20;

    /** Write-buffer water marks of upstream HTTP connections: 512 KiB / 1 MiB. */
    static final WriteBufferWaterMark UPSTREAM_WATER_MARK = new WriteBufferWaterMark(512 << 10, 1 << 20);

    private FanoutServer(Builder b) throws InterruptedException {
        if (b.backends.isEmpty()) {
            throw new IllegalStateException("no backend (call Builder.backend)");
        }
        if (b.routes.isEmpty() && b.grpcMethods.isEmpty()) {
            throw new IllegalStateException("nothing to serve (call Builder.route or Builder.grpcMethod)");
        }
        this.backends = List.copyOf(b.backends);
        this.ownedDrivers = List.copyOf(b.ownedDrivers);
        // TLS first: a bad certificate fails start() before any thread or port is taken
        this.httpTls = b.tlsCert == null ? null : Tls.http(b.tlsCert, b.tlsKey, b.http2);
        this.adminTls = b.tlsCert == null ? null : b.http2 ? Tls.http(b.tlsCert, b.tlsKey) : httpTls;
        SslContext grpcTls = b.tlsCert == null || b.grpcMethods.isEmpty() ? null
                : Tls.grpc(b.tlsCert, b.tlsKey);
        this.io = new LoopGroup("io", b.ioThreads, b.transport);
        LoopGroup adminGroup = null;
        FanoutEngine eng = null;
        Channel l = null;
        Server grpc = null;
        LoadAdapter tuner = null;
        try {
            this.flushPolicy = b.flushPolicy;
            this.pinCpus = b.pinCpus;
            applyLoopKnobs(io);
            ModelContext ctx = new ModelContext(io, backends, b.policy, b.queueLimit);
            ctx.onLoopGroupStarted(this::applyLoopKnobs);
            String initial = b.tune != null ? b.tune.initial() : b.configuration;
            Admission adm = b.admission;
            Function<Runnable, AdmissionLimiter> limiter = switch (adm.kind()) {
                case UNLIMITED -> null;
                case FIXED -> done -> AdmissionLimiter.fixed(adm.limit(), done);
                case ADAPTIVE -> done -> AdmissionLimiter.adaptive(adm.limit(), adm.min(),
                        adm.max(), done);
            };
            eng = new FanoutEngine(ctx, b, initial, TimeUnit.MILLISECONDS.toNanos(b.deadline.toMillis()), limiter);
            eng.stages().every(b.traceStages);
            if (b.openTelemetry != null) {
                eng.openTelemetry(OtelTracing.of(b.openTelemetry));
            }
            this.engine = eng;
            eng.prepare(b.prepare);
            if (b.tune != null) {
                tuner = LoadAdapter.attach(eng, b.tune);
            }
            this.adapter = tuner;
            List<RouteStats> routeStats = new ArrayList<>();
            if (!b.routes.isEmpty()) {
                HttpRouter router = b.routes.build();
                router.routes().forEach(r -> routeStats.add(r.stats()));
                l = bindUpstream(b, router);
            }
            if (b.grpcPort >= 0) {
                grpc = startGrpc(b, routeStats, grpcTls);
            }
            this.metrics = new ServerMetrics(eng, this::loopGroups, tuner, routeStats, backends, b.meterRegistry);
            if (b.adminPort >= 0) {
                adminGroup = new LoopGroup("admin", 1, b.transport);
                this.adminListener = bindAdmin(adminGroup, b);
            } else {
                this.adminListener = null;
            }
            this.admin = adminGroup;
            this.listener = l;
            this.grpcServer = grpc;
        } catch (RuntimeException | InterruptedException e) {
            if (grpc != null) {
                grpc.shutdownNow();
            }
            if (tuner != null) {
                tuner.close();
            }
            if (l != null) {
                l.close();
            }
            if (eng != null) {
                eng.close();
            }
            if (adminGroup != null) {
                adminGroup.close();
            }
            io.close();
            throw e;
        }
        metrics.registerLoops(); // the loops built so far; later ones on each switch
        log.info("listening on {}{} (admin {}), {} I/O loops ({}), configuration {}{}, backends {}",
                listener == null ? "" : (httpTls == null ? "http://" : "https://") + b.host + ":" + port(),
                grpcServer == null ? "" : (listener == null ? "" : " and ") + "grpc://" + b.host + ":" + grpcPort(),
                adminListener == null ? "off" : (httpTls == null ? "http://" : "https://") + b.adminHost + ":" + adminPort(),
                io.size(), io.isEpoll() ? "epoll" : "nio", engine.active().name(),
                adapter == null ? "" : " (" + b.tune.policy().label() + ", " + adapter.detector().describe() + ", "
                        + (b.tune.profile() == null ? "no profile" : "profile") + ")",
                backends);
    }

    /**
     * The listening sockets' read policy: up to {@link #ACCEPTS_PER_READ} connections per read, until
     * accept() finds the queue empty, whatever the transport's "maybe more data" test says.
     */
    static ServerChannelRecvByteBufAllocator acceptAllocator() {
        ServerChannelRecvByteBufAllocator accepts = new ServerChannelRecvByteBufAllocator();
        accepts.maxMessagesPerRead(ACCEPTS_PER_READ);
        accepts.respectMaybeMoreData(false);
        return accepts;
    }

    private Channel bindUpstream(Builder b, HttpRouter router) throws InterruptedException {
        ServerChannel server;
        try {
            server = io.serverChannelClass().getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create server channel", e);
        }
        server.config().setOption(ChannelOption.SO_BACKLOG, 1024);
        server.config().setOption(ChannelOption.SO_REUSEADDR, true);
        // A burst of new connections (a client pool opening, a balancer failing over) is taken in
        // one read of the listening socket, until accept() finds the queue empty. Netty's epoll
        // transport (level-triggered) otherwise accepts one connection per read: its "maybe more
        // data" test compares the accepted descriptor with one byte attempted. The listener shares
        // a loop with requests, and under load each iteration is long, so the last connections of
        // a few hundred waited one iteration each (docs/benchmarks.md, "The layouts users run").
        server.config().setRecvByteBufAllocator(acceptAllocator());
        server.pipeline().addLast(new Acceptor(b, router));
        io.loops().get(0).register(server).sync();
        try {
            server.bind(new InetSocketAddress(b.host, b.port)).sync();
        } catch (Exception e) {
            server.close();
            throw new IllegalStateException("cannot listen on " + b.host + ":" + b.port + ": " + e.getMessage(), e);
        }
        return server;
    }

    /**
     * Starts the gRPC upstream on the I/O loops: accepts on them (boss), registers each connection
     * on the next frontend loop of the active configuration (worker), runs calls on that loop.
     */
    private Server startGrpc(Builder b, List<RouteStats> routeStats, SslContext tls) {
        Map<String, ServerServiceDefinition.Builder> services = new LinkedHashMap<>();
        for (GrpcMethod<?, ?, ?, ?> m : b.grpcMethods) {
            routeStats.add(m.addTo(services, engine, io));
        }
        NettyServerBuilder nb = NettyServerBuilder.forAddress(new InetSocketAddress(b.host, b.grpcPort));
        for (ServerServiceDefinition.Builder sd : services.values()) {
            nb.addService(sd.build());
        }
        if (tls != null) {
            nb.sslContext(tls);
        }
        Server s = nb
                .bossEventLoopGroup(io.group())                                     // shut down by the server
                .workerEventLoopGroup(new FrontendLoopGroup(io, engine::nextFrontendLoop))
                .channelType(io.serverChannelClass())
                .withOption(ChannelOption.SO_REUSEADDR, true)
                .withOption(ChannelOption.RCVBUF_ALLOCATOR, acceptAllocator()) // bursts of connections: bindUpstream
                .withChildOption(ChannelOption.TCP_NODELAY, true)
                .directExecutor() // calls run on their connection's loop; the engine dispatches per model
                .maxConcurrentCallsPerConnection(GRPC_MAX_CONCURRENT_CALLS)
                .maxInboundMessageSize(b.limits.maxBodySize())
                .maxInboundMetadataSize(b.limits.maxHeaderSize())
                .maxConnectionIdle(b.limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .build();
        try {
            return s.start();
        } catch (IOException e) {
            s.shutdownNow();
            throw new IllegalStateException("cannot listen (grpc) on " + b.host + ":" + b.grpcPort + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Registers each accepted connection on a frontend loop of the active configuration (the
     * reason we do not use {@link ServerBootstrap}'s fixed child group).
     */
    private final class Acceptor extends ChannelInboundHandlerAdapter {
        private final HttpLimits limits;
        private final ConnectionLimits connectionLimits;
        private final HttpRouter router;
        private final int maxConnections;
        private final long maxConnectionAgeNanos;
        private final ErrorEncoder errorEncoder;
        private final long maxQueuedBytesTotal;
        /** HTTP/2 on the HTTP port, or {@code null} when {@link Builder#http2} is off. */
        private final Http2Upstream http2;

        Acceptor(Builder b, HttpRouter router) {
            this.maxQueuedBytesTotal = b.maxQueuedBytesTotal;
            this.limits = b.limits;
            this.connectionLimits = b.limits.connectionLimits();
            this.router = router;
            this.maxConnections = b.maxConnections;
            this.maxConnectionAgeNanos = b.maxConnectionAge == null ? 0 : b.maxConnectionAge.toNanos();
            this.errorEncoder = b.errorEncoder;
            this.http2 = !b.http2 ? null : new Http2Upstream(
                    () -> new HttpFanoutHandler(engine, router, connectionLimits, engine.stats(), 0, maxQueuedBytesTotal,
                            errorEncoder),
                    b.http2MaxConcurrentStreams, limits.maxInitialLineLength(), limits.maxHeaderSize(),
                    limits.idleTimeout().toMillis(), maxConnectionAgeNanos);
        }

        /** The HTTP/1.1 handlers, at the end of {@code p}; {@code h2c}: whether the first request may upgrade. */
        private void addHttp1(io.netty.channel.ChannelPipeline p, boolean h2c) {
            HttpFanoutHandler handler = new HttpFanoutHandler(engine, router, connectionLimits, engine.stats(),
                    maxConnectionAgeNanos, maxQueuedBytesTotal, errorEncoder);
            if (h2c) {
                handler.h2cUpgrade(http2);
            }
            p.addLast(Http2Upstream.HTTP1_IDLE,
                    new HttpFanoutHandler.IdleAndBytesSeen(handler, limits.idleTimeout().toMillis()));
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
            if (connections.size() >= maxConnections) {
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
                    if (httpTls != null) {
                        ch.pipeline().addLast(httpTls.newHandler(ch.alloc()));
                        if (http2 != null) { // ALPN picks HTTP/2 or HTTP/1.1 after the handshake
                            ch.pipeline().addLast(http2.alpn(p -> addHttp1(p, false)));
                            return;
                        }
                    } else if (http2 != null) {
                        // the client preface switches the connection to HTTP/2 (prior knowledge)
                        ch.pipeline().addLast(http2.prefaceDetector());
                    }
                    addHttp1(ch.pipeline(), httpTls == null && http2 != null);
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

    private Channel bindAdmin(LoopGroup group, Builder b) throws InterruptedException {
        String host = b.adminHost;
        int port = b.adminPort;
        boolean loopback = isLoopback(host);
        if (!loopback && b.adminToken == null) {
            throw new IllegalStateException("admin listener on " + host + " (not loopback) needs a token "
                    + "(Builder.adminToken, serve --admin-token-file)");
        }
        AdminHandler handler = new AdminHandler(engine, metrics, b.adminToken, !loopback)
                .knobs(new KnobsEndpoint(this::flushPolicy, this::flushPolicy, this::pinnedCpus, this::pinIoThreads,
                        engine.stages()));
        ServerBootstrap sb = new ServerBootstrap()
                .group(group.group())
                .channel(group.serverChannelClass())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (adminTls != null) {
                            ch.pipeline().addLast(adminTls.newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(
                                new IdleStateHandler(0, 0, 60, TimeUnit.SECONDS),
                                new HttpServerCodec(),
                                new HttpObjectAggregator(8192),
                                handler);
                    }
                });
        try {
            return sb.bind(host, port).sync().channel();
        } catch (Exception e) {
            throw new IllegalStateException("cannot listen (admin) on " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    private static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("admin host " + host + ": " + e.getMessage(), e);
        }
    }

    private List<LoopGroup> loopGroups() {
        List<LoopGroup> all = new ArrayList<>();
        all.add(io);
        for (ThreadingModel m : engine.models()) {
            for (LoopGroup g : m.ownLoopGroups()) {
                if (!all.contains(g)) {
                    all.add(g);
                }
            }
        }
        return all;
    }

    /**
     * Starts building a server: add backends, then routes or gRPC methods, then {@link Builder#start()}.
     *
     * @return a new builder, with every option at its default
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the bound HTTP upstream port, or -1 without HTTP routes} */
    public int port() {
        return listener == null ? -1 : ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** {@return the server's backends, in the order they were added (an unmodifiable list)} */
    public List<Backend<?>> backends() {
        return backends;
    }

    /** {@return the bound gRPC upstream port, or -1 without a gRPC upstream} */
    public int grpcPort() {
        return grpcServer == null ? -1 : grpcServer.getPort();
    }

    /** {@return the bound admin port, or -1 if the admin listener is off} */
    public int adminPort() {
        return adminListener == null ? -1 : ((InetSocketAddress) adminListener.localAddress()).getPort();
    }

    /** {@return the admin listener's bound address, or {@code null} if it is off} */
    public InetSocketAddress adminAddress() {
        return adminListener == null ? null : (InetSocketAddress) adminListener.localAddress();
    }

    /**
     * Traces the stages of one request in {@code oneIn} from now on (0 = off, 1 = all); see
     * {@link Builder#traceStages}. Figures gathered so far are kept. Over the admin listener:
     * {@code PUT /admin/knobs?trace-stages=off|all|sampled:N}.
     *
     * @param oneIn trace one request in this many; 0 = off
     * @throws IllegalArgumentException if {@code oneIn < 0}
     */
    public void traceStages(int oneIn) {
        engine.stages().every(oneIn);
    }

    /**
     * Forgets the stage figures gathered so far, so that {@code /admin/stats} and the {@code /metrics}
     * stage summaries cover only what is traced from now on — one window (docs/tracing.md). A
     * request being recorded at this moment may count in some stages' old figures and others' new
     * ones. Does not stall a warm server (the histograms are emptied in place). Over the admin
     * listener: {@code PUT /admin/knobs?reset-stages=true}.
     */
    public void resetStages() {
        engine.stages().reset();
    }

    // ---- loop knobs: flush policy, CPU pinning -------------------------------------------

    /** Applies the flush policy and the pinning to {@code g}'s loops (a new group, or all on a change). */
    private void applyLoopKnobs(LoopGroup g) {
        FlushPolicy f = flushPolicy;
        for (io.netty.channel.EventLoop loop : g.loops()) {
            LoopFlush.set(loop, f);
        }
        List<Integer> cpus = pinCpus;
        if (cpus != null || g.pinned() != null) {
            g.pin(cpus);
        }
    }

    /**
     * Sets the downstream flush policy of every loop of this server from now on (see
     * {@link Builder#flushPolicy}); calls waiting in a batch are flushed by its timer, so none is
     * stranded by the switch.
     *
     * @param policy the policy, not {@code null}
     */
    public synchronized void flushPolicy(FlushPolicy policy) {
        this.flushPolicy = Objects.requireNonNull(policy, "policy");
        for (LoopGroup g : loopGroups()) {
            for (io.netty.channel.EventLoop loop : g.loops()) {
                LoopFlush.set(loop, policy);
            }
        }
        log.info("flush policy: {}", policy);
    }

    /** {@return the downstream flush policy of this server's loops} */
    public FlushPolicy flushPolicy() {
        return flushPolicy;
    }

    /**
     * Pins the I/O loops (and the loops a configuration adds: Type-2a backend loops, Type-2b reactors)
     * to CPUs, or unpins them: loop {@code i} of each group to {@code cpus.get(i % cpus.size())} (see
     * {@link Builder#pinIoThreads}). Returns when every loop has pinned itself.
     *
     * @param cpus the CPUs, or {@code null} to unpin
     * @throws IllegalArgumentException if the kernel refuses a CPU
     * @throws UnsupportedOperationException if this is not Linux
     */
    public synchronized void pinIoThreads(List<Integer> cpus) {
        if (cpus != null && cpus.isEmpty()) {
            throw new IllegalArgumentException("pinIoThreads: empty CPU list (expected: 1 or more, or null to unpin)");
        }
        List<Integer> list = cpus == null ? null : List.copyOf(cpus);
        this.pinCpus = list;
        for (LoopGroup g : loopGroups()) {
            g.pin(list);
        }
    }

    /** {@return the CPUs the loops are pinned to, or {@code null} if they are not} */
    public List<Integer> pinnedCpus() {
        return pinCpus;
    }

    // ---- end of loop knobs ---------------------------------------------------------------------

    /**
     * Switches the active configuration (see {@link FanoutEngine#switchTo}). Requests admitted from now
     * on use it; requests in flight finish under theirs.
     *
     * @param configuration a configuration name, e.g. {@code type2a-1f2b}; see
     *     {@link io.doubleface.model.Configuration}
     * @return the canonical name of the now active configuration
     * @throws IllegalArgumentException if the name is invalid or does not fit this server
     */
    public String switchTo(String configuration) {
        String name = engine.switchTo(configuration);
        metrics.registerLoops();
        return name;
    }

    /**
     * Switches the active configuration, given as a typed value (e.g.
     * {@code new Configuration.Type2a(1, 2, 0, false, null)}); otherwise as {@link #switchTo(String)}.
     *
     * @param configuration the configuration, not {@code null}
     * @return the canonical name of the now active configuration
     * @throws IllegalArgumentException if it does not fit this server (e.g. more frontend loops than
     *     I/O loops)
     */
    public String switchTo(Configuration configuration) {
        return switchTo(Objects.requireNonNull(configuration, "configuration").name());
    }

    /**
     * {@return whether the server is ready for traffic: every backend's clients of the active
     * configuration have connected to every shard on every loop (warm start, see
     * {@link io.doubleface.driver.LoopClient#connect()}), and no drain has started. What the admin
     * listener's {@code /ready} answers}
     *
     * <p>Readiness covers the first connections: once connected, a shard lost later does not make
     * the server unready (the drivers reconnect on use, and one shard's outage must not take the
     * whole mid-tier out of rotation); only a drain does.
     */
    public boolean isReady() {
        return !closing && !engine.isDraining() && engine.isConnected();
    }

    /**
     * Waits until the server is ready ({@link #isReady()}): every client of the active
     * configuration connected to every shard. The clients start connecting when the server starts
     * (and when a configuration is prepared or switched to); this only waits for them.
     *
     * @param timeout how long to wait, not {@code null}
     * @throws TimeoutException if not ready in time; its message names every backend and loop
     *     still connecting, with the shard, address and cause of the last failed attempt
     * @throws IllegalStateException if the server is draining or closed
     * @throws InterruptedException if the calling thread is interrupted while waiting
     */
    public void awaitReady(Duration timeout) throws InterruptedException, TimeoutException {
        long end = System.nanoTime() + Objects.requireNonNull(timeout, "timeout").toNanos();
        for (;;) {
            if (closing || engine.isDraining()) {
                throw new IllegalStateException("the server is " + (closing ? "closed" : "draining")
                        + ": it will not be ready again");
            }
            if (engine.isConnected()) {
                return;
            }
            try {
                engine.whenConnected().get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("waiting for the connections failed", e.getCause());
            } catch (TimeoutException e) {
                if (engine.isConnected()) {
                    return;
                }
                List<String> waiting = new ArrayList<>();
                for (FanoutEngine.Waiting w : engine.waiting()) {
                    waiting.add(w.toString());
                }
                throw new TimeoutException("not ready after " + timeout.toMillis() + " ms: "
                        + waiting.size() + " clients of configuration " + engine.active().name()
                        + " not connected: " + String.join("; ", waiting));
            }
        }
    }

    /** {@return the configuration requests admitted now run under} */
    public Configuration configuration() {
        return engine.active();
    }

    /** {@return how many I/O loops the server runs (the builder's {@link Builder#ioThreads})} */
    public int ioThreads() {
        return io.size();
    }

    /**
     * {@return the transport the I/O loops use: {@link LoopGroup.Transport#EPOLL} or
     * {@link LoopGroup.Transport#NIO}, never {@code AUTO} (what {@code AUTO} chose)}
     */
    public LoopGroup.Transport transport() {
        return io.isEpoll() ? LoopGroup.Transport.EPOLL : LoopGroup.Transport.NIO;
    }

    // Not API: the server's parts, for doubleface's own tools and tests through
    // io.doubleface.server.internal.tools.ServerInternals (which reaches them by a private lookup, so
    // that no public method hands out an internal type) and for this package's tests.

    /** The engine that admits and runs this server's requests. */
    FanoutEngine engine() {
        return engine;
    }

    /** The load adapter, or {@code null} if the server runs a static configuration. */
    LoadAdapter adapter() {
        return adapter;
    }

    /** The I/O loops, owned by this server. */
    LoopGroup ioLoops() {
        return io;
    }

    /** {@return the {@code /admin/stats} document (JSON)} */
    public String statsJson() {
        return metrics.statsJson();
    }

    /**
     * Stops gracefully: {@link #stop(Duration, Duration)} with no delay.
     *
     * @param grace how long requests in flight may take to finish, not {@code null}; zero or negative
     *     closes at once
     */
    public void stop(Duration grace) {
        stop(Duration.ZERO, grace);
    }

    /**
     * Stops gracefully. At once the admin listener's {@code /ready} answers {@code 503} and every
     * answer carries {@code Connection: close}; for {@code delay} the server still accepts and
     * serves, so a balancer or Kubernetes that polls {@code /ready} takes it out of rotation before
     * any connection is refused. Then it stops accepting (HTTP listener closed, gRPC {@code GOAWAY}),
     * the load adapter stops switching, idle connections close, a request still arriving on an open
     * connection is served and its answer closes the connection, and the requests in flight finish
     * — each connection closes after its last answer — for up to {@code grace}; then
     * {@link #close()}. Returns when closed. Idempotent; {@code close()} alone drops what is in
     * flight.
     *
     * @param delay how long to keep accepting after {@code /ready} turned {@code 503}, not
     *     {@code null}; zero or negative: none
     * @param grace how long requests in flight may take to finish once the listener is closed, not
     *     {@code null}; zero or negative closes at once
     */
    public void stop(Duration delay, Duration grace) {
        Objects.requireNonNull(delay, "delay");
        Objects.requireNonNull(grace, "grace");
        boolean first;
        synchronized (this) {
            first = !closing && !engine.isDraining();
            if (first) {
                engine.startDrain();
            }
        }
        if (!first) {
            awaitTerminated(); // another stop (or close) is under way: return when it is done
            return;
        }
        if (delay.toNanos() > 0) {
            log.info("draining: /ready answers 503; still accepting for {} ms", delay.toMillis());
            try {
                Thread.sleep(delay.toMillis(), (int) (delay.toNanos() % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long end = System.nanoTime() + grace.toNanos();
        log.info("draining: {} requests in flight, grace {} ms", engine.inFlight(), grace.toMillis());
        if (adapter != null) {
            adapter.close();
        }
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        if (grpcServer != null) {
            grpcServer.shutdown(); // GOAWAY: open calls finish, new ones go elsewhere
        }
        for (Channel ch : connections) {
            ch.eventLoop().execute(() -> ch.pipeline().fireUserEventTriggered(HttpFanoutHandler.DRAIN));
        }
        try {
            // until every request is answered and every connection has written its last answer
            // and closed (an answer is written after its request leaves the engine's count)
            while ((engine.inFlight() > 0 || !connections.isEmpty()) && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            if (grpcServer != null) {
                grpcServer.awaitTermination(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long left = engine.inFlight();
        if (left > 0 || !connections.isEmpty()) {
            log.warn("grace of {} ms over with {} requests in flight, {} connections open; closing", grace.toMillis(),
                    left, connections.size());
        } else {
            log.info("drained");
        }
        close();
    }

    /**
     * Stops listening, closes models, connections and loops; closes the drivers it owns. Requests in
     * flight are dropped (their clients see the connection close): {@link #stop(Duration)} lets
     * them finish first.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closing = true;
        if (adapter != null) {
            adapter.close();
        }
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        if (grpcServer != null) {
            grpcServer.shutdownNow(); // ends open calls with CANCELLED / UNAVAILABLE
            try {
                grpcServer.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        if (adminListener != null) {
            adminListener.close().syncUninterruptibly();
        }
        engine.close();
        for (ShardDriver<?> d : ownedDrivers) {
            try {
                d.close();
            } catch (RuntimeException e) {
                log.warn("closing driver {} failed", d.describe(), e);
            }
        }
        if (admin != null) {
            admin.close();
        }
        io.close();
        terminated.countDown();
    }

    private void awaitTerminated() {
        try {
            terminated.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Server options; every one has a documented default. Not thread-safe. */
    public static final class Builder {
        private final List<Backend<?>> backends = new ArrayList<>();
        private final List<ShardDriver<?>> ownedDrivers = new ArrayList<>();
        private final HttpRouter.Builder routes = new HttpRouter.Builder();
        private final List<GrpcMethod<?, ?, ?, ?>> grpcMethods = new ArrayList<>();
        private String host = "127.0.0.1";
        private int port = 8080;
        private int adminPort = -1;
        private String adminHost = "127.0.0.1";
        private String adminToken;
        private Path tlsCert;
        private Path tlsKey;
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private Duration maxConnectionAge;
        private ErrorEncoder errorEncoder = ErrorEncoder.plainText();
        private long maxQueuedBytesTotal = DEFAULT_MAX_QUEUED_BYTES_TOTAL;
        private MeterRegistry meterRegistry;
        private int traceStages;
        private FlushPolicy flushPolicy = FlushPolicy.PER_ITERATION;
        private List<Integer> pinCpus;
        private Object openTelemetry; // an io.opentelemetry.api.OpenTelemetry: Object, so the API is optional
        private int ioThreads = Runtime.getRuntime().availableProcessors();
        private LoopGroup.Transport transport = LoopGroup.Transport.AUTO;
        private String configuration = "doubleface";
        private Supplier<? extends SchedulingPolicy> policy = SchedulingPolicy.factory("completion-first");
        private Duration deadline = Duration.ofMillis(DEFAULT_DEADLINE_MS);
        private HttpLimits limits = HttpLimits.DEFAULTS;
        private int queueLimit = ModelContext.DEFAULT_QUEUE_LIMIT;
        private Admission admission = Admission.unlimited();
        private int grpcPort = -1;
        private TuneSettings tune;
        private List<String> prepare = List.of();
        private boolean http2 = true;
        private int http2MaxConcurrentStreams = DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS;

        private Builder() {}

        /**
         * Adds a backend: {@code driver} over its own shard list, under {@code name}. The server
         * closes the driver when it stops.
         *
         * @param <C> the driver's command type: the commands the backend accepts
         * @param name unique among this server's backends; used in logs, stats and failure messages
         * @param driver the driver, not {@code null}
         * @return the handle services pass to {@link io.doubleface.api.FanoutPlan#call}
         * @throws IllegalArgumentException if the name is empty or taken
         */
        public <C extends Command<?>> Backend<C> backend(String name, ShardDriver<C> driver) {
            return backend(name, driver, true);
        }

        /**
         * Adds a backend, as {@link #backend(String, ShardDriver)}; {@code closeOnStop}: whether the
         * server closes the driver when it stops (pass {@code false} to share one driver).
         *
         * @param <C> the driver's command type: the commands the backend accepts
         * @param name unique among this server's backends; used in logs, stats and failure messages
         * @param driver the driver, not {@code null}
         * @param closeOnStop whether the server closes {@code driver} when it stops
         * @return the handle services pass to {@link io.doubleface.api.FanoutPlan#call}
         * @throws IllegalArgumentException if the name is empty or taken
         */
        public <C extends Command<?>> Backend<C> backend(String name, ShardDriver<C> driver, boolean closeOnStop) {
            Objects.requireNonNull(driver, "driver");
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("backend name: '" + name + "' (expected: non-empty)");
            }
            for (Backend<?> b : backends) {
                if (b.name().equals(name)) {
                    throw new IllegalArgumentException("backend name: '" + name + "' is taken");
                }
            }
            Backend<C> b = new Backend<>(name, backends.size(), driver, this);
            backends.add(b);
            if (closeOnStop) {
                ownedDrivers.add(driver);
            }
            return b;
        }

        /**
         * Serves {@code service} on HTTP {@code method} and {@code pattern}: literal segments and
         * whole-segment variables, e.g. {@code /users/{user}/timeline} (read them with
         * {@link io.doubleface.api.HttpRequestView#pathParam}). A path no route matches gets
         * {@code 404}; a path matched only with other methods, {@code 405} with {@code Allow}.
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param method the HTTP method
         * @param pattern the path pattern, starting with {@code /}; no empty segments, each variable
         *     named once
         * @param service the service that runs the route's requests
         * @param binding decodes the route's requests and encodes their responses
         * @return this builder
         * @throws IllegalArgumentException for a malformed pattern, a route added twice, or
         *     {@code HEAD}, {@code CONNECT} or {@code TRACE} (answers to them follow rules of
         *     their own that a fanout route has no use for)
         */
        public <Q, R> Builder route(HttpMethod method, String pattern, FanoutService<Q, ?, R> service,
                HttpBinding<Q, R> binding) {
            if (HttpMethod.HEAD.equals(method) || HttpMethod.CONNECT.equals(method) || HttpMethod.TRACE.equals(method)) {
                throw new IllegalArgumentException("route " + method + " " + pattern + ": " + method
                        + " routes are not supported (use GET, POST, PUT, DELETE or PATCH)");
            }
            routes.add(method, pattern, service, binding);
            return this;
        }

        /**
         * {@link #route} with {@code GET}.
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param pattern the path pattern, as for {@link #route}
         * @param service the service that runs the route's requests
         * @param binding decodes the route's requests and encodes their responses
         * @return this builder
         * @throws IllegalArgumentException for a malformed pattern or a route added twice
         */
        public <Q, R> Builder get(String pattern, FanoutService<Q, ?, R> service, HttpBinding<Q, R> binding) {
            return route(HttpMethod.GET, pattern, service, binding);
        }

        /**
         * {@link #route} with {@code POST}.
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param pattern the path pattern, as for {@link #route}
         * @param service the service that runs the route's requests
         * @param binding decodes the route's requests and encodes their responses
         * @return this builder
         * @throws IllegalArgumentException for a malformed pattern or a route added twice
         */
        public <Q, R> Builder post(String pattern, FanoutService<Q, ?, R> service, HttpBinding<Q, R> binding) {
            return route(HttpMethod.POST, pattern, service, binding);
        }

        /**
         * Sets the address to listen on, for HTTP and gRPC; default {@code 127.0.0.1}.
         *
         * @param host a host name or IP address, not {@code null}; e.g. {@code 0.0.0.0} for every interface
         * @return this builder
         */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /**
         * Sets the HTTP upstream port; default 8080.
         *
         * @param port {@code 0 .. 65535}; 0 = any free port (read it with {@link FanoutServer#port()})
         * @return this builder
         * @throws IllegalArgumentException if {@code port} is out of range
         */
        public Builder port(int port) {
            this.port = checkPort("port", port);
            return this;
        }

        /**
         * Starts a gRPC upstream on {@code port} (0 = any free port) serving the methods added with
         * {@link #grpcMethod}, on the same I/O loops and through the same engine as HTTP (default: no
         * gRPC upstream). Request messages are limited by {@link HttpLimits#maxBodySize()}, headers
         * by {@link HttpLimits#maxHeaderSize()}, idle connections by {@link HttpLimits#idleTimeout()}.
         *
         * @param port {@code 0 .. 65535}; 0 = any free port (read it with {@link FanoutServer#grpcPort()})
         * @return this builder
         * @throws IllegalArgumentException if {@code port} is out of range
         */
        public Builder grpc(int port) {
            this.grpcPort = checkPort("grpcPort", port);
            return this;
        }

        /**
         * {@link #grpc(int)} and {@link #grpcMethod} in one call.
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param port the gRPC port, {@code 0 .. 65535}; 0 = any free port
         * @param service the service that runs the method's calls
         * @param binding the unary method, and how to decode its requests and encode its replies
         * @return this builder
         * @throws IllegalArgumentException if the port is out of range, or the method is not unary or
         *     was added already
         */
        public <Q, R> Builder grpc(int port, FanoutService<Q, ?, R> service, GrpcBinding<Q, R, ?, ?> binding) {
            return grpc(port).grpcMethod(service, binding);
        }

        /**
         * Serves {@code service} on the unary gRPC method of {@code binding} (methods of several
         * services of the user's {@code .proto} files may be added; each method once).
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param service the service that runs the method's calls
         * @param binding the unary method, and how to decode its requests and encode its replies
         * @return this builder
         * @throws IllegalArgumentException if the method is not unary or was added already
         */
        public <Q, R> Builder grpcMethod(FanoutService<Q, ?, R> service, GrpcBinding<Q, R, ?, ?> binding) {
            GrpcMethod<Q, R, ?, ?> m = GrpcMethod.of(service, binding);
            for (GrpcMethod<?, ?, ?, ?> o : grpcMethods) {
                if (o.fullName().equals(m.fullName())) {
                    throw new IllegalArgumentException("grpc method " + m.fullName() + " added twice");
                }
            }
            grpcMethods.add(m);
            return this;
        }

        /**
         * Address of the admin listener (default {@code 127.0.0.1}, whatever {@link #host} says). Any
         * other than a loopback address needs an {@link #adminToken}, which every admin request must
         * then carry.
         *
         * @param host a host name or IP address, not {@code null}
         * @return this builder
         */
        public Builder adminHost(String host) {
            this.adminHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /**
         * Serves HTTP, gRPC and the admin listener over TLS with this certificate chain and private
         * key (PEM files; the key PKCS#8, unencrypted). OpenSSL (BoringSSL) is used when
         * {@code io.netty:netty-tcnative-boringssl-static} is on the class path, the JDK's TLS
         * otherwise; ALPN offers {@code h2} and {@code http/1.1} (HTTP; {@code http/1.1} alone with
         * {@link #http2} off or on the admin listener) and {@code h2} (gRPC). The handshake must
         * finish within Netty's default 10 s. Default: plain text. The files are read when the
         * server starts: a missing or malformed file fails {@link #start()} with the file named.
         *
         * @param certificateChainPem the server certificate first, then its intermediates
         * @param privateKeyPem the certificate's private key
         * @return this builder
         */
        public Builder tls(Path certificateChainPem, Path privateKeyPem) {
            this.tlsCert = Objects.requireNonNull(certificateChainPem, "certificateChainPem");
            this.tlsKey = Objects.requireNonNull(privateKeyPem, "privateKeyPem");
            return this;
        }

        /**
         * Serves HTTP/2 on the HTTP port next to HTTP/1.1 (default: on): in plain text a connection
         * that starts with the HTTP/2 client preface (prior knowledge, {@code curl
         * --http2-prior-knowledge}) or whose first request asks for {@code Upgrade: h2c} (a request
         * with a body is answered over HTTP/1.1 instead); with {@link #tls} a connection whose client
         * chose {@code h2} by ALPN. The same routes, limits ({@link HttpLimits}) and error answers
         * ({@link #errorEncoder}) as HTTP/1.1; each stream runs on its connection's loop. See
         * docs/http2.md.
         *
         * @param on {@code false} for HTTP/1.1 only (ALPN then offers {@code http/1.1} alone)
         * @return this builder
         */
        public Builder http2(boolean on) {
            this.http2 = on;
            return this;
        }

        /**
         * Most streams a client may have open at once on one HTTP/2 connection ({@code
         * SETTINGS_MAX_CONCURRENT_STREAMS}); default {@value FanoutServer#DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS}.
         * It plays the part {@link HttpLimits#maxPipelined()} plays for HTTP/1.1.
         *
         * @param n streams, {@code 1 .. 2^31-1}
         * @return this builder
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Builder http2MaxConcurrentStreams(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("http2MaxConcurrentStreams: " + n + " (expected: >= 1)");
            }
            this.http2MaxConcurrentStreams = n;
            return this;
        }

        /**
         * The admin credential: with it, {@code PUT /admin/config} (and every admin request when the
         * listener is not on loopback) needs {@code Authorization: Bearer <token>}, else {@code 401}.
         * At least 16 characters. Default: none (loopback only; state changes by local {@code PUT}).
         *
         * @param token the token, at least 16 characters after stripping surrounding white space
         *     (which is dropped); {@code null} for none
         * @return this builder
         * @throws IllegalArgumentException if the token is shorter than 16 characters
         */
        public Builder adminToken(String token) {
            if (token != null && token.strip().length() < 16) {
                throw new IllegalArgumentException("adminToken: " + token.strip().length()
                        + " characters (expected: at least 16)");
            }
            this.adminToken = token == null ? null : token.strip();
            return this;
        }

        /**
         * Most open upstream HTTP connections (default {@value FanoutServer#DEFAULT_MAX_CONNECTIONS});
         * one more is closed as soon as it is accepted and counted ({@code connections_refused} in
         * {@code /admin/stats}). Keep it below the process's file-descriptor limit.
         *
         * @param n most open connections, {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Builder maxConnections(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxConnections: " + n + " (expected: > 0)");
            }
            this.maxConnections = n;
            return this;
        }

        /**
         * Most response bytes the whole server holds for HTTP clients that are behind (default
         * {@value FanoutServer#DEFAULT_MAX_QUEUED_BYTES_TOTAL}, 256 MiB). A client is behind while
         * its connection holds more unread bytes than the high water mark (1 MiB); past this bound
         * the connection whose answer would go over is closed as a slow reader (counted in
         * {@code /admin/stats} {@code connections.slow_readers_closed_server_bound}), so many
         * clients that each stay under {@link HttpLimits#maxQueuedBytes()} cannot together exhaust
         * direct memory. Connections that keep up hold less than the high water mark each: the
         * whole server's queued bytes stay under this bound plus one high water mark per connection
         * ({@link #maxConnections}). gRPC upstream calls are bounded by HTTP/2 flow control and
         * the most concurrent streams per connection.
         *
         * @param bytes the bound, {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code bytes < 1}
         */
        public Builder maxQueuedBytesTotal(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxQueuedBytesTotal: " + bytes + " (expected: > 0)");
            }
            this.maxQueuedBytesTotal = bytes;
            return this;
        }

        /**
         * Sends OpenTelemetry spans: one {@code SERVER} span per upstream request (HTTP route or
         * gRPC method; its parent read from the request's W3C {@code traceparent} and
         * {@code tracestate} headers or metadata by {@code otel}'s propagators), with events
         * {@code planned} and {@code merged}, and one {@code CLIENT} child span per shard call
         * (backend, shard and round as attributes; an error status with the reason when the call
         * failed). Default: none, and then no OpenTelemetry class is loaded — the
         * {@code io.opentelemetry:opentelemetry-api} dependency is optional. Give it the
         * {@code OpenTelemetry} your application configures (an SDK with an OTLP exporter to Jaeger
         * or any collector: docs/tracing.md). The shard calls themselves do not carry the trace
         * context to the shards.
         *
         * @param otel the OpenTelemetry instance, or {@code null} for none
         * @return this builder
         */
        public Builder openTelemetry(io.opentelemetry.api.OpenTelemetry otel) {
            this.openTelemetry = otel;
            return this;
        }

        /**
         * How shard connections of pipelined drivers (KV, native RESP, the YCSB OP_MSG driver) are
         * flushed: at the end of each loop iteration (the default, {@link FlushPolicy#PER_ITERATION}),
         * per call, or in batches bounded by a count and a delay (docs/tracing.md, "Knobs"). Switch it
         * at run time with {@link FanoutServer#flushPolicy(FlushPolicy)}.
         *
         * @param policy the policy, not {@code null}
         * @return this builder
         */
        public Builder flushPolicy(FlushPolicy policy) {
            this.flushPolicy = Objects.requireNonNull(policy, "flushPolicy");
            return this;
        }

        /**
         * Pins loop {@code i} of the I/O group (and of the groups a configuration adds) to CPU
         * {@code cpus.get(i % cpus.size())} with {@code sched_setaffinity} (Linux; docs/tracing.md,
         * "Knobs"). Default: not pinned. Switch at run time with {@link FanoutServer#pinIoThreads}.
         *
         * @param cpus the CPUs, at least one, or {@code null} for no pinning
         * @return this builder
         * @throws IllegalArgumentException if {@code cpus} is empty
         */
        public Builder pinIoThreads(List<Integer> cpus) {
            if (cpus != null && cpus.isEmpty()) {
                throw new IllegalArgumentException("pinIoThreads: empty CPU list (expected: 1 or more, or null)");
            }
            this.pinCpus = cpus == null ? null : List.copyOf(cpus);
            return this;
        }

        /**
         * Traces the stages of one request in {@code oneIn} (1 = every request; 0, the default, =
         * off, which costs one branch per request): the time from admission to the plan (the hop
         * to the planning thread), the plan, the first reply, the last reply, the merge, and the
         * whole request, per configuration, with mean, standard deviation, C² and percentiles in
         * {@code /admin/stats} under {@code stages} (the variability method of "Where the tail
         * comes from"; docs/tracing.md). Switch it at run time with {@link FanoutServer#traceStages}.
         *
         * @param oneIn trace one request in this many; 0 = off, 1 = all
         * @return this builder
         * @throws IllegalArgumentException if {@code oneIn < 0}
         */
        public Builder traceStages(int oneIn) {
            if (oneIn < 0) {
                throw new IllegalArgumentException("traceStages: " + oneIn + " (expected: 0 = off, 1 = all, N)");
            }
            this.traceStages = oneIn;
            return this;
        }

        /**
         * Also registers every doubleface meter (requests by outcome, per-route latency, loops,
         * admission, backends' resilience, …) in the application's registry, so they leave with the
         * application's own metrics (Prometheus, OTLP, JMX, whatever it has configured). The admin
         * {@code /metrics} endpoint serves them either way, in Prometheus text, plus the active
         * configuration and per-thread-group CPU and context switches, which are only there.
         * Default: none.
         *
         * @param registry the application's registry, or {@code null} for none
         * @return this builder
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meterRegistry = registry;
            return this;
        }

        /**
         * The bodies of the HTTP answers the framework makes itself — {@code 400}, {@code 404},
         * {@code 405}, {@code 408}, {@code 413}, {@code 414}, {@code 431}, {@code 500}, {@code 503},
         * {@code 504} — (default {@link ErrorEncoder#plainText()}; {@link ErrorEncoder#json()},
         * {@link ErrorEncoder#problemDetails()} or your own). gRPC calls carry the same message as
         * their status description.
         *
         * @param encoder the encoder, not {@code null}
         * @return this builder
         */
        public Builder errorEncoder(ErrorEncoder encoder) {
            this.errorEncoder = Objects.requireNonNull(encoder, "encoder");
            return this;
        }

        /**
         * Most time an upstream HTTP connection lives (default: no limit): after it, the first answer
         * that leaves nothing in flight on the connection carries {@code Connection: close} and the
         * connection closes, so clients reconnect (and spread over new instances behind a balancer).
         *
         * @param age the most time, {@code > 0}; {@code null} for no limit
         * @return this builder
         * @throws IllegalArgumentException if {@code age} is zero or negative
         */
        public Builder maxConnectionAge(Duration age) {
            if (age != null && (age.isNegative() || age.isZero())) {
                throw new IllegalArgumentException("maxConnectionAge: " + age + " (expected: > 0, or null for none)");
            }
            this.maxConnectionAge = age;
            return this;
        }

        /**
         * Sets the admin port; default: no admin listener.
         *
         * @param port {@code 0 .. 65535}; 0 = any free port (read it with {@link FanoutServer#adminPort()});
         *     negative = no admin listener
         * @return this builder
         * @throws IllegalArgumentException if {@code port > 65535}
         */
        public Builder adminPort(int port) {
            this.adminPort = port < 0 ? -1 : checkPort("adminPort", port);
            return this;
        }

        /**
         * Sets the number of I/O loops; default: the number of CPUs.
         *
         * @param n the number of I/O loops, {@code 1 .. 1024}
         * @return this builder
         * @throws IllegalArgumentException if {@code n} is out of range
         */
        public Builder ioThreads(int n) {
            if (n < 1 || n > 1024) {
                throw new IllegalArgumentException("ioThreads: " + n + " (expected: 1..1024)");
            }
            this.ioThreads = n;
            return this;
        }

        /**
         * Sets the transport of all loops; default {@link LoopGroup.Transport#AUTO}: epoll if available.
         *
         * @param transport the transport, not {@code null}
         * @return this builder
         */
        public Builder transport(LoopGroup.Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /**
         * Sets the initial configuration; default {@code doubleface}. Ignored with {@link #adaptive}.
         *
         * @param name a configuration name, e.g. {@code type2a-1f2b}; see {@link io.doubleface.model.Configuration}
         * @return this builder
         * @throws IllegalArgumentException if the name is not a valid configuration
         */
        public Builder configuration(String name) {
            Configuration.parse(name); // fail fast
            this.configuration = name;
            return this;
        }

        /**
         * Sets the initial configuration as a typed value, e.g. {@code Configuration.DoubleFace.of()}
         * or {@code new Configuration.Type1(0, 16, false)}. Ignored with {@link #adaptive}.
         *
         * @param configuration the configuration, not {@code null}
         * @return this builder
         */
        public Builder configuration(Configuration configuration) {
            this.configuration = Objects.requireNonNull(configuration, "configuration").name();
            return this;
        }

        /**
         * Sets the DoubleFace scheduling policy of configurations that name none; default
         * {@code completion-first}.
         *
         * @param policy {@code fifo}, {@code completion-first} (alias {@code cf}) or
         *     {@code completion-first-arrival} (alias {@code cfa}); case-insensitive
         * @return this builder
         * @throws IllegalArgumentException if the policy is unknown
         */
        public Builder policy(String policy) {
            this.policy = SchedulingPolicy.factory(policy);
            return this;
        }

        /**
         * Sets your own DoubleFace scheduling policy for configurations that name none: the order in
         * which each loop processes the replies of one iteration. The factory is called once per loop
         * (an instance is used by that loop's thread only) each time a DoubleFace configuration is
         * built, so instances may keep scratch state without synchronisation.
         *
         * @param factory makes one policy per loop; must not return {@code null}
         * @return this builder
         */
        public Builder policy(Supplier<? extends SchedulingPolicy> factory) {
            this.policy = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /**
         * Sets the per-request deadline, over all rounds; default {@value #DEFAULT_DEADLINE_MS} ms. A request
         * not answered by then gets {@code 504} (gRPC {@code DEADLINE_EXCEEDED}).
         *
         * @param deadline the deadline, at least 1 ms (used with millisecond precision)
         * @return this builder
         * @throws IllegalArgumentException if {@code deadline} is {@code null} or under 1 ms
         */
        public Builder deadline(Duration deadline) {
            if (deadline == null || deadline.toMillis() < 1) {
                throw new IllegalArgumentException("deadline: " + deadline + " (expected: >= 1 ms)");
            }
            this.deadline = deadline;
            return this;
        }

        /**
         * Sets the HTTP limits (some also bound the gRPC upstream, see {@link #grpc(int)}); default
         * {@link HttpLimits#DEFAULTS}.
         *
         * @param limits the limits, not {@code null}
         * @return this builder
         */
        public Builder limits(HttpLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * Sets admission control (load shedding): how many requests may be in flight before new
         * ones are refused at once with {@code 503} and {@code Retry-After: 1} (gRPC
         * {@code RESOURCE_EXHAUSTED}); default {@link Admission#unlimited()}. On a network, set
         * {@link Admission#fixed(int)} or {@link Admission#adaptive()}: without a limit an
         * overload shows as queueing and late answers instead of fast refusals.
         *
         * @param admission the setting, not {@code null}
         * @return this builder
         */
        public Builder admission(Admission admission) {
            this.admission = Objects.requireNonNull(admission, "admission");
            return this;
        }

        /**
         * Sets the bound of each worker pool's queue; default {@value ModelContext#DEFAULT_QUEUE_LIMIT}. A
         * request that finds the queue full gets {@code 503}.
         *
         * @param n queued requests per pool, {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Builder queueLimit(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("queueLimit: " + n + " (expected: > 0)");
            }
            this.queueLimit = n;
            return this;
        }

        /**
         * Runs the load adapter ({@link LoadAdapter}) instead of a static configuration: the
         * server starts in the adapter's initial configuration and the adapter switches from
         * there; {@link #configuration} is ignored. Default: off.
         *
         * @param settings the adapter's settings; {@code null} turns the adapter off again
         * @return this builder
         */
        public Builder adaptive(TuneSettings settings) {
            this.tune = settings;
            return this;
        }

        /**
         * Configurations to build at start, parked, so that switching to them later creates no
         * thread (default: none — a configuration is then built on its first switch).
         *
         * @param configurations configuration names (see {@link io.doubleface.model.Configuration}), not
         *     {@code null}; replaces the list given before
         * @return this builder
         * @throws IllegalArgumentException if a name is not a valid configuration
         */
        public Builder prepare(List<String> configurations) {
            for (String c : configurations) {
                Configuration.parse(c); // fail fast
            }
            this.prepare = List.copyOf(configurations);
            return this;
        }

        /**
         * Configurations to build at start, parked, given as typed values; otherwise as
         * {@link #prepare(List)}.
         *
         * @param configurations the configurations; replaces the list given before
         * @return this builder
         */
        public Builder prepare(Configuration... configurations) {
            List<String> names = new ArrayList<>();
            for (Configuration c : configurations) {
                names.add(Objects.requireNonNull(c, "configuration").name());
            }
            this.prepare = List.copyOf(names);
            return this;
        }

        private static int checkPort(String what, int p) {
            if (p < 0 || p > 65535) {
                throw new IllegalArgumentException(what + ": " + p + " (expected: 0..65535)");
            }
            return p;
        }

        /**
         * Starts loops, models and listeners.
         *
         * @return the running server; the caller closes it ({@link FanoutServer#close()} or
         *     {@link FanoutServer#stop(Duration)})
         * @throws IllegalStateException if no backend was added, neither a route nor a gRPC method was
         *     added, or a port cannot be bound
         * @throws IllegalArgumentException if the configuration does not fit (e.g. too many frontends)
         */
        public FanoutServer start() {
            try {
                return new FanoutServer(this);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting", e);
            }
        }
    }
}
