package io.doubleface.internal.loop;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Wraps an {@link IoHandlerFactory} so each handler it makes counts, per loop, its iterations
 * (each {@link IoHandler#run} is one {@code epoll_wait}/{@code select} call, blocking or not) and
 * the I/O events handled per iteration. These are the paper's "wake-ups" and "events per wake-up".
 *
 * <p>It also splits the loop's time into <em>busy</em> and <em>idle</em> ({@link LoopStats#busyNanos},
 * {@link LoopStats#idleNanos}): idle is the part of each {@link IoHandler#run} that is not
 * processing ready I/O (waiting in {@code epoll_wait}, or spinning in the busy-poll wait), which
 * the handler reports through {@link IoHandlerContext#reportActiveIoTime}; busy is the processing
 * of ready I/O plus everything between two runs (tasks, timers). Two {@code nanoTime} calls per
 * iteration here and two in Netty's handler — per iteration, not per request.
 */
final class CountingIoHandlerFactory implements IoHandlerFactory {

    private final IoHandlerFactory delegate;
    private final String group;
    private final List<LoopStats> stats = new CopyOnWriteArrayList<>();

    CountingIoHandlerFactory(IoHandlerFactory delegate, String group) {
        this.delegate = delegate;
        this.group = group;
    }

    List<LoopStats> stats() {
        return stats;
    }

    @Override
    public IoHandler newHandler(ThreadAwareExecutor ioExecutor) {
        LoopStats s = new LoopStats(group, group + "-" + stats.size());
        stats.add(s);
        return new CountingIoHandler(delegate.newHandler(ioExecutor), s);
    }

    @Override
    public boolean isChangingThreadSupported() {
        return delegate.isChangingThreadSupported();
    }

    private static final class CountingIoHandler implements IoHandler {
        private final IoHandler delegate;
        private final LoopStats stats;
        private final ActiveTimeContext timing = new ActiveTimeContext();
        /** nanoTime at which the previous run ended; 0 before the first. */
        private long lastRunEnd;

        CountingIoHandler(IoHandler delegate, LoopStats stats) {
            this.delegate = delegate;
            this.stats = stats;
        }

        @Override
        public void initialize() {
            delegate.initialize();
        }

        @Override
        public int run(IoHandlerContext context) {
            boolean couldBlock = context.canBlock();
            long start = System.nanoTime();
            timing.outer = context;
            timing.active = 0;
            int n = delegate.run(timing);
            long end = System.nanoTime();
            long active = Math.min(timing.active, end - start);
            long between = lastRunEnd == 0 ? 0 : start - lastRunEnd;
            lastRunEnd = end;
            stats.recordIteration(couldBlock, n, between + active, end - start - active);
            return n;
        }

        @Override
        public void prepareToDestroy() {
            delegate.prepareToDestroy();
        }

        @Override
        public void destroy() {
            delegate.destroy();
        }

        @Override
        public IoRegistration register(IoHandle handle) throws Exception {
            return delegate.register(handle);
        }

        @Override
        public void wakeup() {
            delegate.wakeup();
        }

        @Override
        public boolean isCompatible(Class<? extends IoHandle> handleType) {
            return delegate.isCompatible(handleType);
        }
    }

    /**
     * The context handed to the wrapped handler: the loop's own, except that it always asks for
     * and collects the active I/O time (and still forwards it when the loop wants it too).
     * Confined to the loop thread.
     */
    private static final class ActiveTimeContext implements IoHandlerContext {
        IoHandlerContext outer;
        long active;

        @Override
        public boolean canBlock() {
            return outer.canBlock();
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return outer.delayNanos(currentTimeNanos);
        }

        @Override
        public long deadlineNanos() {
            return outer.deadlineNanos();
        }

        @Override
        public boolean shouldReportActiveIoTime() {
            return true;
        }

        @Override
        public void reportActiveIoTime(long activeNanos) {
            active += activeNanos;
            if (outer.shouldReportActiveIoTime()) {
                outer.reportActiveIoTime(activeNanos);
            }
        }
    }
}
