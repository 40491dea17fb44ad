package io.doubleface.model;

import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ReplyListener;
import io.doubleface.driver.ShardException;
import io.doubleface.engine.FanoutExchange;
import io.doubleface.engine.Outcome;
import io.doubleface.sched.ReplyScheduler;
import io.doubleface.sched.SchedulingPolicy;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;

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

    private final String policy;
    private final LoopClient[] clients;
    private final ReplyScheduler[] schedulers;

    DoubleFaceModel(Configuration config, ModelContext ctx) {
        super(config, ctx);
        this.policy = config.policy() != null ? config.policy() : ctx.defaultPolicy();
        SchedulingPolicy.create(policy); // validate now, not on the first request
        int n = ctx.io().size();
        this.clients = new LoopClient[n];
        this.schedulers = new ReplyScheduler[n];
    }

    /** The scheduling policy in use. */
    String policy() {
        return policy;
    }

    @Override
    public void execute(FanoutExchange<?, ?, ?> ex) {
        EventLoop loop = ex.upstreamLoop();
        int i = ctx.io().indexOf(loop);
        if (i < 0) {
            ex.finish(Outcome.INTERNAL_ERROR, "doubleface: upstream connection is not on an I/O loop");
            return;
        }
        if (!ex.plan()) {
            return;
        }
        LoopClient client = clients[i];
        ReplyScheduler scheduler = schedulers[i];
        if (client == null) { // first request on this loop: loop-confined lazy init
            client = clients[i] = ctx.ioClient(i);
            scheduler = schedulers[i] = new ReplyScheduler((SingleThreadEventLoop) loop,
                    SchedulingPolicy.create(policy), ctx.io().stats().get(i));
        }
        Listener listener = new Listener(ex, scheduler);
        for (int c = 0, n = ex.calls(); c < n; c++) {
            client.send(ex.shard(c), ex.request(c), listener, c);
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
        public void onReply(int tag, ByteBuf reply) {
            if (ex.isFinished()) { // answered already (deadline, failure): nothing to process
                reply.release();
                return;
            }
            scheduler.enqueue(ex, tag, reply);
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            ex.fail(tag, cause);
        }
    }
}
