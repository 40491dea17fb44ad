package io.doubleface.internal.loop;

import io.doubleface.driver.Transport;
import io.netty.channel.EventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A named group of Netty event loops ({@link MultiThreadIoEventLoopGroup}) with epoll where
 * available and NIO otherwise, per-loop counters ({@link LoopStats}), and a run-time switch
 * between blocking in {@code epoll_wait} and busy-polling ({@link SelectStrategy#BUSY_WAIT}), and
 * a run-time switch pinning each loop's thread to a CPU ({@link #pin}).
 *
 * <p>Threading: {@link #setBusyPoll} and {@link #pin} may be called from any thread; everything
 * else is immutable after construction. The group owns its loops and shuts them down in {@link #close()}.
 */
public final class LoopGroup implements AutoCloseable {

    /** Quiet period of {@link #close()}: {@value} ms. */
    static final long QUIET_MILLIS = 20;


    private static final Logger log = LoggerFactory.getLogger(LoopGroup.class);

    private final String name;
    private final MultiThreadIoEventLoopGroup group;
    private final List<EventLoop> loops;
    private final Map<EventExecutor, Integer> index = new IdentityHashMap<>();
    private final List<LoopStats> stats;
    private final boolean epoll;
    private volatile boolean busyPoll;
    /** The CPUs loops are pinned to ({@link #pin}), or {@code null}. */
    private volatile List<Integer> pinned;
    /** Per loop, its thread's affinity before the first pin (restored by unpinning); loop-confined. */
    private final BitSet[] unpinned;

    /**
     * Creates and starts {@code size} loops whose threads are named {@code name-0 … name-(size-1)}.
     *
     * @param name thread-name prefix and group name in stats, at most 12 characters
     */
    public LoopGroup(String name, int size, Transport transport) {
        if (size < 1) {
            throw new IllegalArgumentException("size: " + size + " (expected: > 0)");
        }
        this.name = name;
        boolean useEpoll = switch (transport) {
            case AUTO -> Epoll.isAvailable();
            case EPOLL -> {
                Epoll.ensureAvailability();
                yield true;
            }
            case NIO -> false;
        };
        this.epoll = useEpoll;
        IoHandlerFactory base = useEpoll
                ? EpollIoHandler.newFactory(0, () -> this::calculateStrategy)
                : NioIoHandler.newFactory();
        CountingIoHandlerFactory counting = new CountingIoHandlerFactory(base, name);
        this.group = new MultiThreadIoEventLoopGroup(size, Threads.platform(name), counting);
        List<EventLoop> l = new ArrayList<>(size);
        for (EventExecutor e : group) {
            index.put(e, l.size());
            l.add((EventLoop) e);
        }
        this.loops = Collections.unmodifiableList(l);
        this.unpinned = new BitSet[size];
        this.stats = counting.stats();
        // Loops start lazily; start them now so their threads (and counters) exist from the start.
        for (EventLoop loop : loops) {
            loop.submit(() -> { }).syncUninterruptibly();
        }
    }

    private int calculateStrategy(io.netty.util.IntSupplier selectNow, boolean hasTasks) throws Exception {
        if (hasTasks) {
            return selectNow.get();
        }
        return busyPoll ? SelectStrategy.BUSY_WAIT : SelectStrategy.SELECT;
    }

    public String name() {
        return name;
    }

    public MultiThreadIoEventLoopGroup group() {
        return group;
    }

    /** The loops, in a fixed order. */
    public List<EventLoop> loops() {
        return loops;
    }

    public int size() {
        return loops.size();
    }

    /** The index of {@code loop} in {@link #loops()}, or -1 if it is not one of this group's loops. */
    public int indexOf(EventExecutor loop) {
        Integer i = index.get(loop);
        return i == null ? -1 : i;
    }

    /** The counters of each loop (in creation order, which matches {@link #loops()}). */
    public List<LoopStats> stats() {
        return stats;
    }

    public boolean isEpoll() {
        return epoll;
    }

    public Class<? extends ServerChannel> serverChannelClass() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public Class<? extends SocketChannel> socketChannelClass() {
        return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    /**
     * Switches the loops between blocking waits and busy-polling. Busy-polling needs epoll; on NIO
     * the request is ignored with a warning.
     */
    public void setBusyPoll(boolean on) {
        if (on && !epoll) {
            log.warn("loop group {}: busy-poll needs epoll; NIO loops keep blocking", name);
            return;
        }
        if (busyPoll == on) {
            return;
        }
        busyPoll = on;
        // Kick blocked or spinning loops so they pick up the new strategy now.
        for (EventLoop loop : loops) {
            loop.execute(() -> { });
        }
    }

    public boolean isBusyPoll() {
        return busyPoll;
    }

    /**
     * Pins loop {@code i}'s thread to CPU {@code cpus.get(i % cpus.size())}, or with {@code null}
     * gives every loop back the affinity it had before the first pin. Each loop pins itself in a
     * task; this returns when all have (in flight work is not disturbed: a loop runs the task between
     * two of its iterations).
     *
     * @param cpus the CPUs, at least one, or {@code null} to unpin
     * @throws IllegalArgumentException if the kernel refuses a CPU (offline, or not in this process's
     *     cpuset); loops pinned before the refusal stay pinned
     * @throws UnsupportedOperationException if this is not Linux
     */
    public void pin(List<Integer> cpus) {
        if (cpus != null && cpus.isEmpty()) {
            throw new IllegalArgumentException("CPU list: empty (expected: 1 or more CPUs, or null to unpin)");
        }
        List<Integer> list = cpus == null ? null : List.copyOf(cpus);
        for (int i = 0; i < loops.size(); i++) {
            int k = i;
            io.netty.util.concurrent.Future<?> f = loops.get(i).submit(() -> pinSelf(k, list));
            f.syncUninterruptibly();
        }
        pinned = list;
        log.info("loop group {}: {}", name, list == null ? "unpinned" : "loops pinned to CPUs " + list);
    }

    private void pinSelf(int loop, List<Integer> cpus) {
        if (cpus == null) {
            if (unpinned[loop] != null) {
                CpuAffinity.setCurrentThread(unpinned[loop]);
            }
            return;
        }
        if (unpinned[loop] == null) {
            unpinned[loop] = CpuAffinity.currentThread();
        }
        BitSet one = new BitSet();
        one.set(cpus.get(loop % cpus.size()));
        CpuAffinity.setCurrentThread(one);
    }

    /** {@return the CPUs the loops are pinned to ({@link #pin}), or {@code null} if they are not} */
    public List<Integer> pinned() {
        return pinned;
    }

    /**
     * Shuts the loops down, waiting up to 2 s. A loop ends only after {@value #QUIET_MILLIS} ms
     * without a new task: a channel registered during the shutdown (a client library's reconnect
     * attempt) is then closed and unregistered like the others, so its handlers release their
     * buffers; without a quiet period the loop may end right after running that registration.
     */
    @Override
    public void close() {
        busyPoll = false;
        group.shutdownGracefully(QUIET_MILLIS, 2000, TimeUnit.MILLISECONDS).syncUninterruptibly();
    }

    @Override
    public String toString() {
        return name + "[" + size() + (epoll ? " epoll" : " nio") + (busyPoll ? " busy-poll" : "")
                + (pinned == null ? "" : " pinned " + pinned) + "]";
    }
}
