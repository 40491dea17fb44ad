package io.doubleface.services.ycsb;

import io.doubleface.kv.KvRequest;
import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ReplyListener;
import io.doubleface.driver.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.channel.socket.SocketChannel;
import java.net.InetSocketAddress;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-loop OP_MSG client of {@link OpMsgDriver} (scheme {@code mongodb+loop://}):
 * one pipelined connection per shard ({@link OpMsgConnection}), registered on this loop, speaking
 * just the {@code find} of {@link OpMsgProtocol} — no driver threads, no checkout hop: a call is
 * encoded on the loop, written by the loop's end-of-iteration flush and its reply decoded and
 * delivered on the loop. Flush consolidation as in the KV client: {@link #send} encodes into the
 * connection's pending output and marks it dirty; one tail task per iteration
 * ({@link SingleThreadEventLoop#executeAfterEventLoopIteration}) writes every dirty connection once.
 *
 * <p>What it does not do, unlike the official driver: server discovery and monitoring, auth, TLS,
 * retries, sessions. Shards must be plain {@code host:port} servers (the short URI forms).
 *
 * <p>Completion: exactly one callback per send, on the loop, never inside send: a reply, or
 * UNAVAILABLE (cannot connect, connection lost; a failed connect starts a backoff of
 * {@link #RECONNECT_BACKOFF_MILLIS} ms during which sends fail at once), TIMEOUT after the call
 * timeout, SHARD_ERROR (server error, missing record), OVERLOADED beyond
 * {@code maxOutstanding} calls on a connection, CLOSED after {@link #close}.
 *
 * <p>Threading: confined to {@link #loop()}; {@link #close} from any thread (hops to the loop).
 */
final class OpMsgLoopClient implements LoopClient<KvRequest> {

    private static final Logger log = LoggerFactory.getLogger(OpMsgLoopClient.class);

    /** Reconnect backoff after a failed connection attempt: {@value} ms. */
    static final long RECONNECT_BACKOFF_MILLIS = 50;

    private final OpMsgDriver driver;
    private final EventLoop loop;
    private final Class<? extends SocketChannel> channelClass;
    private final OpMsgConnection[] connections;
    private final InetSocketAddress[] addresses;
    final long callTimeoutNanos;
    final int connectTimeoutMillis;
    final int maxOutstanding;
    final long records;
    final long reconnectBackoffNanos = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(RECONNECT_BACKOFF_MILLIS);

    private final OpMsgConnection[] dirty;
    private int dirtyCount;
    private boolean flushScheduled;
    private final Runnable flushTask = this::flushDirty;
    private boolean closed;

    OpMsgLoopClient(OpMsgDriver driver, EventLoop loop) {
        this.driver = driver;
        this.loop = loop;
        this.channelClass = ShardDrivers.socketChannelClass(loop);
        int n = driver.shardCount();
        this.connections = new OpMsgConnection[n];
        this.dirty = new OpMsgConnection[n];
        this.addresses = new InetSocketAddress[n];
        for (int i = 0; i < n; i++) {
            addresses[i] = driver.shards().get(i);
        }
        this.callTimeoutNanos = driver.settings().callTimeout().toNanos();
        this.connectTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, driver.settings().connectTimeout().toMillis());
        this.maxOutstanding = driver.settings().maxOutstanding();
        this.records = driver.records();
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    Class<? extends SocketChannel> channelClass() {
        return channelClass;
    }

    String database(int shard) {
        return driver.database();
    }

    @Override
    public void send(int shard, KvRequest request, ReplyListener listener, int tag) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("send from " + Thread.currentThread().getName()
                    + " (expected: on the client's loop " + loop + ")");
        }
        Objects.checkIndex(shard, connections.length);
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(listener, "listener");
        if (closed) {
            failLater(listener, tag, new ShardException(ShardException.Kind.CLOSED, shard, "client closed"));
            return;
        }
        OpMsgConnection c = connections[shard];
        if (c == null) {
            c = connections[shard] = new OpMsgConnection(this, shard, addresses[shard]);
        }
        c.send(request, listener, tag);
    }

    void failLater(ReplyListener listener, int tag, ShardException cause) {
        loop.execute(() -> notifyFailure(listener, tag, cause));
    }

    void markDirty(OpMsgConnection c) {
        c.dirty = true;
        dirty[dirtyCount++] = c;
        if (!flushScheduled) {
            flushScheduled = true;
            if (loop instanceof SingleThreadEventLoop stl) {
                stl.executeAfterEventLoopIteration(flushTask);
            } else {
                loop.execute(flushTask);
            }
        }
    }

    private void flushDirty() {
        for (int i = 0; i < dirtyCount; i++) {
            OpMsgConnection c = dirty[i];
            dirty[i] = null;
            c.flush();
        }
        dirtyCount = 0;
        flushScheduled = false;
    }

    static void notifyReply(ReplyListener listener, int tag, ByteBuf reply) {
        try {
            listener.onReply(tag, reply);
        } catch (Throwable t) {
            log.warn("reply listener {} threw", listener, t);
        }
    }

    static void notifyFailure(ReplyListener listener, int tag, ShardException cause) {
        try {
            listener.onFailure(tag, cause);
        } catch (Throwable t) {
            log.warn("reply listener {} threw", listener, t);
        }
    }

    @Override
    public void close() {
        if (!loop.inEventLoop()) {
            try {
                loop.execute(this::close);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                driver.closed(this);
            }
            return;
        }
        if (closed) {
            return;
        }
        closed = true;
        for (OpMsgConnection c : connections) {
            if (c != null) {
                c.close();
            }
        }
        driver.closed(this);
    }

    @Override
    public String toString() {
        return "OpMsgLoopClient[" + driver.describe() + " on " + loop + "]";
    }
}
