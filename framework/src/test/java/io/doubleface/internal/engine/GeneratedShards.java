package io.doubleface.internal.engine;

import io.doubleface.testing.TestRead;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.ShardException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A socket-free test driver: every shard answers reads of keys {@code 0..}{@link #RECORDS}{@code -1}
 * answers with {@link TestRead#reply}. The loop face answers each send in a later task on its
 * loop; the blocking face answers at once.
 *
 * <p>Test controls: {@link #reverseNext(int)} holds the next {@code n} calls and answers them in
 * reverse order (so requests complete out of order); {@link #failShard} makes one shard fail.
 */
public final class GeneratedShards implements ShardDriver<TestRead> {

    /** Keys in the dataset: {@value}. */
    public static final long RECORDS = 1000;

    private static final long GATE_GUARD_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final int shards;
    private final Object lock = new Object();
    private final List<LoopClient> clients = new ArrayList<>();
    private final List<Runnable> held = new ArrayList<>();
    private int loopGate;
    private int blockingGate;
    private int blockingArrived;
    private int blockingReturned;
    private volatile int failingShard = -1;

    public GeneratedShards(int shards) {
        this.shards = shards;
    }

    /** Holds the next {@code n} calls and answers them last-first. */
    public void reverseNext(int n) {
        synchronized (lock) {
            loopGate = n;
            blockingGate = n;
            blockingArrived = 0;
            blockingReturned = 0;
            held.clear();
        }
    }

    /** Calls to {@code shard} fail with {@link ShardException.Kind#UNAVAILABLE} (-1: none). */
    public void failShard(int shard) {
        failingShard = shard;
    }

    /** The canonical reply to {@code request}, in a new buffer. */
    public static ByteBuf reply(TestRead request) {
        return request.reply();
    }

    @Override
    public int shardCount() {
        return shards;
    }

    @Override
    public String describe() {
        return "generated://" + shards;
    }

    @Override
    public LoopClient<TestRead> openOn(EventLoop loop) {
        LoopClient<TestRead> c = new LoopClient<>() {
            @Override
            public EventLoop loop() {
                return loop;
            }

            @Override
            public void send(int shard, TestRead request, ReplyListener listener, int tag) {
                if (!loop.inEventLoop()) {
                    throw new IllegalStateException("send off the client's loop");
                }
                Runnable answer = () -> loop.execute(() -> {
                    if (shard == failingShard) {
                        listener.onFailure(tag, new ShardException(ShardException.Kind.UNAVAILABLE, shard, "down"));
                    } else {
                        listener.onReply(tag, reply(request));
                    }
                });
                List<Runnable> release = null;
                synchronized (lock) {
                    if (loopGate > 0) {
                        held.add(answer);
                        if (held.size() == loopGate) {
                            release = new ArrayList<>(held);
                            held.clear();
                            loopGate = 0;
                        }
                    } else {
                        release = List.of(answer);
                    }
                }
                if (release != null) {
                    for (int i = release.size() - 1; i >= 0; i--) {
                        release.get(i).run();
                    }
                }
            }

            @Override
            public void close() {
            }
        };
        synchronized (lock) {
            clients.add(c);
        }
        return c;
    }

    @Override
    public BlockingClient<TestRead> openBlocking() {
        return new BlockingClient<>() {
            @Override
            public ByteBuf call(int shard, TestRead request, long timeoutNanos) throws ShardException {
                awaitTurn(shard);
                try {
                    if (shard == failingShard) {
                        throw new ShardException(ShardException.Kind.UNAVAILABLE, shard, "down");
                    }
                    return reply(request);
                } finally {
                    returned();
                }
            }

            @Override
            public void callAll(int[] shardIds, java.util.List<TestRead> requests, long timeoutNanos, Sink sink) {
                for (int i = 0; i < shardIds.length; i++) {
                    ByteBuf r;
                    try {
                        r = call(shardIds[i], requests.get(i), timeoutNanos);
                    } catch (ShardException e) {
                        sink.onFailure(i, e);
                        continue;
                    }
                    sink.onReply(i, r);
                }
            }

            @Override
            public void close() {
            }
        };
    }

    private final ThreadLocal<int[]> turn = new ThreadLocal<>();

    /** Blocking gate: the i-th of n held calls returns after calls i+1 .. n-1 have returned. */
    private void awaitTurn(int shard) {
        synchronized (lock) {
            if (blockingGate == 0 || blockingArrived >= blockingGate) {
                turn.remove();
                return;
            }
            int me = blockingArrived++;
            turn.set(new int[] {me});
            lock.notifyAll();
            long end = System.nanoTime() + GATE_GUARD_NANOS;
            while (!(blockingArrived == blockingGate && blockingReturned == blockingGate - 1 - me)) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    return; // hang guard: give up ordering
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void returned() {
        if (turn.get() == null) {
            return;
        }
        turn.remove();
        synchronized (lock) {
            blockingReturned++;
            if (blockingReturned == blockingGate) {
                blockingGate = 0;
            }
            lock.notifyAll();
        }
    }

    @Override
    public void close() {
    }
}
