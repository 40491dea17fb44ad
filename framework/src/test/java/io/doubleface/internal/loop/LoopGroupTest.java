package io.doubleface.internal.loop;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class LoopGroupTest {

    @Test
    void loopsRunOnThreadsNamedAfterTheGroup() throws Exception {
        try (LoopGroup g = new LoopGroup("lgname", 3, Transport.AUTO)) {
            assertEquals("lgname", g.name());
            assertEquals(3, g.size());
            assertEquals(3, g.loops().size());
            for (int i = 0; i < 3; i++) {
                String thread = g.loops().get(i).submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
                assertEquals("lgname-" + i, thread);
            }
            assertTrue(g.toString().startsWith("lgname[3"), g.toString());
        }
    }

    @Test
    void indexOfFindsOwnLoopsAndRejectsForeignExecutors() {
        try (LoopGroup g = new LoopGroup("lgidx", 2, Transport.AUTO);
                LoopGroup other = new LoopGroup("lgother", 1, Transport.AUTO)) {
            for (int i = 0; i < g.size(); i++) {
                assertEquals(i, g.indexOf(g.loops().get(i)));
            }
            assertEquals(-1, g.indexOf(other.loops().get(0)));
            assertEquals(-1, g.indexOf(ImmediateEventExecutor.INSTANCE));
            assertEquals(-1, g.indexOf(GlobalEventExecutor.INSTANCE));
            assertEquals(-1, g.indexOf(null));
        }
    }

    @Test
    void statsHaveOneEntryPerLoopNamedLikeItsThread() {
        try (LoopGroup g = new LoopGroup("lgstat", 2, Transport.AUTO)) {
            assertEquals(2, g.stats().size());
            for (int i = 0; i < 2; i++) {
                LoopStats s = g.stats().get(i);
                assertEquals("lgstat", s.group());
                assertEquals("lgstat-" + i, s.name());
            }
        }
    }

    static void spin(long millis) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    @Test
    void busyAndIdleTimeSplitTheLoopsTime() throws Exception {
        for (Transport t : List.of(Transport.AUTO, Transport.NIO)) {
            try (LoopGroup g = new LoopGroup("lgbusy", 1, t);
                    LoopGroup clients = new LoopGroup("lgbusyc", 1, t)) {
                LoopStats s = g.stats().get(0);
                EventLoop loop = g.loops().get(0);
                loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
                // nothing to do: waiting is idle (recorded when the wait ends, here by a task)
                long b0 = s.busyNanos();
                long i0 = s.idleNanos();
                Thread.sleep(300);
                loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
                assertTrue(s.idleNanos() - i0 >= TimeUnit.MILLISECONDS.toNanos(250), t + ": idle " + (s.idleNanos() - i0));
                assertTrue(s.busyNanos() - b0 < TimeUnit.MILLISECONDS.toNanos(100), t + ": busy " + (s.busyNanos() - b0));
                // a task is busy time
                long b1 = s.busyNanos();
                loop.submit(() -> spin(200)).get(10, TimeUnit.SECONDS);
                // an iteration's busy time is recorded when the iteration ends, which may come after
                // a task of that iteration has completed its future: wait for it (bounded)
                long busyTask = awaitAtLeast(() -> s.busyNanos() - b1, TimeUnit.MILLISECONDS.toNanos(190), loop);
                assertTrue(busyTask >= TimeUnit.MILLISECONDS.toNanos(190), t + ": busy " + busyTask);
                // processing I/O is busy time too (inside the handler's run: reported by it)
                LinkedBlockingQueue<Boolean> handled = new LinkedBlockingQueue<>();
                Channel server = new ServerBootstrap().group(g.group()).channel(g.serverChannelClass())
                        .childHandler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ((ByteBuf) msg).release();
                                spin(150);
                                handled.add(true);
                            }
                        })
                        .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
                Channel client = new Bootstrap().group(clients.group()).channel(clients.socketChannelClass())
                        .handler(new ChannelInboundHandlerAdapter())
                        .connect(server.localAddress()).sync().channel();
                try {
                    long b2 = s.busyNanos();
                    long i2 = s.idleNanos();
                    client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1})).sync();
                    assertNotNull(handled.poll(10, TimeUnit.SECONDS));
                    long busy = awaitAtLeast(() -> s.busyNanos() - b2, TimeUnit.MILLISECONDS.toNanos(140), loop);
                    assertTrue(busy >= TimeUnit.MILLISECONDS.toNanos(140), t + ": busy " + busy + ", idle "
                            + (s.idleNanos() - i2));
                } finally {
                    client.close().sync();
                    server.close().sync();
                }
            }
        }
    }

    /**
     * Nudges {@code loop} with empty tasks until {@code value} reaches {@code want} or 5 s pass;
     * returns the last value (the caller asserts on it).
     */
    private static long awaitAtLeast(java.util.function.LongSupplier value, long want, EventLoop loop)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        long v;
        while ((v = value.getAsLong()) < want && System.nanoTime() < deadline) {
            loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
            Thread.sleep(5);
        }
        return v;
    }

    @Test
    void invalidSizeOrNameIsRejected() {
        IllegalArgumentException size = assertThrows(IllegalArgumentException.class,
                () -> new LoopGroup("lgbad", 0, Transport.AUTO));
        assertTrue(size.getMessage().contains("size"), size.getMessage());
        IllegalArgumentException name = assertThrows(IllegalArgumentException.class,
                () -> new LoopGroup("a-name-far-too-long", 1, Transport.AUTO));
        assertTrue(name.getMessage().contains("prefix"), name.getMessage());
    }

    @Test
    void countersGrowWhenASocketPairExchangesDataOnTheLoop() throws Exception {
        for (Transport t : transports()) {
            try (LoopGroup g = new LoopGroup("lgecho", 1, t)) {
                LoopStats s = g.stats().get(0);
                long iterations = s.iterations();
                long wakeups = s.wakeups();
                long events = s.events();
                try (Echo echo = new Echo(g)) {
                    for (int i = 0; i < 5; i++) {
                        assertEquals("ping" + i, echo.roundTrip("ping" + i));
                    }
                }
                assertTrue(s.iterations() > iterations, t + ": iterations " + iterations + " -> " + s.iterations());
                assertTrue(s.wakeups() > wakeups, t + ": wakeups " + wakeups + " -> " + s.wakeups());
                assertTrue(s.events() > events, t + ": events " + events + " -> " + s.events());
                assertTrue(s.iterations() >= s.wakeups(), "a wake-up is an iteration that could block");
            }
        }
    }

    private static List<Transport> transports() {
        return io.netty.channel.epoll.Epoll.isAvailable()
                ? List.of(Transport.EPOLL, Transport.NIO)
                : List.of(Transport.NIO);
    }

    @Test
    void nioGroupIgnoresBusyPoll() throws Exception {
        try (LoopGroup g = new LoopGroup("lgnio", 1, Transport.NIO)) {
            assertFalse(g.isEpoll());
            g.setBusyPoll(true);
            assertFalse(g.isBusyPoll());
            assertEquals(42, g.loops().get(0).submit(() -> 42).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void busyPollOnAndOffKeepsTheLoopWorking() throws Exception {
        assumeTrue(io.netty.channel.epoll.Epoll.isAvailable(), "busy-poll needs epoll");
        try (LoopGroup g = new LoopGroup("lgpoll", 1, Transport.EPOLL); Echo echo = new Echo(g)) {
            assertTrue(g.isEpoll());
            EventLoop loop = g.loops().get(0);
            LoopStats s = g.stats().get(0);

            g.setBusyPoll(true);
            assertTrue(g.isBusyPoll());
            assertTrue(g.toString().contains("busy-poll"));
            assertEquals(1, loop.submit(() -> 1).get(10, TimeUnit.SECONDS));
            assertEquals("spin", echo.roundTrip("spin"));
            // a spinning loop keeps iterating without tasks or I/O
            long before = s.iterations();
            while (s.iterations() <= before + 10) {
                Thread.onSpinWait();
            }

            g.setBusyPoll(false);
            assertFalse(g.isBusyPoll());
            assertEquals(2, loop.submit(() -> 2).get(10, TimeUnit.SECONDS));
            assertEquals("block", echo.roundTrip("block"));
            // scheduled tasks still fire once the loop blocks in epoll_wait again
            assertEquals(3, loop.schedule(() -> 3, 5, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void threadStatsSnapshotCountsTheGroupsThreads() throws Exception {
        assumeTrue(java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task")), "needs /proc");
        try (LoopGroup g = new LoopGroup("lgproc", 2, Transport.AUTO)) {
            // work the counters must show: each loop burns 100 ms of its own CPU time, then
            // sleeps 10 times (each sleep blocks the thread: a voluntary context switch)
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            List<io.netty.util.concurrent.Future<?>> work = new java.util.ArrayList<>();
            for (EventLoop loop : g.loops()) {
                work.add(loop.submit(() -> {
                    long until = mx.getCurrentThreadCpuTime() + TimeUnit.MILLISECONDS.toNanos(100);
                    while (mx.getCurrentThreadCpuTime() < until) {
                        Thread.onSpinWait();
                    }
                    for (int i = 0; i < 10; i++) {
                        Thread.sleep(1);
                    }
                    return null;
                }));
            }
            for (io.netty.util.concurrent.Future<?> f : work) {
                f.get(30, TimeUnit.SECONDS);
            }
            Map<String, ThreadStats.Group> snap = ThreadStats.snapshot();
            ThreadStats.Group group = snap.get("lgproc");
            assertNotNull(group, "snapshot has the group: " + snap.keySet());
            assertEquals("lgproc", group.name());
            assertEquals(2, group.threads());
            // /proc counts CPU time in clock ticks (10 ms at most per thread lost to rounding)
            assertTrue(group.cpuMillis() >= 2 * 100 - 2 * 10, group.toString());
            assertTrue(group.voluntarySwitches() >= 2 * 10, group.toString());
            assertTrue(snap.keySet().stream().sorted().toList().equals(List.copyOf(snap.keySet())), "sorted by name");
        }
    }

    @Test
    void groupOfDropsANumericSuffixOnly() {
        assertEquals("io", ThreadStats.groupOf("io-12"));
        assertEquals("io", ThreadStats.groupOf("io-0"));
        assertEquals("main", ThreadStats.groupOf("main"));
        assertEquals("a-b", ThreadStats.groupOf("a-b"));
        assertEquals("t2a-be", ThreadStats.groupOf("t2a-be-3"));
        assertEquals("x-", ThreadStats.groupOf("x-"));
        assertEquals("-1", ThreadStats.groupOf("-1"));
        assertEquals("a-1b", ThreadStats.groupOf("a-1b"));
    }

    @Test
    void threadFactoryNamesThreadsAndRejectsLongPrefixes() throws Exception {
        java.util.concurrent.ThreadFactory f = Threads.platform("tf");
        Thread t = f.newThread(() -> { });
        assertEquals("tf-0", t.getName());
        assertTrue(t.isDaemon());
        assertEquals("tf-1", f.newThread(() -> { }).getName());
        assertThrows(IllegalArgumentException.class, () -> Threads.platform(""));
        assertThrows(IllegalArgumentException.class, () -> Threads.platform("x".repeat(Threads.MAX_NAME - 2)));
        Thread v = Threads.virtual("vt").newThread(() -> { });
        assertTrue(v.isVirtual());
        assertEquals("vt-0", v.getName());
    }

    /** An echo server and one client connection, both on the group's loops. */
    private static final class Echo implements AutoCloseable {
        private final Channel server;
        private final Channel client;
        private final LinkedBlockingQueue<String> received = new LinkedBlockingQueue<>();

        Echo(LoopGroup g) throws InterruptedException {
            server = new ServerBootstrap()
                    .group(g.group())
                    .channel(g.serverChannelClass())
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ctx.writeAndFlush(msg);
                                }
                            });
                        }
                    })
                    .bind("127.0.0.1", 0).sync().channel();
            client = new Bootstrap()
                    .group(g.group())
                    .channel(g.socketChannelClass())
                    .handler(new SimpleChannelInboundHandler<ByteBuf>() {
                        private final StringBuilder buf = new StringBuilder();

                        @Override
                        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                            buf.append(msg.toString(StandardCharsets.US_ASCII));
                            int nl;
                            while ((nl = buf.indexOf("\n")) >= 0) {
                                received.add(buf.substring(0, nl));
                                buf.delete(0, nl + 1);
                            }
                        }
                    })
                    .connect(server.localAddress()).sync().channel();
            assertTrue(client.localAddress() instanceof InetSocketAddress);
        }

        String roundTrip(String line) throws InterruptedException {
            client.writeAndFlush(Unpooled.copiedBuffer(line + "\n", StandardCharsets.US_ASCII));
            String r = received.poll(10, TimeUnit.SECONDS);
            assertNotNull(r, "echo of " + line);
            return r;
        }

        @Override
        public void close() {
            client.close().syncUninterruptibly();
            server.close().syncUninterruptibly();
        }
    }

    @Test
    void cpuListsReadAsLinuxPrintsThem() {
        assertEquals(List.of(0, 1), CpuAffinity.parseList("0,1"));
        assertEquals(List.of(0, 1, 2, 3), CpuAffinity.parseList("0-3"));
        assertEquals(List.of(1, 0, 4), CpuAffinity.parseList(" 1,0, 4,1"));
        assertEquals(List.of(0, 1, 5), CpuAffinity.parseList("0-1,5"));
        for (String bad : new String[] {"", "x", "1-", "-1", "3-1", "0,,1", "1-2-3", "1024"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CpuAffinity.parseList(bad), bad);
            assertTrue(e.getMessage().contains("expected: a CPU list"), e.getMessage());
        }
        java.util.BitSet b = new java.util.BitSet();
        b.set(0, 3);
        b.set(5);
        assertEquals("0-2,5", CpuAffinity.format(b));
    }

    @Test
    void pinnedLoopsRunOnTheirCpuAsTheKernelSaysAndUnpinningGivesTheOldSetBack() throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "sched_setaffinity is Linux's");
        String before = CpuAffinity.procAllowedList();
        java.util.BitSet allowed = CpuAffinity.currentThread();
        assertEquals(before, CpuAffinity.format(allowed), "the system call and /proc agree");
        int last = allowed.length() - 1; // the highest CPU this process may use
        try (LoopGroup g = new LoopGroup("lgpin", 3, Transport.AUTO)) {
            g.pin(List.of(last, allowed.nextSetBit(0)));
            List<String> pinned = new java.util.ArrayList<>();
            for (EventLoop loop : g.loops()) {
                pinned.add(loop.submit(CpuAffinity::procAllowedList).get(10, TimeUnit.SECONDS));
            }
            String first = String.valueOf(allowed.nextSetBit(0));
            assertEquals(List.of(String.valueOf(last), first, String.valueOf(last)), pinned, "loop i on cpus[i % 2]");
            assertEquals(List.of(last, allowed.nextSetBit(0)), g.pinned());
            assertTrue(g.toString().contains("pinned"), g.toString());

            g.pin(null);
            for (EventLoop loop : g.loops()) {
                assertEquals(before, loop.submit(CpuAffinity::procAllowedList).get(10, TimeUnit.SECONDS));
            }
            assertEquals(null, g.pinned());

            // a CPU the kernel refuses: a clear error naming it
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> g.pin(List.of(1000)));
            assertTrue(e.getMessage().contains("cannot pin thread lgpin-0 to CPUs 1000"), e.getMessage());
        }
    }
}
