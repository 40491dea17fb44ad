package io.doubleface.model;

import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.ShardException;
import io.doubleface.engine.FanoutExchange;
import io.doubleface.engine.Outcome;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * Type-1: the event loop reads the request and plans it, then hands each shard call to a worker
 * pool whose threads make blocking calls; onReply runs on the worker, and the last reply hops to
 * the loop for the merge.
 *
 * <p>Threading: {@link #execute} on an I/O loop; calls and onReply on {@code t1-wk} workers.
 */
final class Type1Model extends AbstractModel {

    private final ThreadPoolExecutor workers;
    private final BlockingClient client;

    Type1Model(Configuration config, ModelContext ctx) {
        super(config, ctx);
        this.client = ctx.blocking();
        this.workers = fixedPool("t1-wk", config.workers(), ctx.queueLimit());
    }

    @Override
    public void execute(FanoutExchange<?, ?, ?> ex) {
        if (!ex.plan()) {
            return;
        }
        for (int c = 0, n = ex.calls(); c < n; c++) {
            final int call = c;
            if (!submit(workers, () -> callOne(ex, call), ex, "type1 worker")) {
                return;
            }
        }
    }

    private void callOne(FanoutExchange<?, ?, ?> ex, int call) {
        if (ex.isFinished()) {
            return;
        }
        long left = ex.nanosLeft();
        if (left <= 0) {
            ex.finish(Outcome.TIMEOUT, "deadline exceeded before shard " + ex.shard(call) + " was called");
            return;
        }
        ByteBuf reply;
        try {
            reply = client.call(ex.shard(call), ex.request(call), left);
        } catch (ShardException e) {
            ex.fail(call, e);
            return;
        }
        if (ex.processReply(call, reply)) {
            mergeOnUpstream(ex);
        }
    }

    @Override
    public void close() {
        shutdown(workers);
    }
}
