package io.doubleface.internal.engine;

import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.ShardException;
import io.doubleface.model.Configuration;
import io.doubleface.sched.ReplyScheduler;
import io.doubleface.sched.ReplyOrder;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.util.ReferenceCountUtil;
import java.util.function.Supplier;

/**
 * The integrated reactor. Upstream and downstream I/O of a request share one event loop: the
 * request is planned on the loop that read it, its shard calls go out on connections registered
 * on that same loop, their replies are decoded there and processed by that loop's
 * {@link ReplyScheduler} at the end of the iteration in policy order, and the merge and the
 * response happen there too. A request never changes thread; no lock, no queue hand-off.
 *
 * <p>Threading: {@link #execute} runs on an I/O loop; all per-loop state (client, scheduler) is
 * indexed by loop and touched only by that loop.
 */
final class DoubleFaceModel extends AbstractModel {

    private final Supplier<? extends ReplyOrder> policy;
    private final LoopClient<?>[][] clients; // [loop][backend], loop-confined lazy init
    private final ReplyScheduler[] schedulers;

    DoubleFaceModel(Configuration.DoubleFace config, ModelContext ctx) {
        super(config, ctx);
        String named = config.replyOrder();
        this.policy = named != null ? ReplyOrder.factory(named) : ctx.defaultPolicy();
        newPolicy(); // validate now, not on the first request
        int n = ctx.io().size();
        this.clients = new LoopClient<?>[n][];
        this.schedulers = new ReplyScheduler[n];
    }

    /** A fresh policy instance for one loop; a user's factory returning {@code null} is refused. */
    private ReplyOrder newPolicy() {
        ReplyOrder p = policy.get();
        if (p == null) {
            throw new IllegalArgumentException("configuration '" + config.name()
                    + "': the reply order factory returned null (expected: a new policy per loop)");
        }
        return p;
    }

    /** Every backend's client on every I/O loop (shared by the DoubleFace configurations): a request may arrive on any. */
    @Override
    java.util.List<ClientWarmup> startConnects() {
        return ctx.warmIoClients();
    }

    @Override
    public void execute(FanoutExchange<?, ?, ?> ex) {
        int i = ctx.io().indexOf(ex.upstreamLoop());
        if (i < 0) {
            ex.finish(Outcome.INTERNAL_ERROR, "doubleface: upstream connection is not on an I/O loop");
            return;
        }
        if (ex.plan()) {
            send(ex, i);
        }
    }

    @Override
    public void sendRound(FanoutExchange<?, ?, ?> ex) {
        send(ex, ctx.io().indexOf(ex.upstreamLoop()));
    }

    /** Sends the current round of {@code ex} on the clients of I/O loop {@code i} (its upstream loop). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void send(FanoutExchange<?, ?, ?> ex, int i) {
        EventLoop loop = ex.upstreamLoop();
        LoopClient<?>[] perBackend = clients[i];
        ReplyScheduler scheduler = schedulers[i];
        if (perBackend == null) { // first request on this loop: loop-confined lazy init
            perBackend = clients[i] = new LoopClient<?>[ctx.backends().size()];
            scheduler = schedulers[i] = new ReplyScheduler((SingleThreadEventLoop) loop,
                    newPolicy(), ctx.io().stats().get(i));
        }
        Listener listener = new Listener(ex, scheduler);
        for (int c = 0, n = ex.calls(); c < n; c++) {
            int b = ex.backendIndex(c);
            LoopClient client = perBackend[b];
            if (client == null) {
                client = perBackend[b] = ctx.ioClient(b, i);
            }
            send(client, ex, c, listener);
        }
    }

    /** Per-request reply listener: replies are parked for the end-of-iteration scheduler. */
    private static final class Listener implements ReplyListener {
        private final FanoutExchange<?, ?, ?> ex;
        private final ReplyScheduler scheduler;

        Listener(FanoutExchange<?, ?, ?> ex, ReplyScheduler scheduler) {
            this.ex = ex;
            this.scheduler = scheduler;
        }

        @Override
        public void onReply(int tag, Object reply) {
            if (ex.isFinished()) { // answered already (deadline, failure): nothing to process
                ReferenceCountUtil.release(reply);
                return;
            }
            ex.replyArrived();
            scheduler.enqueue(ex, tag, reply);
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            if (ex.failCall(tag, cause)) {
                ex.completeRound();
            }
        }
    }
}
