package io.doubleface.driver.spi;

import io.doubleface.driver.Command;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A blocking face made of a loop client ({@link ShardDrivers#blockingOver}): the calling thread
 * hands its calls to the loop client on that client's loop and waits for the outcomes. So a driver
 * whose loop client routes calls (a Redis Cluster's slots, replica groups) gives the thread models
 * the very code the loop models use — one implementation, tested once.
 *
 * <p>Thread-safe: any number of threads call at once; each call waits only for its own outcomes.
 * An outcome that arrives after its caller stopped waiting (a timeout) is released, never lost.
 */
final class LoopBlockingClient<C extends Command<?>> implements BlockingClient<C> {

    private final LoopClient<C> client;
    private final EventLoop loop;
    private final Runnable onClose;
    private volatile boolean closed;

    LoopBlockingClient(LoopClient<C> client, Runnable onClose) {
        this.client = client;
        this.loop = client.loop();
        this.onClose = onClose;
    }

    @Override
    public Object call(int shard, C command, long timeoutNanos) throws ShardException {
        Waiter w = new Waiter(1);
        submit(w, new int[] {shard}, List.of(command));
        Outcome o = w.next(System.nanoTime() + timeoutNanos);
        if (o == null) {
            w.abandon();
            throw new ShardException(Kind.TIMEOUT, shard, "no reply within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
        }
        if (o.failure != null) {
            throw o.failure;
        }
        return o.reply;
    }

    @Override
    public void callAll(int[] shards, List<C> commands, long timeoutNanos, Sink sink) {
        if (shards.length != commands.size()) {
            throw new IllegalArgumentException("shards: " + shards.length + ", commands: " + commands.size()
                    + " (expected: as many)");
        }
        Waiter w = new Waiter(shards.length);
        submit(w, shards, commands);
        long deadline = System.nanoTime() + timeoutNanos;
        boolean[] seen = new boolean[shards.length];
        for (int got = 0; got < shards.length; got++) {
            Outcome o = w.next(deadline);
            if (o == null) {
                w.abandon();
                for (int i = 0; i < shards.length; i++) {
                    if (!seen[i]) {
                        sink.onFailure(i, new ShardException(Kind.TIMEOUT, shards[i], "no reply within "
                                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
                    }
                }
                return;
            }
            seen[o.index] = true;
            if (o.failure != null) {
                sink.onFailure(o.index, o.failure);
            } else {
                sink.onReply(o.index, o.reply);
            }
        }
    }

    private void submit(Waiter w, int[] shards, List<C> commands) {
        if (closed) {
            for (int i = 0; i < shards.length; i++) {
                w.onFailure(i, new ShardException(Kind.CLOSED, shards[i], "client closed"));
            }
            return;
        }
        try {
            loop.execute(() -> {
                for (int i = 0; i < shards.length; i++) {
                    client.send(shards[i], commands.get(i), w, i);
                }
            });
        } catch (RejectedExecutionException e) {
            for (int i = 0; i < shards.length; i++) {
                w.onFailure(i, new ShardException(Kind.CLOSED, shards[i], "driver closed"));
            }
        }
    }

    /** Connects the loop client on its loop ({@link LoopClient#connect()}) and waits for it. */
    @Override
    public void connect() throws ShardException {
        if (closed) {
            throw new ShardException(Kind.CLOSED, -1, "client closed");
        }
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        try {
            loop.execute(() -> {
                try {
                    client.connect().whenComplete((v, e) -> {
                        if (e == null) {
                            done.complete(null);
                        } else {
                            done.completeExceptionally(e);
                        }
                    });
                } catch (RuntimeException e) {
                    done.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new ShardException(Kind.CLOSED, -1, "driver closed");
        }
        ShardDrivers.join(done);
    }

    private record Outcome(int index, Object reply, ShardException failure) {}

    /** The outcomes of one caller's calls, handed from the loop to the waiting thread. */
    private static final class Waiter implements ReplyListener {
        private final ArrayDeque<Outcome> ready;
        private boolean abandoned;

        Waiter(int n) {
            this.ready = new ArrayDeque<>(n);
        }

        @Override
        public synchronized void onReply(int index, Object reply) {
            if (abandoned) {
                ReferenceCountUtil.release(reply);
                return;
            }
            ready.add(new Outcome(index, reply, null));
            notifyAll();
        }

        @Override
        public synchronized void onFailure(int index, ShardException cause) {
            if (!abandoned) {
                ready.add(new Outcome(index, null, cause));
                notifyAll();
            }
        }

        /** The next outcome, or {@code null} at the deadline. */
        synchronized Outcome next(long deadline) {
            while (ready.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
            return ready.poll();
        }

        /** The caller stops waiting: later outcomes are released on arrival, and those already here now. */
        synchronized void abandon() {
            abandoned = true;
            for (Outcome o : ready) {
                ReferenceCountUtil.release(o.reply);
            }
            ready.clear();
        }
    }

    @Override
    public void close() {
        closed = true;
        client.close();
        onClose.run();
    }
}
