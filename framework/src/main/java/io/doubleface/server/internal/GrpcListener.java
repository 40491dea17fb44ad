package io.doubleface.server.internal;

import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.RouteStats;
import io.doubleface.internal.loop.LoopGroup;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC upstream listener (grpc-java's {@link NettyServerBuilder}) on the server's I/O loops:
 * it accepts on them (boss), registers each connection on the next frontend loop of the active
 * configuration (worker, {@link FrontendLoopGroup}), and runs calls on that loop
 * ({@code directExecutor}: the engine dispatches per model, {@link GrpcFanoutHandler}).
 *
 * <p>Threading: thread-safe.
 */
public final class GrpcListener {

    /** Most concurrent calls on one gRPC upstream connection (HTTP/2 streams): {@value}. */
    public static final int MAX_CONCURRENT_CALLS = 1024;

    private final Server server;
    private final List<RouteStats> routeStats;

    private GrpcListener(Server server, List<RouteStats> routeStats) {
        this.server = server;
        this.routeStats = List.copyOf(routeStats);
    }

    /**
     * Starts the listener on {@code config}'s host and gRPC port, serving its gRPC methods.
     *
     * @param tls the TLS context (ALPN {@code h2}), or {@code null} for plain text
     * @throws IllegalStateException if the port cannot be bound
     */
    public static GrpcListener start(ServerConfig config, FanoutEngine engine, LoopGroup io, SslContext tls) {
        Map<String, ServerServiceDefinition.Builder> services = new LinkedHashMap<>();
        List<RouteStats> stats = new ArrayList<>();
        for (GrpcMethod<?, ?, ?, ?> m : config.grpcMethods()) {
            stats.add(m.addTo(services, engine, io));
        }
        NettyServerBuilder nb = NettyServerBuilder.forAddress(new InetSocketAddress(config.host(), config.grpcPort()));
        for (ServerServiceDefinition.Builder sd : services.values()) {
            nb.addService(sd.build());
        }
        if (tls != null) {
            nb.sslContext(tls);
        }
        ConnectionLimits limits = config.limits();
        Server s = nb
                .bossEventLoopGroup(io.group())                                     // shut down by the server
                .workerEventLoopGroup(new FrontendLoopGroup(io, engine::nextFrontendLoop))
                .channelType(io.serverChannelClass())
                .withOption(ChannelOption.SO_REUSEADDR, true)
                .withOption(ChannelOption.RCVBUF_ALLOCATOR, HttpListener.acceptAllocator()) // bursts: see HttpListener
                .withChildOption(ChannelOption.TCP_NODELAY, true)
                .directExecutor() // calls run on their connection's loop; the engine dispatches per model
                .maxConcurrentCallsPerConnection(MAX_CONCURRENT_CALLS)
                .maxInboundMessageSize(limits.maxBodySize())
                .maxInboundMetadataSize(limits.maxHeaderSize())
                .maxConnectionIdle(config.idleTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .build();
        try {
            return new GrpcListener(s.start(), stats);
        } catch (IOException e) {
            s.shutdownNow();
            throw new IllegalStateException("cannot listen (grpc) on " + config.host() + ":" + config.grpcPort() + ": "
                    + e.getMessage(), e);
        }
    }

    /** {@return the bound port} */
    public int port() {
        return server.getPort();
    }

    /** {@return the gRPC methods' counters, in the order they were added} */
    public List<RouteStats> routeStats() {
        return routeStats;
    }

    /** Stops accepting calls ({@code GOAWAY}): open calls finish, new ones go elsewhere. */
    public void shutdown() {
        server.shutdown();
    }

    /**
     * Waits for the listener to terminate after {@link #shutdown()}.
     *
     * @param nanos at most this long
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitTermination(long nanos) throws InterruptedException {
        server.awaitTermination(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    }

    /** Ends open calls ({@code CANCELLED} / {@code UNAVAILABLE}) and waits up to 5 s for the listener to stop. */
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
