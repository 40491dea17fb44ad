package io.doubleface.internal.engine;

import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.model.Configuration;
import io.netty.channel.EventLoop;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * Type-2a: separate frontend and backend loop groups, as when a mid-tier on Netty uses a driver
 * with its own event loops (Lettuce, grpc-java with its own group). Plan and merge run on the
 * frontend loop F; each shard's connection lives on one backend loop ({@code shard % B}, as a
 * driver assigns connections round-robin); a request hops F→B once per backend loop it uses,
 * its replies are processed (onReply) on B, and the last one hops B→F for the merge.
 *
 * <p>Dispatch ({@code type2a-…-Nw}, μTune's ADB/ADP): the frontend loop only hands the request to
 * a fixed pool of N {@code t2a-wk} workers, which plan it and hand the calls to the backend loops.
 *
 * <p>Threading: {@link #execute} on a frontend loop; plan there or on a worker; listeners on
 * backend loops.
 */
final class Type2aModel extends AbstractModel {

    private final LoopGroup backend;
    private final LoopClient<?>[][] clients; // [backend loop][backend]
    private final ThreadPoolExecutor workers;

    Type2aModel(Configuration.Type2a config, ModelContext ctx) {
        super(config, ctx);
        int b = config.backends() == 0 ? ctx.io().size() : config.backends();
        this.backend = ctx.newLoopGroup("t2a-be", b);
        this.clients = new LoopClient<?>[b][ctx.backends().size()];
        for (int i = 0; i < b; i++) {
            for (int k = 0; k < ctx.backends().size(); k++) {
                clients[i][k] = ctx.backends().get(k).driver().openOn(backend.loops().get(i));
            }
        }
        this.workers = config.dispatchWorkers() == 0 ? null : fixedPool("t2a-wk", config.dispatchWorkers(), ctx.queueLimit());
    }

    @Override
    public java.util.List<LoopGroup> ownLoopGroups() {
        return java.util.List.of(backend);
    }

    /** The model's own client of every backend on every one of its loops. */
    @Override
    java.util.List<ClientWarmup> startConnects() {
        return ctx.warm(backend, clients);
    }

    @Override
    public void execute(FanoutExchange<?, ?, ?> ex) {
        if (workers == null) {
            planAndSend(ex);
        } else {
            submit(workers, () -> planAndSend(ex), ex, "type2a dispatch worker");
        }
    }

    private void planAndSend(FanoutExchange<?, ?, ?> ex) {
        if (ex.isFinished()) { // the deadline passed while queued for a worker
            return;
        }
        if (ex.plan()) {
            sendRound(ex);
        }
    }

    @Override
    public void sendRound(FanoutExchange<?, ?, ?> ex) {
        Listener listener = new Listener(ex);
        int b = clients.length;
        if (b == 1) {
            backend.loops().get(0).execute(() -> sendAll(ex, clients[0], listener, 0, 1));
            return;
        }
        // one hop per backend loop the request uses
        long used = 0;
        for (int c = 0, n = ex.calls(); c < n; c++) {
            used |= 1L << (ex.shard(c) % b % 64);
        }
        for (int i = 0; i < b; i++) {
            if (b > 64 || (used & (1L << i)) != 0) {
                final int backendIndex = i;
                LoopClient<?>[] perBackend = clients[i];
                backend.loops().get(i).execute(() -> sendAll(ex, perBackend, listener, backendIndex, b));
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void sendAll(FanoutExchange<?, ?, ?> ex, LoopClient<?>[] perBackend, Listener l, int backendIndex,
            int b) {
        for (int c = 0, n = ex.calls(); c < n; c++) {
            if (ex.shard(c) % b == backendIndex) {
                LoopClient client = perBackend[ex.backendIndex(c)];
                send(client, ex, c, l);
            }
        }
    }

    @Override
    public void activate() {
        super.activate();
        backend.setBusyPoll(config.busyPoll());
    }

    @Override
    public void park() {
        backend.setBusyPoll(false);
    }

    @Override
    public void close() {
        cancelWarmups();
        for (LoopClient<?>[] perBackend : clients) {
            for (LoopClient<?> c : perBackend) {
                EventLoop loop = c.loop();
                loop.execute(c::close);
            }
        }
        backend.close();
        if (workers != null) {
            shutdown(workers);
        }
    }

    /** onReply on the backend loop; the last reply hops to the frontend loop for merge. */
    private static final class Listener implements ReplyListener {
        private final FanoutExchange<?, ?, ?> ex;

        Listener(FanoutExchange<?, ?, ?> ex) {
            this.ex = ex;
        }

        @Override
        public void onReply(int tag, Object reply) {
            ex.replyArrived();
            if (ex.processReply(tag, reply)) {
                mergeOnUpstream(ex);
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
