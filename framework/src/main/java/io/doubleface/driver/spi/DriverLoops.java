package io.doubleface.driver.spi;

import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.internal.loop.LoopStats;
import io.doubleface.internal.loop.Threads;
import io.doubleface.driver.Transport;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.SocketChannel;
import java.util.List;
import java.util.concurrent.ThreadFactory;

/**
 * Event loops and threads a driver or a leaf server owns itself, made the way the server makes its
 * own: the same transport choice, thread names (shown in {@code /admin/stats} and thread dumps) and
 * per-loop counters. A driver's loop clients run on the server's loops ({@link ShardDriver#openOn});
 * these are for what runs beside them — a blocking client's private loops, a leaf server's accept
 * and I/O loops, a driver's background threads.
 *
 * <p>Threading: {@link #close()} from any thread, once; the rest is immutable after {@link #open}.
 */
public final class DriverLoops implements AutoCloseable {

    private final LoopGroup group;

    private DriverLoops(LoopGroup group) {
        this.group = group;
    }

    /**
     * Creates and starts {@code size} loops whose threads are named {@code name-0 … name-(size-1)}.
     *
     * @param name thread-name prefix, at most 12 characters
     * @param size number of loops, at least 1
     * @param transport the socket transport ({@link Transport#AUTO}: epoll if it loads)
     * @return the running loops; close them when the driver closes
     */
    public static DriverLoops open(String name, int size, Transport transport) {
        return new DriverLoops(new LoopGroup(name, size, transport));
    }

    /** {@return a factory of named platform (daemon) threads, {@code name-N}, for a driver's own pools} */
    public static ThreadFactory platformThreads(String name) {
        return Threads.platform(name);
    }

    /** {@return a factory of named virtual threads, {@code name-N}} */
    public static ThreadFactory virtualThreads(String name) {
        return Threads.virtual(name);
    }

    /** {@return the Netty group of these loops, for a bootstrap} */
    public EventLoopGroup group() {
        return group.group();
    }

    /** {@return the loops, in index order} */
    public List<EventLoop> loops() {
        return group.loops();
    }

    /** {@return the number of loops} */
    public int size() {
        return group.size();
    }

    /** {@return the client socket channel class for these loops' transport} */
    public Class<? extends SocketChannel> socketChannelClass() {
        return group.socketChannelClass();
    }

    /** {@return the server socket channel class for these loops' transport} */
    public Class<? extends ServerChannel> serverChannelClass() {
        return group.serverChannelClass();
    }

    /** {@return I/O events handled by these loops since they started (a leaf server's load)} */
    public long events() {
        long n = 0;
        for (LoopStats s : group.stats()) {
            n += s.events();
        }
        return n;
    }

    /** Shuts the loops down (gracefully, without waiting). */
    @Override
    public void close() {
        group.close();
    }

    @Override
    public String toString() {
        return group.toString();
    }
}
