package io.doubleface.internal.engine;

import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.model.Configuration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * Type-2b: a backend reactor does the shard I/O and hands every completion to a worker pool that
 * runs onReply — the shape of a driver on the JDK's asynchronous channels (an AIO group with a
 * cached thread pool), e.g. the MongoDB driver's default transport. Plan and merge run on the
 * frontend loop; the last reply hops worker→frontend for the merge.
 *
 * <p>Pool: on-demand cached by default (a thread per completion when none is idle, like the JDK
 * AIO default group); {@code type2b-fixed-N} uses N threads and a bounded queue.
 *
 * <p>Threading: {@link #execute} on a frontend loop; listeners on reactor loops; onReply on workers.
 */
final class Type2bModel extends AbstractModel {

    private final LoopGroup reactors;
    private final LoopClient<?>[][] clients; // [reactor][backend]
    private final ThreadPoolExecutor workers;

    Type2bModel(Configuration.Type2b config, ModelContext ctx) {
        super(config, ctx);
        int r = config.reactors() == 0 ? 1 : config.reactors();
        this.reactors = ctx.newLoopGroup("t2b-rx", r);
        this.clients = new LoopClient<?>[r][ctx.backends().size()];
        for (int i = 0; i < r; i++) {
            for (int k = 0; k < ctx.backends().size(); k++) {
                clients[i][k] = ctx.backends().get(k).driver().openOn(reactors.loops().get(i));
            }
        }
        this.workers = config.fixedPool()
                ? fixedPool("t2b-wk", config.fixedWorkers(), ctx.queueLimit())
                : cachedPool("t2b-wk");
    }

    @Override
    public List<LoopGroup> ownLoopGroups() {
        return List.of(reactors);
    }

    /** The model's own client of every backend on every one of its loops. */
    @Override
    java.util.List<ClientWarmup> startConnects() {
        return ctx.warm(reactors, clients);
    }

    @Override
    public void execute(FanoutExchange<?, ?, ?> ex) {
        if (ex.plan()) {
            sendRound(ex);
        }
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void sendRound(FanoutExchange<?, ?, ?> ex) {
        Listener listener = new Listener(ex, workers);
        int r = clients.length;
        for (int i = 0; i < r; i++) {
            final int reactor = i;
            LoopClient<?>[] perBackend = clients[i];
            boolean used = false;
            for (int c = 0, n = ex.calls(); c < n && !used; c++) {
                used = ex.shard(c) % r == reactor;
            }
            if (used) {
                reactors.loops().get(i).execute(() -> {
                    for (int c = 0, n = ex.calls(); c < n; c++) {
                        if (ex.shard(c) % r == reactor) {
                            LoopClient client = perBackend[ex.backendIndex(c)];
                            send(client, ex, c, listener);
                        }
                    }
                });
            }
        }
    }

    @Override
    public void activate() {
        super.activate();
        reactors.setBusyPoll(config.busyPoll());
    }

    @Override
    public void park() {
        reactors.setBusyPoll(false);
    }

    @Override
    public void close() {
        cancelWarmups();
        for (LoopClient<?>[] perBackend : clients) {
            for (LoopClient<?> c : perBackend) {
                c.loop().execute(c::close);
            }
        }
        reactors.close();
        shutdown(workers);
    }

    /** Completion on the reactor → onReply on a worker → merge on the frontend loop. */
    private static final class Listener implements ReplyListener {
        private final FanoutExchange<?, ?, ?> ex;
        private final ThreadPoolExecutor workers;

        Listener(FanoutExchange<?, ?, ?> ex, ThreadPoolExecutor workers) {
            this.ex = ex;
            this.workers = workers;
        }

        @Override
        public void onReply(int tag, Object reply) {
            ex.replyArrived();
            try {
                workers.execute(() -> {
                    if (ex.processReply(tag, reply)) {
                        mergeOnUpstream(ex);
                    }
                });
            } catch (RejectedExecutionException e) {
                io.netty.util.ReferenceCountUtil.release(reply);
                ex.finish(Outcome.OVERLOADED, "overloaded: type2b worker queue full");
            }
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            if (ex.failCall(tag, cause)) {
                mergeOnUpstream(ex);
            }
        }
    }
}
