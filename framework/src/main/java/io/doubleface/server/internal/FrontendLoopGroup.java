package io.doubleface.server.internal;

import io.doubleface.internal.loop.LoopGroup;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.AbstractEventExecutorGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The server's I/O loops seen as an {@link EventLoopGroup} whose {@link #next()} is the next
 * frontend loop of the <em>active</em> configuration, so a library that registers accepted
 * connections through a worker group (grpc-java's {@code NettyServer}) places them exactly as the
 * HTTP acceptor does.
 *
 * <p>Lifecycle methods do nothing: the loops belong to the server, which shuts them down itself
 * ({@code // shut down by the server}). Thread-safe.
 */
public final class FrontendLoopGroup extends AbstractEventExecutorGroup implements EventLoopGroup {

    private final LoopGroup io;
    private final Supplier<EventLoop> nextFrontend;

    public FrontendLoopGroup(LoopGroup io, Supplier<EventLoop> nextFrontend) {
        this.io = io;
        this.nextFrontend = nextFrontend;
    }

    @Override
    public EventLoop next() {
        return nextFrontend.get();
    }

    @Override
    public ChannelFuture register(Channel channel) {
        return next().register(channel);
    }

    @Override
    public ChannelFuture register(ChannelPromise promise) {
        return next().register(promise);
    }

    @Deprecated
    @Override
    public ChannelFuture register(Channel channel, ChannelPromise promise) {
        return next().register(promise);
    }

    @Override
    public Iterator<EventExecutor> iterator() {
        return List.<EventExecutor>copyOf(io.loops()).iterator();
    }

    @Override
    public boolean isShuttingDown() {
        return io.group().isShuttingDown();
    }

    @Override
    public Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
        return io.group().terminationFuture(); // shut down by the server
    }

    @Override
    public Future<?> terminationFuture() {
        return io.group().terminationFuture();
    }

    @Deprecated
    @Override
    public void shutdown() {
        // shut down by the server
    }

    @Override
    public boolean isShutdown() {
        return io.group().isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return io.group().isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return io.group().awaitTermination(timeout, unit);
    }
}
