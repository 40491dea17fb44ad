package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import io.doubleface.driver.Command;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.CallTrace;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.spi.DriverLoops;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The blocking gRPC client: one {@link ManagedChannel} per shard, shared by every calling thread
 * (HTTP/2 multiplexes their calls on one connection), whose connections live on a small loop
 * group owned by this client ({@value GrpcDriver#BLOCKING_LOOP_GROUP_NAME}).
 *
 * <ul>
 *   <li>{@link #call}: a blocking unary call (grpc-java's {@code ThreadlessExecutor}: the reply
 *       is processed on the calling thread);
 *   <li>{@link #callAll}: every call is started before any is awaited; completions are queued by
 *       the transport loop and handed to the sink on the calling thread in completion order.
 * </ul>
 * Every call carries a gRPC deadline (the given timeout), so nothing waits longer.
 *
 * <p>Threading: thread-safe. {@link #close} shuts the channels and the loop group down.
 */
final class GrpcBlockingClient implements BlockingClient<Command<?>> {

    /** Loops of the blocking client's group: {@value}. */
    static final int LOOPS = 2;

    private final GrpcDriver driver;
    private final DriverLoops group;
    private final ManagedChannel[] channels;
    private final long[] lastBackoffReset;
    private volatile boolean closed;

    GrpcBlockingClient(GrpcDriver driver) {
        this.driver = driver;
        this.group = DriverLoops.open(GrpcDriver.BLOCKING_LOOP_GROUP_NAME, LOOPS, Transport.AUTO);
        this.channels = new ManagedChannel[driver.shardCount()];
        this.lastBackoffReset = new long[driver.shardCount()];
        for (int i = 0; i < channels.length; i++) {
            // one loop per channel, round-robin: the connection and its callbacks stay on it
            channels[i] = driver.newChannel(i, group.loops().get(i % group.size()), group.socketChannelClass());
        }
    }

    private ManagedChannel channel(int shard) throws ShardException {
        if (closed) {
            throw new ShardException(ShardException.Kind.CLOSED, shard, "client closed");
        }
        ManagedChannel ch = channels[shard];
        if (ch.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
            synchronized (lastBackoffReset) {
                long now = System.nanoTime();
                if (now - lastBackoffReset[shard] >= TimeUnit.MILLISECONDS.toNanos(GrpcDriver.RECONNECT_BACKOFF_MILLIS)) {
                    lastBackoffReset[shard] = now;
                    ch.resetConnectBackoff();
                }
            }
        }
        return ch;
    }

    @Override
    public Object call(int shard, Command<?> command, long timeoutNanos) throws ShardException {
        Objects.checkIndex(shard, channels.length);
        Objects.requireNonNull(command, "command");
        GrpcCalls.check(command);
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("timeoutNanos: " + timeoutNanos + " (expected: > 0)");
        }
        ManagedChannel ch = channel(shard);
        CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS);
        try {
            return ((GrpcCall<?, ?>) command).blockingCall(ch, options, CallTrace.headers(0));
        } catch (StatusRuntimeException e) {
            throw GrpcCalls.failure(shard, e.getStatus(), closed);
        }
    }

    @Override
    public void callAll(int[] shards, java.util.List<Command<?>> requests, long timeoutNanos, Sink sink) {
        if (shards.length != requests.size()) {
            throw new IllegalArgumentException("shards: " + shards.length + ", requests: " + requests.size()
                    + " (expected: as many)");
        }
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("timeoutNanos: " + timeoutNanos + " (expected: > 0)");
        }
        int n = shards.length;
        ArrayBlockingQueue<Done> done = new ArrayBlockingQueue<>(Math.max(1, n));
        @SuppressWarnings("unchecked")
        ClientCall<?, ?>[] calls = new ClientCall[n];
        boolean[] delivered = new boolean[n];
        CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS);
        long deadline = System.nanoTime() + timeoutNanos;
        int awaited = 0;
        for (int i = 0; i < n; i++) {
            int index = i;
            try {
                Objects.checkIndex(shards[i], channels.length);
                GrpcCalls.check(requests.get(i));
                calls[i] = GrpcCalls.start(channel(shards[i]), options, requests.get(i), index, new ClientCall.Listener<>() {
                    private Object reply;

                    @Override
                    public void onMessage(Object message) {
                        reply = message;
                    }

                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        done.add(new Done(index, status, reply)); // capacity n: never full
                    }
                });
                awaited++;
            } catch (ShardException e) {
                delivered[i] = true;
                sink.onFailure(i, e);
            } catch (RuntimeException e) {
                delivered[i] = true;
                sink.onFailure(i, new ShardException(ShardException.Kind.UNAVAILABLE, shards[i],
                        "could not start the call: " + e, e));
            }
        }
        try {
            for (; awaited > 0; awaited--) {
                // the gRPC deadline ends every call; the extra second only guards against a lost callback
                Done d = done.poll(deadline - System.nanoTime() + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
                if (d == null) {
                    break;
                }
                delivered[d.index] = true;
                if (d.status.isOk() && d.reply != null) {
                    sink.onReply(d.index, d.reply);
                } else if (d.status.isOk()) {
                    sink.onFailure(d.index, new ShardException(ShardException.Kind.SHARD_ERROR, shards[d.index],
                            "grpc call ended without a reply"));
                } else {
                    sink.onFailure(d.index, GrpcCalls.failure(shards[d.index], d.status, closed));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int i = 0; i < n; i++) {
            if (!delivered[i]) {
                if (calls[i] != null) {
                    calls[i].cancel("abandoned", null);
                }
                sink.onFailure(i, Thread.currentThread().isInterrupted()
                        ? new ShardException(ShardException.Kind.CLOSED, shards[i], "interrupted")
                        : new ShardException(ShardException.Kind.TIMEOUT, shards[i], "no reply within "
                                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
            }
        }
    }

    private record Done(int index, Status status, Object reply) {}

    /** Makes every shard's channel connect now and waits until each is {@code READY}; see {@link GrpcCalls#ready}. */
    @Override
    public void connect() throws ShardException {
        for (int shard = 0; shard < channels.length; shard++) {
            io.doubleface.driver.spi.ShardDrivers.join(GrpcCalls.ready(channel(shard), shard, driver.where(shard)));
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ManagedChannel ch : channels) {
            ch.shutdownNow();
        }
        for (ManagedChannel ch : channels) {
            try {
                ch.awaitTermination(GrpcDriver.CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        group.close();
        driver.clients.forget(this);
    }

    @Override
    public String toString() {
        return "GrpcBlockingClient[" + driver.describe() + "]";
    }
}
