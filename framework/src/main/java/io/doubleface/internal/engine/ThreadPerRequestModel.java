package io.doubleface.internal.engine;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.CallTrace;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.Threads;
import io.doubleface.model.Configuration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Thread-per-request: the event loop only decodes the request and hands it to a request thread,
 * which plans, calls all shards with blocking I/O (all requests written before any reply is read,
 * so shards work in parallel), runs onReply for each reply and merges — all on that one thread.
 * Pooled platform threads ({@code thread-N}) or a virtual thread per request ({@code thread-virtual}).
 *
 * <p>In-line ({@link Configuration.ThreadPerRequest#inline()}, μTune's SIB/SIP): no hand-off at all; the I/O loop
 * that read the request runs it to the end, blocking in the shard calls. Other connections on
 * that loop wait meanwhile — the queueing that makes in-line models good at low load and bad at
 * high load.
 *
 * <p>Threading: {@link #execute} on an I/O loop; everything else on a {@code req} thread (or,
 * in-line, on that I/O loop).
 */
final class ThreadPerRequestModel extends AbstractModel {

    private final ExecutorService threads;
    private final BlockingClient<?>[] clients; // by backend

    ThreadPerRequestModel(Configuration.ThreadPerRequest config, ModelContext ctx) {
        super(config, ctx);
        this.clients = new BlockingClient<?>[ctx.backends().size()];
        for (int b = 0; b < clients.length; b++) {
            clients[b] = ctx.blocking(b);
        }
        this.threads = config.inline() ? null
                : config.virtualThreads()
                ? Executors.newThreadPerTaskExecutor(Threads.virtual("vreq"))
                : fixedPool("req", config.threads(), ctx.queueLimit());
    }

    /** The shared blocking clients of the backends. */
    @Override
    List<ClientWarmup> startConnects() {
        return ctx.warmBlockingClients();
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
        try {
            if (!ex.plan()) {
                return;
            }
            // Every round on this thread: a merge that plans another round (completeRound, inside the
        // last callback of this round's callAll) only marks it; it is sent once callAll returned.
            do {
                callRound(ex);
            } while (ex.takeRoundToSend());
        } catch (RuntimeException e) {
            // a driver's bug must not leave the request to its deadline
            ex.finish(Outcome.INTERNAL_ERROR, "request thread failed"); // the exception, rethrown, is logged
            throw e;
        }
    }

    /** For this model a next round is sent by {@link #run}'s loop, on the request thread. */
    @Override
    public void sendRound(FanoutExchange<?, ?, ?> ex) {
        ex.markRoundToSend();
    }

    /**
     * Calls every shard of the current round with blocking I/O from this thread: one
     * {@link BlockingClient#callAll} per backend the round uses (all its requests written before
     * any reply is awaited), backends one after the other.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void callRound(FanoutExchange<?, ?, ?> ex) {
        int n = ex.calls();
        long usedBackends = 0;
        for (int c = 0; c < n; c++) {
            usedBackends |= 1L << Math.min(63, ex.backendIndex(c));
        }
        for (int b = 0; b < clients.length; b++) {
            if (b < 63 && (usedBackends & (1L << b)) == 0) {
                continue;
            }
            int k = 0;
            for (int c = 0; c < n; c++) {
                if (ex.backendIndex(c) == b) {
                    k++;
                }
            }
            if (k == 0) {
                continue;
            }
            int[] shards = new int[k];
            Command<?>[] commands = new Command<?>[k]; // handed over as a List: C[] would not be a C[] at run time
            int[] tags = new int[k];
            List<Map<String, String>> headers = null; // with OpenTelemetry on: per call
            for (int c = 0, j = 0; c < n; c++) {
                if (ex.backendIndex(c) == b) {
                    Map<String, String> h = ex.callHeaders(c);
                    if (h != null) {
                        if (headers == null) {
                            headers = new ArrayList<>(Collections.nCopies(k, null));
                        }
                        headers.set(j, h);
                    }
                    shards[j] = ex.shard(c);
                    commands[j] = ex.command(c);
                    tags[j++] = ex.tag(c);
                }
            }
            if (ex.isFinished()) {
                return;
            }
            long left = ex.nanosLeft();
            if (left <= 0) {
                ex.finish(Outcome.TIMEOUT, "deadline exceeded before the shards were called");
                return;
            }
            if (headers != null) {
                CallTrace.set(headers);
            }
            try {
                callAll((BlockingClient) clients[b], ex, shards, commands, tags, left);
            } finally {
                if (headers != null) {
                    CallTrace.clear();
                }
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void callAll(BlockingClient client, FanoutExchange<?, ?, ?> ex, int[] shards, Command<?>[] commands,
            int[] tags, long left) {
        client.callAll(shards, java.util.Arrays.asList(commands), left, new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object reply) {
                ex.replyArrived();
                if (ex.processReply(tags[index], reply)) {
                    ex.completeRound();
                }
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                if (ex.failCall(tags[index], cause)) {
                    ex.completeRound();
                }
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
