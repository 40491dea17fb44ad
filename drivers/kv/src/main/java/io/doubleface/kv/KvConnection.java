package io.doubleface.kv;

import io.doubleface.driver.ReplyListener;
import io.doubleface.driver.ShardException;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard connection of a {@link KvLoopClient}: a pipelined channel with many calls
 * outstanding, matched to replies by request id.
 *
 * <p>State: no channel (idle, or after a loss) → connecting (requests are encoded into
 * {@link #out} and wait) → connected (requests are encoded into {@link #out} and written by the
 * client's end-of-iteration flush). A lost connection fails every outstanding call with
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
 * <p>Threading: confined to the client's loop. No synchronisation.
 */
final class KvConnection {

    private static final Logger log = LoggerFactory.getLogger(KvConnection.class);

    /** Initial bytes of a pending-output buffer: room for {@value} requests. */
    private static final int OUT_INITIAL_REQUESTS = 16;

    /** An outstanding call; recycled through {@link #free}. */
    private static final class Call {
        int id;
        int tag;
        ReplyListener listener;
        long deadline;
        Call prev;
        Call next;
    }

    private final KvLoopClient client;
    private final int shard;
    private final InetSocketAddress address;
    private final IntObjectHashMap<Call> calls = new IntObjectHashMap<>();
    private final Runnable sweepTask = this::sweep;

    /** Current channel: connecting or connected; null when there is none. */
    private Channel channel;
    private boolean connected;
    /** Encoded requests not yet written. */
    private ByteBuf out;
    /** Whether this connection is in the client's dirty list. */
    boolean dirty;

    private Call head;
    private Call tail;
    private int outstanding;
    private Call free;
    private int nextId;

    private ScheduledFuture<?> sweep;
    /** Until this nanoTime, sends fail at once (reconnect backoff); valid if {@link #backoff}. */
    private long retryAt;
    private boolean backoff;
    private String lastConnectFailure;

    KvConnection(KvLoopClient client, int shard, InetSocketAddress address) {
        this.client = client;
        this.shard = shard;
        this.address = address;
    }

    void send(KvRequest request, ReplyListener listener, int tag) {
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
        c.listener = listener;
        c.deadline = now + client.callTimeoutNanos;
        calls.put(id, c);
        link(c);
        outstanding++;
        if (out == null) {
            out = channel.alloc().ioBuffer(KvProtocol.REQUEST_FRAME_LENGTH * OUT_INITIAL_REQUESTS);
        }
        KvProtocol.writeRequest(id, request, out);
        if (connected && !dirty) {
            client.markDirty(this);
        }
        if (sweep == null) {
            armSweep(c.deadline - now);
        }
    }

    private void connect() {
        Bootstrap b = new Bootstrap()
                .group(client.loop())
                .channel(client.channelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, client.connectTimeoutMillis)
                .handler(new KvClientHandler(this));
        ChannelFuture f = b.connect(address);
        channel = f.channel();
        connected = false;
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
            if (client.reconnectBackoffNanos > 0) {
                backoff = true;
                retryAt = System.nanoTime() + client.reconnectBackoffNanos;
            }
            failAll(new ShardException(ShardException.Kind.UNAVAILABLE, shard, lastConnectFailure));
            return;
        }
        if (f.isSuccess()) {
            connected = true;
            if (out != null && !dirty) {
                client.markDirty(this); // the requests queued while connecting
            }
            return;
        }
        channel = null;
        Throwable cause = f.cause();
        lastConnectFailure = "cannot connect: " + cause;
        if (client.reconnectBackoffNanos > 0) {
            backoff = true;
            retryAt = System.nanoTime() + client.reconnectBackoffNanos;
        }
        failAll(new ShardException(ShardException.Kind.UNAVAILABLE, shard,
                "cannot connect to " + address + ": " + cause, cause));
    }

    /** Writes and flushes the pending output; called by the client's end-of-iteration task. */
    void flush() {
        dirty = false;
        ByteBuf o = out;
        if (o == null || !connected) {
            return;
        }
        out = null;
        channel.writeAndFlush(o, channel.voidPromise());
    }

    /** A response arrived on {@code ch}; takes ownership of {@code payload}. */
    void onResponse(Channel ch, int id, int status, ByteBuf payload) {
        if (ch != channel) {
            payload.release();
            return;
        }
        Call c = calls.remove(id);
        if (c == null) {
            payload.release();
            // Ids run upwards, so a recent id is most likely a call that already timed out.
            int age = nextId - id;
            if (age > 0 && age < 1 << 30) {
                log.debug("kv shard {}: late reply to call {} (timed out) from {}; dropped", shard, id, address);
            } else {
                log.warn("kv shard {}: reply to unknown call {} from {}; dropped", shard, id, address);
            }
            return;
        }
        unlink(c);
        outstanding--;
        ReplyListener listener = c.listener;
        int tag = c.tag;
        recycle(c);
        if (status == KvProtocol.STATUS_OK) {
            KvLoopClient.notifyReply(listener, tag, payload);
        } else {
            String message = payload.toString(StandardCharsets.UTF_8);
            payload.release();
            KvLoopClient.notifyFailure(listener, tag, new ShardException(ShardException.Kind.SHARD_ERROR, shard,
                    KvProtocol.statusName(status) + ": " + message));
        }
    }

    /** {@code ch} became inactive; if it is the current channel, its outstanding calls are lost. */
    void onInactive(Channel ch) {
        if (ch != channel) {
            return;
        }
        channel = null;
        connected = false;
        failAll(new ShardException(ShardException.Kind.UNAVAILABLE, shard, "connection to " + address + " lost"));
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
        failAll(new ShardException(ShardException.Kind.CLOSED, shard, "client closed"));
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
            KvLoopClient.notifyFailure(listener, tag, cause);
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
            calls.remove(c.id);
            outstanding--;
            ReplyListener listener = c.listener;
            int tag = c.tag;
            recycle(c);
            if (timeout == null) {
                timeout = new ShardException(ShardException.Kind.TIMEOUT, shard, "no reply from " + address
                        + " within " + TimeUnit.NANOSECONDS.toMillis(client.callTimeoutNanos) + " ms");
            }
            KvLoopClient.notifyFailure(listener, tag, timeout);
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
        c.prev = null;
        c.next = free;
        free = c;
    }

    int shard() {
        return shard;
    }

    InetSocketAddress address() {
        return address;
    }
}
