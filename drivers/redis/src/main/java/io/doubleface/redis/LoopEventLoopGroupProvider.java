package io.doubleface.redis;

import io.lettuce.core.resource.EventLoopGroupProvider;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Hands Lettuce one given event loop, whatever group class it asks for, and never shuts it down
 * ({@link #release} and {@link #shutdown} do nothing: the loop belongs to the server).
 *
 * <p>Lettuce asks for a group <em>class</em> ({@code Transports.eventLoopGroupClass()}: the epoll
 * group when netty-transport-native-epoll works and {@code io.lettuce.core.epoll} is not
 * {@code false}, else NIO) and uses the returned object only as an {@link EventLoopGroup} (the
 * generic return is erased), so returning our {@link EventLoop} (a group of one) is safe. The
 * socket channel class Lettuce pairs with it is chosen the same JVM-wide way, which need not
 * match our loop's I/O handler (e.g. a NIO loop while epoll is available):
 * {@link RedisLoopClient}'s {@code NettyCustomizer} therefore sets the right channel class on
 * the bootstrap just before each connect.
 */
final class LoopEventLoopGroupProvider implements EventLoopGroupProvider {

    private final EventLoop loop;

    LoopEventLoopGroupProvider(EventLoop loop) {
        this.loop = loop;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T extends EventLoopGroup> T allocate(Class<T> type) {
        return (T) loop;
    }

    @Override
    public int threadPoolSize() {
        return 1;
    }

    @Override
    public Future<Boolean> release(EventExecutorGroup eventLoopGroup, long quietPeriod, long timeout, TimeUnit unit) {
        return ImmediateEventExecutor.INSTANCE.newSucceededFuture(Boolean.TRUE); // not ours to shut down
    }

    @Override
    public Future<Boolean> shutdown(long quietPeriod, long timeout, TimeUnit timeUnit) {
        return ImmediateEventExecutor.INSTANCE.newSucceededFuture(Boolean.TRUE); // not ours to shut down
    }
}
