package io.doubleface.kv;

import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ReplyListener;
import io.doubleface.driver.ShardException;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.channel.socket.SocketChannel;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The asynchronous KV client of one event loop: one pipelined connection per shard
 * ({@link KvConnection}), registered on that loop and made on the first send to the shard.
 *
 * <p>Flush consolidation: {@link #send} encodes the request into the connection's pending output
 * without writing it, and marks the connection dirty. The first connection marked dirty in a loop
 * iteration registers one tail task ({@link SingleThreadEventLoop#executeAfterEventLoopIteration});
 * at the end of the iteration that task writes and flushes every dirty connection once. So a
 * request fanned out to 20 shards, or 20 requests to one shard, cost one write system call per
 * connection.
 *
 * <pre>
 *   loop iteration:  I/O events ─► tasks ─► send, send, send ─► … ─► tail: flush dirty connections
 *                                            (encode, mark dirty)
 * </pre>
 *
 * <p>Completion: every send ends in exactly one listener callback on the loop, never inside
 * {@code send} itself: a reply, or a {@link ShardException} ({@code UNAVAILABLE} when the
 * connection cannot be made or is lost, {@code TIMEOUT} after {@link KvDriver.Options#callTimeout},
 * {@code SHARD_ERROR} for NOT_FOUND/BAD_REQUEST, {@code OVERLOADED} when the connection already
 * holds {@link KvDriver.Options#maxOutstanding} calls, {@code CLOSED} after {@link #close}).
 *
 * <p>Threading: confined to {@link #loop()}; {@link #send} throws {@link IllegalStateException}
 * when called from another thread. {@link #close} may be called from any thread (it hops to the
 * loop). No locks.
 */
final class KvLoopClient implements LoopClient<KvRequest> {

    private static final Logger log = LoggerFactory.getLogger(KvLoopClient.class);

    private final KvDriver driver;
    private final EventLoop loop;
    private final Class<? extends SocketChannel> channelClass;
    private final KvConnection[] connections;
    final long callTimeoutNanos;
    final int connectTimeoutMillis;
    final int maxOutstanding;
    final long reconnectBackoffNanos;

    // connections with unflushed output, flushed by the tail task
    private final KvConnection[] dirty;
    private int dirtyCount;
    private boolean flushScheduled;
    private final Runnable flushTask = this::flushDirty;
    private boolean closed;

    KvLoopClient(KvDriver driver, EventLoop loop, Class<? extends SocketChannel> channelClass) {
        this.driver = driver;
        this.loop = loop;
        this.channelClass = channelClass;
        this.connections = new KvConnection[driver.shardCount()];
        this.dirty = new KvConnection[driver.shardCount()];
        KvDriver.Options o = driver.options();
        this.callTimeoutNanos = o.callTimeout().toNanos();
        this.connectTimeoutMillis = (int) o.connectTimeout().toMillis();
        this.maxOutstanding = o.maxOutstanding();
        this.reconnectBackoffNanos = o.reconnectBackoff().toNanos();
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    Class<? extends SocketChannel> channelClass() {
        return channelClass;
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
        if (!KvProtocol.isEncodable(request)) {
            failLater(listener, tag, new ShardException(ShardException.Kind.SHARD_ERROR, shard,
                    "field " + request.field() + " cannot be encoded (expected: -1.." + (io.doubleface.kv.Records.FIELD_COUNT - 1) + ")"));
            return;
        }
        KvConnection c = connections[shard];
        if (c == null) {
            c = connections[shard] = new KvConnection(this, shard, driver.shards().get(shard));
        }
        c.send(request, listener, tag);
    }

    /** Delivers a failure found inside {@code send} on a later task, so no callback runs inside send. */
    void failLater(ReplyListener listener, int tag, ShardException cause) {
        loop.execute(() -> notifyFailure(listener, tag, cause));
    }

    /** Queues {@code c} for the end-of-iteration flush; the caller checked it is not dirty yet. */
    void markDirty(KvConnection c) {
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
        // dirtyCount is re-read each round: a connection made dirty during a flush (a listener
        // sending from a failure callback) is flushed in this same pass.
        for (int i = 0; i < dirtyCount; i++) {
            KvConnection c = dirty[i];
            dirty[i] = null;
            c.flush();
        }
        dirtyCount = 0;
        flushScheduled = false;
    }

    static void notifyReply(ReplyListener listener, int tag, io.netty.buffer.ByteBuf reply) {
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

    /**
     * Fails outstanding calls with {@code CLOSED} and closes the connections. From another thread
     * the work is handed to the loop (and happens later).
     */
    @Override
    public void close() {
        if (!loop.inEventLoop()) {
            try {
                loop.execute(this::close);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                driver.closed(this); // the loop is gone, and its channels with it
            }
            return;
        }
        if (closed) {
            return;
        }
        closed = true;
        for (KvConnection c : connections) {
            if (c != null) {
                c.close();
            }
        }
        driver.closed(this);
    }

    @Override
    public String toString() {
        return "KvLoopClient[" + driver.describe() + " on " + loop + "]";
    }
}
