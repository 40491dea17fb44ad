package io.doubleface.grpc;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The asynchronous gRPC client of one event loop: one {@link ManagedChannel} (one HTTP/2
 * connection) per shard, built on that loop and made by {@link #connect()} (before traffic) or on
 * the first send to the shard.
 *
 * <p>Where things run: the channels use the loop as their event loop group and
 * {@code directExecutor()}, so the transport, grpc-java's deadline timers and every
 * {@link ClientCall.Listener} callback run on the loop. Two exceptions are handled here:
 * <ul>
 *   <li>a call that fails while it is being started (no connection and fail-fast, deadline
 *       already passed, channel shut down) is closed by grpc-java on the calling thread, i.e.
 *       inside {@link #send}; the completion is then delivered by a later loop task, as the
 *       {@link LoopClient} contract requires;
 *   <li>a callback that arrives on another thread is handed to the loop with
 *       {@code loop.execute} and counted in {@link GrpcDriver#offLoopHops()}.
 * </ul>
 * Writes: grpc-netty queues each call's frames and flushes once per loop task that wrote, so a
 * fanout of K calls to K shards from one task costs one flush per connection.
 *
 * <p>Completion: every send ends in exactly one listener callback on the loop: a reply, or a
 * {@link ShardException} ({@code TIMEOUT} after {@code callTimeout} (a gRPC deadline),
 * {@code UNAVAILABLE} when the shard cannot be reached or the connection is lost,
 * {@code OVERLOADED} when {@code maxOutstanding} calls are outstanding on the shard's channel,
 * {@code SHARD_ERROR} for an error status, {@code CLOSED} after {@link #close}).
 *
 * <p>Threading: confined to {@link #loop()}; {@link #send} throws {@link IllegalStateException}
 * when called from another thread. {@link #close} may be called from any thread (it hops to the
 * loop). No locks.
 */
final class GrpcLoopClient implements LoopClient<Command<?>> {

    private final GrpcDriver driver;
    private final EventLoop loop;
    private final Class<? extends SocketChannel> channelType;
    private final ManagedChannel[] channels;
    private final int[] outstanding;
    private final long[] lastBackoffReset;
    private final long callTimeoutNanos;
    private final int maxOutstanding;
    private final long reconnectBackoffNanos = TimeUnit.MILLISECONDS.toNanos(GrpcDriver.RECONNECT_BACKOFF_MILLIS);
    /** Outstanding calls, a doubly linked list through {@link Call#prev}/{@link Call#next}, for {@link #close}. */
    private Call head;
    /** True while {@link #send} runs: a completion arriving then is deferred to a later task. */
    private boolean sending;
    private boolean closed;

    GrpcLoopClient(GrpcDriver driver, EventLoop loop, Class<? extends SocketChannel> channelType) {
        this.driver = driver;
        this.loop = loop;
        this.channelType = channelType;
        this.channels = new ManagedChannel[driver.shardCount()];
        this.outstanding = new int[driver.shardCount()];
        this.lastBackoffReset = new long[driver.shardCount()];
        this.callTimeoutNanos = driver.settings().callTimeout().toNanos();
        this.maxOutstanding = driver.settings().maxOutstanding();
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    @Override
    public void send(int shard, Command<?> request, ReplyListener listener, int tag) {
        ShardDrivers.checkSend(loop, shard, channels.length, request, listener);
        GrpcCalls.check(request);
        if (closed) {
            failLater(listener, tag, new ShardException(ShardException.Kind.CLOSED, shard, "client closed"));
            return;
        }
        if (outstanding[shard] >= maxOutstanding) {
            failLater(listener, tag, new ShardException(ShardException.Kind.OVERLOADED, shard,
                    maxOutstanding + " calls outstanding on the channel"));
            return;
        }
        ManagedChannel ch = channels[shard];
        if (ch == null) {
            ch = channels[shard] = driver.newChannel(shard, loop, channelType);
        } else {
            maybeResetBackoff(shard, ch);
        }
        Call call = new Call(shard, request, listener, tag);
        link(call);
        outstanding[shard]++;
        sending = true;
        try {
            call.clientCall = GrpcCalls.start(ch, CallOptions.DEFAULT.withDeadlineAfter(callTimeoutNanos,
                    TimeUnit.NANOSECONDS), request, 0, call);
        } catch (RuntimeException e) {
            call.onClose(Status.UNAVAILABLE.withDescription("could not start the call").withCause(e), new Metadata());
        } finally {
            sending = false;
        }
    }

    /** Makes every shard's channel connect now ({@code READY}); see {@link GrpcCalls#ready}. */
    @Override
    public java.util.concurrent.CompletableFuture<Void> connect() {
        ShardDrivers.requireOnLoop(loop, "connect");
        java.util.List<java.util.concurrent.CompletableFuture<Void>> attempts = new java.util.ArrayList<>();
        for (int shard = 0; shard < channels.length; shard++) {
            if (closed) {
                attempts.add(java.util.concurrent.CompletableFuture.failedFuture(
                        new ShardException(ShardException.Kind.CLOSED, shard, "client closed")));
                continue;
            }
            ManagedChannel ch = channels[shard];
            if (ch == null) {
                ch = channels[shard] = driver.newChannel(shard, loop, channelType);
            }
            attempts.add(GrpcCalls.ready(ch, shard, driver.where(shard)));
        }
        return ShardDrivers.allConnected(attempts);
    }

    /**
     * A shard in {@code TRANSIENT_FAILURE} waits out gRPC's growing reconnect backoff; reset it
     * (at most once per {@link GrpcDriver#RECONNECT_BACKOFF_MILLIS}) so a returning shard is
     * used again soon.
     */
    private void maybeResetBackoff(int shard, ManagedChannel ch) {
        if (ch.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
            long now = System.nanoTime();
            if (now - lastBackoffReset[shard] >= reconnectBackoffNanos) {
                lastBackoffReset[shard] = now;
                ch.resetConnectBackoff();
            }
        }
    }

    private void failLater(ReplyListener listener, int tag, ShardException cause) {
        loop.execute(() -> ShardDrivers.deliverFailure(listener, tag, cause));
    }

    private void link(Call c) {
        c.next = head;
        if (head != null) {
            head.prev = c;
        }
        head = c;
    }

    private void unlink(Call c) {
        if (c.prev != null) {
            c.prev.next = c.next;
        } else {
            head = c.next;
        }
        if (c.next != null) {
            c.next.prev = c.prev;
        }
        c.prev = null;
        c.next = null;
    }

    /** One outstanding call: its gRPC listener and its completion on the loop. */
    private final class Call extends ClientCall.Listener<Object> {
        final int shard;
        final Command<?> command;
        final ReplyListener listener;
        final int tag;
        ClientCall<?, ?> clientCall;
        Call prev;
        Call next;
        /** Written by the thread grpc-java delivers on, read in {@link #finish} after the hop. */
        Object reply;
        boolean done; // loop only

        Call(int shard, Command<?> command, ReplyListener listener, int tag) {
            this.shard = shard;
            this.command = command;
            this.listener = listener;
            this.tag = tag;
        }

        @Override
        public void onMessage(Object message) {
            reply = message;
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            if (loop.inEventLoop()) {
                if (sending) {
                    loop.execute(() -> finish(status)); // never a callback inside send
                } else {
                    finish(status);
                }
            } else {
                driver.countOffLoopHop();
                loop.execute(() -> finish(status));
            }
        }

        void finish(Status status) {
            if (done) {
                return; // failed by close() already
            }
            done = true;
            unlink(this);
            outstanding[shard]--;
            if (status.isOk()) {
                Object r = reply;
                if (r == null) {
                    ShardDrivers.deliverFailure(listener, tag, new ShardException(ShardException.Kind.SHARD_ERROR, shard,
                            "grpc call ended without a reply"));
                } else {
                    ShardDrivers.deliverReply(listener, tag, r);
                }
            } else {
                ShardDrivers.deliverFailure(listener, tag, GrpcCalls.failure(shard, status, closed));
            }
        }
    }

    /**
     * Fails outstanding calls with {@code CLOSED}, cancels them and shuts the channels down. From
     * another thread the work is handed to the loop (and happens later).
     */
    @Override
    public void close() {
        if (ShardDrivers.handToLoop(loop, this::close, () -> {
                shutdownChannels(); // the loop is gone, and the connections with it
                driver.clients.forget(this);
        })) {
            return;
        }
        if (closed) {
            return;
        }
        closed = true;
        while (head != null) {
            Call c = head;
            c.done = true;
            unlink(c);
            outstanding[c.shard]--;
            ShardDrivers.deliverFailure(c.listener, c.tag, new ShardException(ShardException.Kind.CLOSED, c.shard, "client closed"));
            if (c.clientCall != null) {
                c.clientCall.cancel("client closed", null); // its onClose finds the call done
            }
        }
        shutdownChannels();
        driver.clients.forget(this);
    }

    private void shutdownChannels() {
        for (ManagedChannel ch : channels) {
            if (ch != null) {
                ch.shutdownNow();
            }
        }
    }

    @Override
    public String toString() {
        return "GrpcLoopClient[" + driver.describe() + " on " + loop + "]";
    }
}
