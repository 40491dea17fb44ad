package io.doubleface.driver.spi;

import io.doubleface.driver.Command;
import io.doubleface.driver.FlushMode;
import io.doubleface.driver.ShardException;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard connection of a {@link PipelinedLoopClient}: a channel with many calls outstanding,
 * matched to replies by call id. A {@link PipelinedProtocol}'s decoder delivers each reply with
 * {@link #onReply}, {@link #onError} or {@link #onMalformed}; the rest of this class is the
 * client's business.
 *
 * <p>State: no channel (idle, or after a loss) → connecting (calls are encoded into the buffer of
 * unwritten calls and wait) → connected (calls are encoded into that buffer and written as the
 * loop's {@link FlushMode} says: by the client's end-of-iteration flush by default, at once, or
 * when a batch is full or its timer is up). A lost connection fails every outstanding call with
 * {@code UNAVAILABLE}; the next send connects again. A failed connection attempt also starts the
 * reconnect backoff, during which sends fail at once.
 *
 * <p>Outstanding calls sit in an id map (for replies) and in a list in send order, which is
 * deadline order because every call has the same timeout. One scheduled sweep per connection,
 * armed for the oldest call's deadline, fails overdue calls with {@code TIMEOUT}; it is not
 * cancelled when the list empties, only not re-armed, so a steady stream of calls costs one
 * scheduled task per timeout period, not one per call.
 *
 * <p>Callbacks: before a listener is called, its call is unlinked from every structure, so a
 * listener may send again (even on this connection) from inside its callback.
 *
 * <p>Threading: confined to the client's loop; a decoder calls it from that loop. No synchronisation.
 */
public final class PipelinedConnection {

    private static final Logger log = LoggerFactory.getLogger(PipelinedConnection.class);

    /** An outstanding call; recycled through {@link #free}. */
    private static final class Call {
        int id;
        int tag;
        Object command;
        ReplyListener listener;
        long deadline;
        Call prev;
        Call next;
    }

    private final PipelinedLoopClient<?> client;
    private final int shard;
    private final InetSocketAddress address;
    private final IntObjectHashMap<Call> calls = new IntObjectHashMap<>();
    /** Replies come in call order ({@link PipelinedProtocol#repliesInOrder}): the oldest call is the one answered, no id map. */
    private final boolean ordered;
    private final Runnable sweepTask = this::sweep;

    /** Current channel: connecting or connected; null when there is none. */
    private Channel channel;
    private boolean connected;
    /** Encoded calls not yet written. */
    private ByteBuf out;
    /** Whether this connection is in the client's dirty list. */
    boolean dirty;
    /** Flushes under a per-write or batching {@link FlushMode}. */
    private final FlushBatch batch;

    private Call head;
    private Call tail;
    private int outstanding;
    private Call free;
    private int nextId = 1;
    /** The id the next reply on the current channel answers, for protocols that answer in call order. */
    private int nextReplyId;

    private ScheduledFuture<?> sweep;
    /** Until this nanoTime, sends fail at once (reconnect backoff); valid if {@link #backoff}. */
    private long retryAt;
    private boolean backoff;
    /** Calls of a replica group that failed in a row on this member ({@link PipelinedLoopClient}); loop-confined. */
    int groupFailures;
    /** Until when ({@link System#nanoTime}) this member is set aside by its group's choice; loop-confined. */
    long ejectedUntil;
    /** Whether {@link #ejectedUntil} is set (so an unset one is never compared against the clock). */
    boolean ejected;
    private String lastConnectFailure;
    /** Warm-up attempts ({@link #connectNow}) waiting for the connection being made; null when none. */
    private java.util.List<java.util.concurrent.CompletableFuture<Void>> waiters;

    PipelinedConnection(PipelinedLoopClient<?> client, int shard, InetSocketAddress address) {
        this.client = client;
        this.shard = shard;
        this.address = address;
        this.ordered = client.protocol.repliesInOrder();
        this.batch = new FlushBatch(client.loop(), this::writeOut);
    }

    /** {@return the shard this connection goes to} */
    public int shard() {
        return shard;
    }

    /** {@return the shard's address} */
    public InetSocketAddress address() {
        return address;
    }

    /** {@return the calls outstanding on this connection} */
    int outstanding() {
        return outstanding;
    }

    /** {@return whether sends fail at once now (the reconnect backoff after a failed connection attempt)} */
    boolean inBackoff(long now) {
        return channel == null && backoff && now - retryAt < 0;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    <C extends Command<?>> void send(C command, ReplyListener listener, int tag) {
        long now = System.nanoTime();
        if (channel == null) {
            if (backoff && now - retryAt < 0) {
                client.failLater(listener, tag, new ShardException(ShardException.Kind.UNAVAILABLE, shard,
                        address + " is down (" + lastConnectFailure + "); retrying after backoff"));
                return;
            }
            backoff = false;
            connect();
            if (channel == null) { // failed at once (a refused loopback connect does)
                client.failLater(listener, tag, new ShardException(ShardException.Kind.UNAVAILABLE, shard,
                        address + " is down (" + lastConnectFailure + ")"));
                return;
            }
        }
        if (outstanding >= client.maxOutstanding) {
            client.failLater(listener, tag, new ShardException(ShardException.Kind.OVERLOADED, shard,
                    outstanding + " calls outstanding to " + address + " (limit " + client.maxOutstanding + ")"));
            return;
        }
        Call c = free;
        if (c != null) {
            free = c.next;
            c.next = null;
        } else {
            c = new Call();
        }
        int id = nextId++;
        c.id = id;
        c.tag = tag;
        c.command = command;
        c.listener = listener;
        c.deadline = now + client.callTimeoutNanos;
        if (!ordered) {
            calls.put(id, c);
        }
        link(c);
        outstanding++;
        if (out == null) {
            out = channel.alloc().ioBuffer(client.protocol.initialOutputBytes());
        }
        ((PipelinedProtocol) client.protocol).encode(id, shard, command, out);
        if (connected && batch.queued(client.flush.mode()) && !dirty) {
            client.markDirty(this);
        }
        if (sweep == null) {
            armSweep(c.deadline - now);
        }
    }

    /**
     * Connects now if not connected or connecting (the reconnect backoff does not hold back an
     * explicit attempt): {@link LoopClient#connect()} of the client.
     *
     * @return completed when the connection is made, exceptionally ({@code UNAVAILABLE}) if it cannot be
     */
    java.util.concurrent.CompletableFuture<Void> connectNow() {
        if (connected) {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
        if (channel == null) {
            backoff = false;
            connect();
            if (channel == null) { // failed at once
                return java.util.concurrent.CompletableFuture.failedFuture(new ShardException(
                        ShardException.Kind.UNAVAILABLE, shard, address + " is down (" + lastConnectFailure + ")"));
            }
            if (connected) {
                return java.util.concurrent.CompletableFuture.completedFuture(null);
            }
        }
        java.util.concurrent.CompletableFuture<Void> f = new java.util.concurrent.CompletableFuture<>();
        if (waiters == null) {
            waiters = new java.util.ArrayList<>(2);
        }
        waiters.add(f);
        return f;
    }

    /** Completes the warm-up attempts waiting for the connection: normally with {@code null}, else with {@code failure}. */
    private void wake(ShardException failure) {
        java.util.List<java.util.concurrent.CompletableFuture<Void>> w = waiters;
        if (w == null) {
            return;
        }
        waiters = null;
        for (java.util.concurrent.CompletableFuture<Void> f : w) {
            if (failure == null) {
                f.complete(null);
            } else {
                f.completeExceptionally(failure);
            }
        }
    }

    private void connect() {
        PipelinedConnection self = this;
        Bootstrap b = new Bootstrap()
                .group(client.loop())
                .channel(client.channelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, client.connectTimeoutMillis)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        client.protocol.initChannel(ch, self);
                        ch.pipeline().addLast(new Tail(self));
                    }
                });
        ChannelFuture f = b.connect(address);
        channel = f.channel();
        connected = false;
        nextReplyId = nextId; // the first call sent on this channel is the next one numbered
        f.addListener((ChannelFuture done) -> connectDone(done));
    }

    private void connectDone(ChannelFuture f) {
        if (f.channel() != channel) {
            return; // closed or replaced meanwhile
        }
        if (f.isSuccess() && f.channel().localAddress() != null
                && f.channel().localAddress().equals(f.channel().remoteAddress())) {
            // TCP self-connect: a connect to a closed loopback port in the ephemeral range can be
            // given that very port as its source and "succeed" with itself. Treat it as refused.
            f.channel().close();
            channel = null;
            lastConnectFailure = "cannot connect: " + address + " refused (self-connect)";
            startBackoff();
            ShardException e = new ShardException(ShardException.Kind.UNAVAILABLE, shard, lastConnectFailure);
            wake(e);
            failAll(e);
            return;
        }
        if (f.isSuccess()) {
            connected = true;
            wake(null);
            if (out != null && !dirty) {
                client.markDirty(this); // the calls queued while connecting
            }
            return;
        }
        channel = null;
        Throwable cause = f.cause();
        lastConnectFailure = "cannot connect: " + cause;
        client.memberLost(address, lastConnectFailure);
        startBackoff();
        ShardException e = new ShardException(ShardException.Kind.UNAVAILABLE, shard,
                "cannot connect to " + address + ": " + cause, cause);
        wake(e);
        failAll(e);
    }

    private void startBackoff() {
        if (client.reconnectBackoffNanos > 0) {
            backoff = true;
            retryAt = System.nanoTime() + client.reconnectBackoffNanos;
        }
    }

    /** Writes and flushes the buffer of unwritten calls; called by the client's end-of-iteration task. */
    void flush() {
        dirty = false;
        writeOut();
    }

    /**
     * Writes and flushes the buffer of unwritten calls, if connected (while connecting, the calls
     * wait for the connection and are flushed when it is made). Leaves {@link #dirty} alone: a
     * connection in the client's dirty list stays there until the tail task has run.
     */
    private void writeOut() {
        batch.reset();
        ByteBuf o = out;
        if (o == null || !connected) {
            return;
        }
        out = null;
        channel.writeAndFlush(o, channel.voidPromise());
    }

    /** Removes the outstanding call {@code id}, or logs why there is none and returns null. */
    private Call take(int id) {
        Call c;
        if (ordered) {
            // ids run upwards in send order and the list is in send order: the reply answers the
            // oldest outstanding call, or one older than it that timed out
            c = head;
            if (c != null && c.id != id) {
                c = null;
            }
        } else {
            c = calls.remove(id);
        }
        if (c == null) {
            // Ids run upwards, so a recent id is most likely a call that already timed out.
            int age = nextId - id;
            if (age > 0 && age < 1 << 30) {
                log.debug("{} shard {}: late reply to call {} (timed out) from {}; dropped", client.protocol.protocolName(),
                        shard, id, address);
            } else {
                log.warn("{} shard {}: reply to unknown call {} from {}; dropped", client.protocol.protocolName(), shard,
                        id, address);
            }
            return null;
        }
        unlink(c);
        outstanding--;
        return c;
    }

    /**
     * The decoder read the reply to call {@code id}: the call's listener gets
     * {@link PipelinedProtocol#reply} of it. A reply on a channel this connection no longer uses, or
     * to a call that is no longer outstanding (it timed out), is dropped (released if
     * reference-counted).
     *
     * @param ch the channel it was read from
     * @param id the call id it answers
     * @param decoded the reply as decoded; ownership passes to this method
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void onReply(Channel ch, int id, Object decoded) {
        if (ch != channel) {
            ReferenceCountUtil.release(decoded);
            return;
        }
        Call c = take(id);
        if (c == null) {
            ReferenceCountUtil.release(decoded);
            return;
        }
        ReplyListener listener = c.listener;
        int tag = c.tag;
        Object command = c.command;
        recycle(c);
        Object reply;
        try {
            reply = ((PipelinedProtocol) client.protocol).reply((Command<?>) command, shard, decoded, ch.alloc());
        } catch (RuntimeException e) {
            ShardDrivers.deliverFailure(listener, tag, new ShardException(ShardException.Kind.SHARD_ERROR,
                    shard, address + ": " + e.getMessage(), e));
            return;
        }
        ShardDrivers.deliverReply(listener, tag, reply);
    }

    /**
     * For a protocol whose replies carry no call id but come in call order (RESP): the id of the call
     * the next reply read on {@code ch} answers. Ids on a channel start with the first call sent on
     * it; a call that timed out keeps its place (its late reply is then dropped by {@link #onReply}).
     *
     * @param ch the channel the reply was read from
     * @return the call id to hand to {@link #onReply} or {@link #onError}, or {@code 0} if {@code ch} is
     *     no longer this connection's channel (the reply is then to be dropped)
     */
    public int nextReplyId(Channel ch) {
        return ch == channel ? nextReplyId++ : 0;
    }

    /**
     * The decoder read an error reply to call {@code id}: the call fails with
     * {@link ShardException.Kind#SHARD_ERROR} and {@code message}.
     *
     * @param ch the channel it was read from
     * @param id the call id it answers
     * @param message what the shard said, as the upstream error message should show it
     */
    public void onError(Channel ch, int id, String message) {
        if (ch != channel) {
            return;
        }
        Call c = take(id);
        if (c == null) {
            return;
        }
        ReplyListener listener = c.listener;
        int tag = c.tag;
        recycle(c);
        ShardDrivers.deliverFailure(listener, tag, new ShardException(ShardException.Kind.SHARD_ERROR, shard,
                message));
    }

    /**
     * The decoder read bytes it cannot make sense of: the connection is closed (its outstanding
     * calls fail {@code UNAVAILABLE}) and the reason logged at WARN once per connection.
     *
     * @param ch the channel they were read from
     * @param reason what was wrong, e.g. {@code "length 7 (expected: 9..16777216)"}
     */
    public void onMalformed(Channel ch, String reason) {
        if (ch.isActive()) {
            log.warn("{} shard {}: malformed reply from {}: {}; closing the connection", client.protocol.protocolName(),
                    shard, address, reason);
        }
        ch.close();
    }

    /** {@code ch} became inactive; if it is the current channel, its outstanding calls are lost. */
    void onInactive(Channel ch) {
        if (ch != channel) {
            return;
        }
        channel = null;
        connected = false;
        client.memberLost(address, "connection lost");
        ShardException e = new ShardException(ShardException.Kind.UNAVAILABLE, shard, "connection to " + address + " lost");
        wake(e);
        failAll(e);
    }

    /** Fails every outstanding call with {@code CLOSED} and closes the channel. */
    void close() {
        Channel ch = channel;
        channel = null;
        connected = false;
        if (sweep != null) {
            sweep.cancel(false);
            sweep = null;
        }
        batch.cancel();
        ShardException e = new ShardException(ShardException.Kind.CLOSED, shard, "client closed");
        wake(e);
        failAll(e);
        if (ch != null) {
            ch.close();
        }
    }

    /** Fails every outstanding call with {@code cause} (shared: it has no stack trace). */
    private void failAll(ShardException cause) {
        if (out != null) {
            out.release();
            out = null;
        }
        batch.reset();
        // Detach first: listeners may send again, onto fresh, empty structures.
        Call c = head;
        head = tail = null;
        calls.clear();
        outstanding = 0;
        while (c != null) {
            Call next = c.next;
            ReplyListener listener = c.listener;
            int tag = c.tag;
            recycle(c);
            ShardDrivers.deliverFailure(listener, tag, cause);
            c = next;
        }
    }

    private void armSweep(long delayNanos) {
        sweep = client.loop().schedule(sweepTask, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    }

    private void sweep() {
        sweep = null;
        long now = System.nanoTime();
        ShardException timeout = null;
        while (head != null && head.deadline - now <= 0) {
            Call c = head;
            unlink(c);
            if (!ordered) {
                calls.remove(c.id);
            }
            outstanding--;
            ReplyListener listener = c.listener;
            int tag = c.tag;
            recycle(c);
            if (timeout == null) {
                timeout = new ShardException(ShardException.Kind.TIMEOUT, shard, "no reply from " + address
                        + " within " + TimeUnit.NANOSECONDS.toMillis(client.callTimeoutNanos) + " ms");
            }
            ShardDrivers.deliverFailure(listener, tag, timeout);
        }
        if (head != null && sweep == null) {
            armSweep(head.deadline - now);
        }
    }

    private void link(Call c) {
        c.prev = tail;
        c.next = null;
        if (tail == null) {
            head = c;
        } else {
            tail.next = c;
        }
        tail = c;
    }

    private void unlink(Call c) {
        if (c.prev == null) {
            head = c.next;
        } else {
            c.prev.next = c.next;
        }
        if (c.next == null) {
            tail = c.prev;
        } else {
            c.next.prev = c.prev;
        }
        c.prev = c.next = null;
    }

    private void recycle(Call c) {
        c.listener = null;
        c.command = null;
        c.prev = null;
        c.next = free;
        free = c;
    }

    /**
     * Last handler of every connection's pipeline, after the protocol's decoder: a closed channel
     * fails its calls (after the decoder has read what was left), an exception closes the channel.
     */
    private static final class Tail extends ChannelInboundHandlerAdapter {
        private final PipelinedConnection connection;

        Tail(PipelinedConnection connection) {
            this.connection = connection;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg); // a decoder that passes bytes on: nothing here reads them
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            connection.onInactive(ctx.channel());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("{} shard {}: connection to {} failed; closing it", connection.client.protocol.protocolName(),
                    connection.shard, ctx.channel().remoteAddress(), cause);
            ctx.close();
        }
    }
}
