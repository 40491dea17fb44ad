package io.doubleface.loop;

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
            int n = delegate.run(context);
            stats.recordIteration(couldBlock, n);
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
}
