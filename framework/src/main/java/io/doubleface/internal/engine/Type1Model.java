package io.doubleface.internal.engine;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.CallTrace;
import io.doubleface.driver.ShardException;
import io.doubleface.model.Configuration;
import java.util.List;
import java.util.Map;
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
    private final BlockingClient<?>[] clients; // by backend

    Type1Model(Configuration.Type1 config, ModelContext ctx) {
        super(config, ctx);
        this.clients = new BlockingClient<?>[ctx.backends().size()];
        for (int b = 0; b < clients.length; b++) {
            clients[b] = ctx.blocking(b);
        }
        this.workers = fixedPool("t1-wk", config.workers(), ctx.queueLimit());
    }

    /** The shared blocking clients of the backends. */
    @Override
    List<ClientWarmup> startConnects() {
        return ctx.warmBlockingClients();
    }

    @Override
    public void execute(FanoutExchange<?, ?, ?> ex) {
        if (ex.plan()) {
            sendRound(ex);
        }
    }

    @Override
    public void sendRound(FanoutExchange<?, ?, ?> ex) {
        for (int c = 0, n = ex.calls(); c < n; c++) {
            int shard = ex.shard(c);
            Object command = ex.command(c);
            BlockingClient<?> client = clients[ex.backendIndex(c)];
            int tag = ex.tag(c);
            Map<String, String> headers = ex.callHeaders(c); // null unless OpenTelemetry is on
            if (!submit(workers, () -> callOne(ex, client, shard, command, tag, headers), ex, "type1 worker")) {
                return;
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void callOne(FanoutExchange<?, ?, ?> ex, BlockingClient client, int shard, Object command, int tag,
            Map<String, String> headers) {
        if (ex.isFinished()) {
            return;
        }
        long left = ex.nanosLeft();
        if (left <= 0) {
            ex.finish(Outcome.TIMEOUT, "deadline exceeded before shard " + shard + " was called");
            return;
        }
        Object reply;
        if (headers != null) {
            CallTrace.set(List.of(headers));
        }
        try {
            reply = client.call(shard, (io.doubleface.driver.Command) command, left);
        } catch (ShardException e) {
            if (ex.failCall(tag, e)) {
                mergeOnUpstream(ex);
            }
            return;
        } finally {
            if (headers != null) {
                CallTrace.clear();
            }
        }
        ex.replyArrived();
        if (ex.processReply(tag, reply)) {
            mergeOnUpstream(ex);
        }
    }

    @Override
    public void close() {
        shutdown(workers);
    }
}
