package io.doubleface.model;

import io.doubleface.api.ShardRequest;
import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.ShardException;
import io.doubleface.engine.FanoutExchange;
import io.doubleface.engine.Outcome;
import io.doubleface.loop.Threads;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Thread-per-request: the event loop only decodes the request and hands it to a request thread,
 * which plans, calls all shards with blocking I/O (all requests written before any reply is read,
 * so shards work in parallel), runs onReply for each reply and merges — all on that one thread.
 * Pooled platform threads ({@code thread-N}) or a virtual thread per request ({@code thread-virtual}).
 *
 * <p>In-line ({@link Configuration#inline()}, μTune's SIB/SIP): no hand-off at all; the I/O loop
 * that read the request runs it to the end, blocking in the shard calls. Other connections on
 * that loop wait meanwhile — the queueing that makes in-line models good at low load and bad at
 * high load.
 *
 * <p>Threading: {@link #execute} on an I/O loop; everything else on a {@code req} thread (or,
 * in-line, on that I/O loop).
 */
final class ThreadPerRequestModel extends AbstractModel {

    private final ExecutorService threads;
    private final BlockingClient client;

    ThreadPerRequestModel(Configuration config, ModelContext ctx) {
        super(config, ctx);
        this.client = ctx.blocking();
        this.threads = config.inline() ? null
                : config.virtualThreads()
                ? Executors.newThreadPerTaskExecutor(Threads.virtual("vreq"))
                : fixedPool("req", config.workers(), ctx.queueLimit());
    }

    @Override
    public void execute(FanoutExchange<?, ?, ?> ex) {
        if (threads == null) {
            run(ex);
        } else {
            submit(threads, () -> run(ex), ex, "request thread");
        }
    }

    private void run(FanoutExchange<?, ?, ?> ex) {
        if (ex.isFinished()) { // the deadline passed while queued
            return;
        }
        if (!ex.plan()) {
            return;
        }
        int n = ex.calls();
        int[] shards = new int[n];
        ShardRequest[] requests = new ShardRequest[n];
        for (int c = 0; c < n; c++) {
            shards[c] = ex.shard(c);
            requests[c] = ex.request(c);
        }
        long left = ex.nanosLeft();
        if (left <= 0) {
            ex.finish(Outcome.TIMEOUT, "deadline exceeded before the shards were called");
            return;
        }
        client.callAll(shards, requests, left, new BlockingClient.Sink() {
            @Override
            public void onReply(int index, ByteBuf reply) {
                if (ex.processReply(index, reply)) {
                    ex.mergeAndComplete();
                }
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                ex.fail(index, cause);
            }
        });
    }

    @Override
    public void close() {
        if (threads != null) {
            shutdown(threads);
        }
    }
}
