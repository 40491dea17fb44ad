package io.doubleface.server;

import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.driver.ShardDriver;
import io.doubleface.engine.FanoutEngine;
import io.doubleface.loop.LoopGroup;
import io.doubleface.model.Configuration;
import io.doubleface.model.ModelContext;
import io.doubleface.model.ThreadingModel;
import io.doubleface.sched.SchedulingPolicy;
import io.doubleface.server.internal.AdminHandler;
import io.doubleface.server.internal.FrontendLoopGroup;
import io.doubleface.server.internal.GrpcFanoutHandler;
import io.doubleface.server.internal.HttpFanoutHandler;
import io.doubleface.server.internal.ServerMetrics;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.doubleface.tune.LoadAdapter;
import io.doubleface.tune.TuneSettings;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.ServerChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running mid-tier: an HTTP/1.1 upstream, optionally a gRPC upstream ({@link Builder#grpc}), and
 * an admin listener around a {@link FanoutEngine}.
 *
 * <pre>{@code
 * FanoutServer<Query, Part, Result> server = FanoutServer.builder(service, binding)
 *         .driver(KvDriver.parse("kv://127.0.0.1:7101-7120"))
 *         .port(8080).adminPort(9090)
 *         .configuration("doubleface")
 *         .start();
 * ...
 * server.switchTo("type2a-1f2b");   // or PUT /admin/config?name=type2a-1f2b
 * server.close();
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
 * <p>Ownership: the server owns its loops; it closes the driver on {@link #close()} only if the
 * builder was told so ({@link Builder#driver(ShardDriver, boolean)}).
 *
 * <p>Threading: thread-safe.
 */
public final class FanoutServer<Q, P, R> implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FanoutServer.class);

    /** After a failed accept (e.g. out of file descriptors), accepting pauses for {@value} ms. */
    static final long ACCEPT_BACKOFF_MILLIS = 1000;

    /** Requests the HTTP codec may decode ahead of their answers: {@value}. */
    static final int CODEC_PIPELINE_DEPTH = 65536;

    /** Most concurrent calls on one gRPC upstream connection (HTTP/2 streams): {@value}. */
    public static final int GRPC_MAX_CONCURRENT_CALLS = 1024;

    /** Default per-request deadline: {@value} ms. */
    public static final long DEFAULT_DEADLINE_MS = 1000;

    private final LoopGroup io;
    private final LoopGroup admin;
    private final FanoutEngine<Q, P, R> engine;
    private final ShardDriver driver;
    private final boolean closeDriver;
    private final Channel listener;
    private final Server grpcServer;
    private final Channel adminListener;
    private final ServerMetrics metrics;
    private final LoadAdapter adapter;
    private final ChannelGroup connections = new DefaultChannelGroup("upstream", GlobalEventExecutor.INSTANCE);
    private volatile boolean closing;

    private FanoutServer(Builder<Q, P, R> b) throws InterruptedException {
        this.driver = Objects.requireNonNull(b.driver, "driver (call Builder.driver)");
        this.closeDriver = b.closeDriver;
        this.io = new LoopGroup("io", b.ioThreads, b.transport);
        LoopGroup adminGroup = null;
        FanoutEngine<Q, P, R> eng = null;
        Channel l = null;
        Server grpc = null;
        LoadAdapter tuner = null;
        try {
            ModelContext ctx = new ModelContext(io, driver, b.policy, b.queueLimit);
            String initial = b.tune != null ? b.tune.initial() : b.configuration;
            eng = new FanoutEngine<>(b.service, ctx, initial, TimeUnit.MILLISECONDS.toNanos(b.deadline.toMillis()));
            this.engine = eng;
            eng.prepare(b.prepare);
            if (b.tune != null) {
                tuner = LoadAdapter.attach(eng, b.tune);
            }
            this.adapter = tuner;
            l = bindUpstream(b);
            if (b.grpcBinding != null) {
                grpc = startGrpc(b, b.grpcBinding);
            }
            this.metrics = new ServerMetrics(eng, this::loopGroups, tuner);
            if (b.adminPort >= 0) {
                adminGroup = new LoopGroup("admin", 1, b.transport);
                this.adminListener = bindAdmin(adminGroup, b.host, b.adminPort);
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
        log.info("listening on http://{}:{}{} (admin {}), {} I/O loops ({}), configuration {}{}, shards {}",
                b.host, port(), grpcServer == null ? "" : " and grpc://" + b.host + ":" + grpcPort(),
                adminListener == null ? "off" : "http://" + b.host + ":" + adminPort(),
                io.size(), io.isEpoll() ? "epoll" : "nio", engine.active().name(),
                adapter == null ? "" : " (" + b.tune.policy().label() + ", " + adapter.detector().describe() + ", "
                        + (b.tune.profile() == null ? "no profile" : "profile") + ")",
                driver.describe());
    }

    private Channel bindUpstream(Builder<Q, P, R> b) throws InterruptedException {
        ServerChannel server;
        try {
            server = io.serverChannelClass().getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create server channel", e);
        }
        server.config().setOption(ChannelOption.SO_BACKLOG, 1024);
        server.config().setOption(ChannelOption.SO_REUSEADDR, true);
        server.pipeline().addLast(new Acceptor(b));
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
    private <I, O> Server startGrpc(Builder<Q, P, R> b, GrpcBinding<Q, R, I, O> binding) {
        MethodDescriptor<I, O> method = binding.method();
        if (method.getType() != MethodDescriptor.MethodType.UNARY) {
            throw new IllegalArgumentException("grpc method " + method.getFullMethodName() + ": " + method.getType()
                    + " (expected: UNARY)");
        }
        ServerServiceDefinition service = ServerServiceDefinition.builder(method.getServiceName())
                .addMethod(method, new GrpcFanoutHandler<>(engine, binding, io))
                .build();
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress(b.host, b.grpcPort))
                .bossEventLoopGroup(io.group())                                     // shut down by the server
                .workerEventLoopGroup(new FrontendLoopGroup(io, engine::nextFrontendLoop))
                .channelType(io.serverChannelClass())
                .withOption(ChannelOption.SO_REUSEADDR, true)
                .withChildOption(ChannelOption.TCP_NODELAY, true)
                .directExecutor() // calls run on their connection's loop; the engine dispatches per model
                .maxConcurrentCallsPerConnection(GRPC_MAX_CONCURRENT_CALLS)
                .maxInboundMessageSize(b.limits.maxBodySize())
                .maxInboundMetadataSize(b.limits.maxHeaderSize())
                .maxConnectionIdle(b.limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .addService(service)
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
        private final HttpBinding<Q, R> binding;

        Acceptor(Builder<Q, P, R> b) {
            this.limits = b.limits;
            this.binding = b.binding;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Channel child = (Channel) msg;
            if (closing) {
                child.unsafe().closeForcibly();
                return;
            }
            // Tracked so close() can close it even if it registers while the loops shut down
            // (Netty closes only the channels registered when a loop starts shutting down).
            connections.add(child);
            child.config().setOption(ChannelOption.TCP_NODELAY, true);
            child.pipeline().addLast(new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel ch) {
                    ch.pipeline().addLast(
                            new IdleStateHandler(0, 0, limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS),
                            // The codec's pipeline-depth limit must sit far above maxPipelined:
                            // bytes already read are still decoded after HttpFanoutHandler stops
                            // reading, and exceeding the codec's limit drops the connection
                            // without answers. What one read can hold bounds the depth anyway.
                            new HttpServerCodec(new HttpDecoderConfig()
                                    .setMaxInitialLineLength(limits.maxInitialLineLength())
                                    .setMaxHeaderSize(limits.maxHeaderSize())
                                    .setMaxChunkSize(8192), CODEC_PIPELINE_DEPTH),
                            new HttpFanoutHandler<>(engine, binding, limits, engine.stats()));
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

    private Channel bindAdmin(LoopGroup group, String host, int port) throws InterruptedException {
        AdminHandler handler = new AdminHandler(engine, metrics);
        ServerBootstrap sb = new ServerBootstrap()
                .group(group.group())
                .channel(group.serverChannelClass())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
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

    /** Starts building a server for {@code service}, served over HTTP by {@code binding}. */
    public static <Q, P, R> Builder<Q, P, R> builder(FanoutService<Q, P, R> service, HttpBinding<Q, R> binding) {
        return new Builder<>(service, binding);
    }

    /** The bound upstream port. */
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** The bound gRPC upstream port, or -1 without a gRPC upstream. */
    public int grpcPort() {
        return grpcServer == null ? -1 : grpcServer.getPort();
    }

    /** The bound admin port, or -1 if the admin listener is off. */
    public int adminPort() {
        return adminListener == null ? -1 : ((InetSocketAddress) adminListener.localAddress()).getPort();
    }

    /** Switches the active configuration (see {@link FanoutEngine#switchTo}). */
    public String switchTo(String configuration) {
        return engine.switchTo(configuration);
    }

    public FanoutEngine<Q, P, R> engine() {
        return engine;
    }

    /** The load adapter, or {@code null} if the server runs a static configuration. */
    public LoadAdapter adapter() {
        return adapter;
    }

    /** The I/O loops. */
    public LoopGroup ioLoops() {
        return io;
    }

    /** The {@code /admin/stats} document. */
    public String statsJson() {
        return metrics.statsJson();
    }

    /** Stops listening, closes models, connections and loops; closes the driver if it owns it. */
    @Override
    public void close() {
        closing = true;
        if (adapter != null) {
            adapter.close();
        }
        listener.close().syncUninterruptibly();
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
        if (closeDriver) {
            driver.close();
        }
        if (admin != null) {
            admin.close();
        }
        io.close();
    }

    /** Server options; every one has a documented default. Not thread-safe. */
    public static final class Builder<Q, P, R> {
        private final FanoutService<Q, P, R> service;
        private final HttpBinding<Q, R> binding;
        private ShardDriver driver;
        private boolean closeDriver;
        private String host = "127.0.0.1";
        private int port = 8080;
        private int adminPort = -1;
        private int ioThreads = Runtime.getRuntime().availableProcessors();
        private LoopGroup.Transport transport = LoopGroup.Transport.AUTO;
        private String configuration = "doubleface";
        private String policy = "completion-first";
        private Duration deadline = Duration.ofMillis(DEFAULT_DEADLINE_MS);
        private HttpLimits limits = HttpLimits.DEFAULTS;
        private int queueLimit = ModelContext.DEFAULT_QUEUE_LIMIT;
        private int grpcPort = -1;
        private GrpcBinding<Q, R, ?, ?> grpcBinding;
        private TuneSettings tune;
        private List<String> prepare = List.of();

        private Builder(FanoutService<Q, P, R> service, HttpBinding<Q, R> binding) {
            this.service = Objects.requireNonNull(service, "service");
            this.binding = Objects.requireNonNull(binding, "binding");
        }

        /** The shards; the server does not close it. */
        public Builder<Q, P, R> driver(ShardDriver driver) {
            return driver(driver, false);
        }

        /** The shards; {@code closeOnStop}: the server closes the driver when it stops. */
        public Builder<Q, P, R> driver(ShardDriver driver, boolean closeOnStop) {
            this.driver = Objects.requireNonNull(driver, "driver");
            this.closeDriver = closeOnStop;
            return this;
        }

        /** Address to listen on (default {@code 127.0.0.1}). */
        public Builder<Q, P, R> host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Upstream port (default 8080; 0 = any free port). */
        public Builder<Q, P, R> port(int port) {
            this.port = checkPort("port", port);
            return this;
        }

        /**
         * Also serves the service over gRPC on {@code port} (0 = any free port), the unary method of
         * {@code binding}, on the same I/O loops and through the same engine as HTTP (default: no
         * gRPC upstream). Request messages are limited by {@link HttpLimits#maxBodySize()}, headers
         * by {@link HttpLimits#maxHeaderSize()}, idle connections by {@link HttpLimits#idleTimeout()}.
         */
        public Builder<Q, P, R> grpc(int port, GrpcBinding<Q, R, ?, ?> binding) {
            this.grpcPort = checkPort("grpcPort", port);
            this.grpcBinding = Objects.requireNonNull(binding, "binding");
            return this;
        }

        /** Admin port (default: no admin listener; 0 = any free port). */
        public Builder<Q, P, R> adminPort(int port) {
            this.adminPort = port < 0 ? -1 : checkPort("adminPort", port);
            return this;
        }

        /** I/O loops (default: the number of CPUs). */
        public Builder<Q, P, R> ioThreads(int n) {
            if (n < 1 || n > 1024) {
                throw new IllegalArgumentException("ioThreads: " + n + " (expected: 1..1024)");
            }
            this.ioThreads = n;
            return this;
        }

        /** Transport of all loops (default {@link LoopGroup.Transport#AUTO}: epoll if available). */
        public Builder<Q, P, R> transport(LoopGroup.Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /** Initial configuration (default {@code doubleface}); see {@link io.doubleface.model.Configuration}. */
        public Builder<Q, P, R> configuration(String name) {
            Configuration.parse(name); // fail fast
            this.configuration = name;
            return this;
        }

        /** DoubleFace scheduling policy of configurations that name none (default {@code completion-first}). */
        public Builder<Q, P, R> policy(String policy) {
            this.policy = SchedulingPolicy.create(policy).name();
            return this;
        }

        /** Per-request deadline (default {@value #DEFAULT_DEADLINE_MS} ms): later → 504. */
        public Builder<Q, P, R> deadline(Duration deadline) {
            if (deadline == null || deadline.toMillis() < 1) {
                throw new IllegalArgumentException("deadline: " + deadline + " (expected: >= 1 ms)");
            }
            this.deadline = deadline;
            return this;
        }

        /** HTTP limits (default {@link HttpLimits#DEFAULTS}). */
        public Builder<Q, P, R> limits(HttpLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /** Bound of each worker pool's queue (default {@value ModelContext#DEFAULT_QUEUE_LIMIT}); beyond → 503. */
        public Builder<Q, P, R> queueLimit(int n) {
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
         */
        public Builder<Q, P, R> adaptive(TuneSettings settings) {
            this.tune = settings;
            return this;
        }

        /**
         * Configurations to build at start, parked, so that switching to them later creates no
         * thread (default: none — a configuration is then built on its first switch).
         */
        public Builder<Q, P, R> prepare(List<String> configurations) {
            for (String c : configurations) {
                Configuration.parse(c); // fail fast
            }
            this.prepare = List.copyOf(configurations);
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
         * @throws IllegalStateException if a port cannot be bound
         * @throws IllegalArgumentException if the configuration does not fit (e.g. too many frontends)
         */
        public FanoutServer<Q, P, R> start() {
            try {
                return new FanoutServer<>(this);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting", e);
            }
        }
    }
}
