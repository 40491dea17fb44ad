package io.doubleface.redis;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.FlushBatch;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.LoopFlush;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The asynchronous Redis client of one event loop.
 *
 * <p><b>Per-loop</b> ({@code connection=per-loop}): one {@link RedisClient} whose
 * {@link ClientResources} are the driver's, mutated to hand Lettuce this loop
 * ({@link LoopEventLoopGroupProvider}) and to set the channel class that matches the loop's I/O
 * handler on the bootstrap ({@link NettyCustomizer#afterBootstrapInitialized}, the last hook
 * before {@code connect}; reconnects reuse that bootstrap). One connection per shard, made by
 * {@link #connect()} (before traffic) or on the first send to it; sends meanwhile wait in a
 * bounded list. So Lettuce's channel, its
 * {@code CommandHandler} and the completion of every command run on this loop: a request of the
 * DoubleFace model never changes thread. Connections run with auto-flush off: {@link #send}
 * only queues the command in Lettuce's command buffer and marks the connection dirty; a tail
 * task ({@link SingleThreadEventLoop#executeAfterEventLoopIteration}) flushes each dirty
 * connection once per loop iteration (as the KV driver does) — or, as the loop's
 * {@link io.doubleface.driver.FlushMode} says, after each command or per bounded batch
 * ({@link FlushBatch}, Lettuce's {@code flushCommands}).
 *
 * <p><b>Shared</b> ({@code connection=shared}): the driver's one connection per shard on Lettuce's
 * own loops (auto-flush on); completions are handed to this loop with {@code loop.execute}.
 *
 * <p>Completion: every send ends in exactly one listener callback, on the loop, never inside
 * {@code send}: a completion that arrives synchronously (Lettuce completes a rejected command
 * inside the write) or off the loop is handed over with {@code loop.execute}; per-loop completions
 * off the loop are counted ({@link RedisDriver#offLoopCompletions()}). Call timeouts are our own
 * loop-scheduled tasks rather than Lettuce's (whose expiry runs on its computation pool, off the
 * loop), one sweep per client at its oldest call's deadline (every call has the same timeout,
 * so send order is deadline order); a command that timed out stays in Lettuce's protocol stack until its reply arrives (the
 * reply is then dropped), so a stopped shard fills the {@code requestQueueSize} bound and later
 * sends fail fast with {@code OVERLOADED}.
 *
 * <p>Threading: confined to {@link #loop()}; {@link #close} may be called from any thread.
 */
final class RedisLoopClient implements LoopClient<Command<?>> {

    private static final Logger log = LoggerFactory.getLogger(RedisLoopClient.class);

    private static final int IDLE = 0;
    private static final int CONNECTING = 1;
    private static final int UP = 2;


    /** A shard's connection as seen from this loop. */
    private static final class Link {
        final int shard;
        int state = IDLE;
        long retryAt;
        StatefulRedisConnection<byte[], byte[]> conn;
        RedisAsyncCommands<byte[], byte[]> cmds;
        final ArrayDeque<Call> pending = new ArrayDeque<>();
        int waiting; // shared mode: calls waiting for the shared connection
        boolean dirty;
        FlushBatch batch; // per-loop mode: flushes under a per-write or batching FlushMode
        List<CompletableFuture<Void>> waiters; // per-loop mode: warm-up attempts waiting for the connection

        /** Completes the warm-up attempts: normally if {@code failure} is null. */
        void wake(Throwable failure) {
            List<CompletableFuture<Void>> w = waiters;
            waiters = null;
            if (w != null) {
                for (CompletableFuture<Void> f : w) {
                    if (failure == null) {
                        f.complete(null);
                    } else {
                        f.completeExceptionally(failure);
                    }
                }
            }
        }

        Link(int shard) {
            this.shard = shard;
        }

        /** Flushes Lettuce's command buffer of this connection, if connected. */
        void flushCommands() {
            if (conn != null) {
                conn.flushCommands();
            }
        }
    }

    /** One send: its completion ({@link #accept}) and its place in the outstanding list. */
    private final class Call implements BiConsumer<Object, Throwable> {
        final int shard;
        final Command<?> request;
        final ReplyListener listener;
        final int tag;
        final long deadline; // System.nanoTime() when the call times out
        Call prev; // the outstanding list, oldest first (see sweep)
        Call next;
        boolean done;

        Call(int shard, Command<?> request, ReplyListener listener, int tag, long deadline) {
            this.shard = shard;
            this.request = request;
            this.listener = listener;
            this.tag = tag;
            this.deadline = deadline;
        }

        @Override
        public void accept(Object value, Throwable error) {
            if (loop.inEventLoop()) {
                if (!inSend) {
                    finish(this, value, error);
                    return;
                }
            } else if (perLoop) {
                driver.offLoopCounter().increment();
            }
            try {
                loop.execute(() -> finish(this, value, error));
            } catch (RejectedExecutionException e) {
                // the loop is shut down: nobody is left to notify
            }
        }

        /** Times this call out (from the sweep, on the loop). */
        void timeOut() {
            done = true;
            ShardDrivers.deliverFailure(listener, tag, new ShardException(Kind.TIMEOUT, shard, "no reply within "
                    + TimeUnit.NANOSECONDS.toMillis(callTimeoutNanos) + " ms"));
        }
    }

    private final RedisDriver driver;
    private final EventLoop loop;
    private final boolean perLoop;
    private final RedisClient client; // per-loop only
    private final boolean channelMismatch; // Lettuce's JVM-wide channel class does not fit this loop
    private final Link[] links;
    private final Link[] dirty;
    private int dirtyCount;
    private boolean flushScheduled;
    private final Runnable flushTask = this::flushDirty;
    private final LoopFlush flush; // the loop's flush mode (per-loop mode), read at each send
    // Outstanding calls, a doubly linked list in send order. Every call of this client has the same
    // timeout, so send order is deadline order: one scheduled sweep at the oldest call's deadline
    // times out what is due and re-arms for the next, instead of a scheduled task per call (two
    // priority-queue operations on the loop's timer heap for each call, a measurable share of the
    // mid-tier's profile, docs/benchmarks.md).
    private Call oldest;
    private Call newest;
    private int outstandingCount;
    private ScheduledFuture<?> sweep;
    private final Runnable sweepTask = this::sweep;
    private final long callTimeoutNanos;
    private final int maxOutstanding;
    private final CompletableFuture<Void> shutdown = new CompletableFuture<>();
    private boolean inSend;
    private boolean closed;
    /** The shards when they are not the driver's ({@code null}: the driver's). */
    private final RedisURI[] uris;

    /** @param channelClass the loop's socket channel class (per-loop), or {@code null} for shared */
    RedisLoopClient(RedisDriver driver, EventLoop loop, Class<? extends SocketChannel> channelClass) {
        this(driver, loop, channelClass, null);
    }

    /**
     * A per-loop client of {@code uris} instead of the driver's shards (shard {@code i} = {@code uris[i]}):
     * the Lettuce connections of a Redis Cluster node ({@link RedisClusterLoopClient}).
     *
     * @param channelClass the loop's socket channel class (per-loop), or {@code null} for shared (then
     *     {@code uris} must be {@code null})
     * @param uris the shards, or {@code null} for the driver's
     */
    RedisLoopClient(RedisDriver driver, EventLoop loop, Class<? extends SocketChannel> channelClass, RedisURI[] uris) {
        this.driver = driver;
        this.loop = loop;
        this.perLoop = channelClass != null;
        if (uris != null && !perLoop) {
            throw new IllegalArgumentException("node connections of a cluster are per-loop");
        }
        this.uris = uris;
        int n = uris != null ? uris.length : driver.shardCount();
        this.links = new Link[n];
        this.dirty = new Link[n];
        for (int i = 0; i < links.length; i++) {
            links[i] = new Link(i);
            links[i].batch = new FlushBatch(loop, links[i]::flushCommands);
        }
        this.flush = LoopFlush.of(loop);
        this.callTimeoutNanos = driver.settings().callTimeout().toNanos();
        this.maxOutstanding = driver.settings().maxOutstanding();
        if (perLoop) {
            ClientResources r = driver.resources().mutate()
                    .eventLoopGroupProvider(new LoopEventLoopGroupProvider(loop))
                    .nettyCustomizer(new NettyCustomizer() {
                        @Override
                        public void afterBootstrapInitialized(Bootstrap bootstrap) {
                            if (bootstrap.config().channelFactory() == null || channelMismatch) {
                                ChannelClassOverride.set(bootstrap, channelClass);
                            }
                        }
                    })
                    .build();
            this.channelMismatch = !channelClass.equals(io.lettuce.core.resource.Transports.socketChannelClass());
            this.client = RedisClient.create(r);
            this.client.setOptions(driver.clientOptions(false));
        } else {
            this.client = null;
            this.channelMismatch = false;
        }
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    private RedisURI uri(int shard) {
        return uris != null ? uris[shard] : driver.uri(shard);
    }

    @Override
    public void send(int shard, Command<?> request, ReplyListener listener, int tag) {
        ShardDrivers.checkSend(loop, shard, links.length, request, listener);
        redisCommand(request);
        Call c = new Call(shard, request, listener, tag, System.nanoTime() + callTimeoutNanos);
        inSend = true;
        try {
            if (closed) {
                c.accept(null, new ShardException(Kind.CLOSED, shard, "client closed"));
                return;
            }
            link(c);
            if (perLoop) {
                dispatchPerLoop(links[shard], c);
            } else {
                dispatchShared(links[shard], c);
            }
        } catch (RuntimeException e) {
            c.accept(null, e);
        } finally {
            inSend = false;
        }
    }

    private void dispatchPerLoop(Link link, Call c) {
        switch (link.state) {
            case UP -> {
                issue(link.cmds, c);
                if (link.batch.queued(flush.mode())) {
                    markDirty(link);
                }
            }
            case CONNECTING -> {
                if (link.pending.size() >= maxOutstanding) {
                    c.accept(null, new ShardException(Kind.OVERLOADED, link.shard, maxOutstanding
                            + " calls already wait for the connection"));
                } else {
                    link.pending.add(c);
                }
            }
            default -> {
                if (System.nanoTime() - link.retryAt < 0) {
                    c.accept(null, new ShardException(Kind.UNAVAILABLE, link.shard, "cannot connect to "
                            + uri(link.shard).getHost() + ":" + uri(link.shard).getPort()
                            + " (retrying after a short backoff)"));
                    return;
                }
                link.pending.add(c);
                startConnect(link);
            }
        }
    }

    private void startConnect(Link link) {
        link.state = CONNECTING;
        client.connectAsync(ByteArrayCodec.INSTANCE, uri(link.shard)).whenComplete((conn, e) -> {
            if (loop.inEventLoop() && !inSend) {
                onConnected(link, conn, e);
            } else {
                try {
                    loop.execute(() -> onConnected(link, conn, e));
                } catch (RejectedExecutionException x) {
                    if (conn != null) {
                        conn.closeAsync();
                    }
                }
            }
        });
    }

    /**
     * Connects to every shard now: per-loop, this loop's connection to each (the reconnect
     * backoff does not hold back an explicit attempt); shared, the driver's shared connections.
     */
    @Override
    public CompletableFuture<Void> connect() {
        ShardDrivers.requireOnLoop(loop, "connect");
        List<CompletableFuture<Void>> attempts = new ArrayList<>();
        for (Link link : links) {
            if (closed) {
                attempts.add(CompletableFuture.failedFuture(new ShardException(Kind.CLOSED, link.shard, "client closed")));
            } else if (!perLoop) {
                int shard = link.shard;
                attempts.add(driver.sharedConnection(shard).handle((conn, e) -> {
                    if (e != null) {
                        throw new java.util.concurrent.CompletionException(RedisErrors.map(e, shard, false));
                    }
                    return null;
                }));
            } else if (link.state == UP) {
                attempts.add(CompletableFuture.completedFuture(null));
            } else {
                CompletableFuture<Void> f = new CompletableFuture<>();
                if (link.waiters == null) {
                    link.waiters = new ArrayList<>(2);
                }
                link.waiters.add(f);
                attempts.add(f);
                if (link.state == IDLE) {
                    startConnect(link);
                }
            }
        }
        return ShardDrivers.allConnected(attempts);
    }

    private void onConnected(Link link, StatefulRedisConnection<byte[], byte[]> conn, Throwable e) {
        if (closed) {
            if (conn != null) {
                conn.closeAsync();
            }
            return;
        }
        if (e != null) {
            link.state = IDLE;
            link.retryAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RedisDriver.RECONNECT_BACKOFF_MILLIS);
            ShardException se = RedisErrors.map(e, link.shard, false);
            link.wake(se);
            for (Call c; (c = link.pending.poll()) != null; ) {
                finish(c, null, se);
            }
            return;
        }
        conn.setAutoFlushCommands(false);
        link.conn = conn;
        link.cmds = conn.async();
        link.state = UP;
        link.wake(null);
        for (Call c; (c = link.pending.poll()) != null; ) {
            if (!c.done) {
                issue(link.cmds, c);
            }
        }
        markDirty(link);
    }

    private void dispatchShared(Link link, Call c) {
        CompletableFuture<StatefulRedisConnection<byte[], byte[]>> f = driver.sharedConnection(link.shard);
        if (f.isDone() && !f.isCompletedExceptionally()) {
            issue(f.join().async(), c);
            return;
        }
        if (link.waiting >= maxOutstanding) {
            c.accept(null, new ShardException(Kind.OVERLOADED, link.shard, maxOutstanding
                    + " calls already wait for the connection"));
            return;
        }
        link.waiting++;
        f.whenComplete((conn, e) -> {
            try {
                loop.execute(() -> {
                    link.waiting--;
                    if (c.done) {
                        return;
                    }
                    if (e != null) {
                        finish(c, null, e);
                    } else {
                        issue(conn.async(), c);
                    }
                });
            } catch (RejectedExecutionException x) {
                // the loop is shut down
            }
        });
    }

    /** Issues the Redis command of {@code c}; its completion comes back through {@link Call#accept}. */
    private void issue(RedisAsyncCommands<byte[], byte[]> cmds, Call c) {
        issue(cmds, c.request).whenComplete(c);
    }

    /** Sends {@code command} on {@code cmds} as it is (Lettuce's {@code dispatch}). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static RedisFuture<?> issue(RedisAsyncCommands<byte[], byte[]> cmds, Command<?> command) {
        RedisCommand<?> rc = redisCommand(command);
        return ((RedisAsyncCommands) cmds).dispatch(rc.type(), rc.newOutput(), rc.newArgs());
    }

    /**
     * {@code command} as a {@link RedisCommand}.
     *
     * @throws IllegalArgumentException if it is another kind of command (only possible through raw types)
     */
    static RedisCommand<?> redisCommand(Command<?> command) {
        if (command instanceof RedisCommand<?> rc) {
            return rc;
        }
        throw new IllegalArgumentException("command: " + (command == null ? "null" : command.getClass().getName())
                + " (expected: a RedisCommand, see io.doubleface.redis.Redis)");
    }

    private void finish(Call c, Object value, Throwable error) {
        if (c.done) {
            return;
        }
        c.done = true;
        unlink(c);
        if (error != null) {
            ShardDrivers.deliverFailure(c.listener, c.tag, RedisErrors.map(error, c.shard, closed));
            return;
        }
        ShardDrivers.deliverReply(c.listener, c.tag, value);
    }

    private void markDirty(Link link) {
        if (link.dirty) {
            return;
        }
        link.dirty = true;
        dirty[dirtyCount++] = link;
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
            Link l = dirty[i];
            dirty[i] = null;
            l.dirty = false;
            l.batch.reset();
            l.flushCommands();
        }
        dirtyCount = 0;
        flushScheduled = false;
    }

    /** Appends {@code c} to the outstanding list and makes sure a sweep is due by its deadline. */
    private void link(Call c) {
        if (newest == null) {
            oldest = newest = c;
        } else {
            c.prev = newest;
            newest.next = c;
            newest = c;
        }
        outstandingCount++;
        if (sweep == null) {
            armSweep(c.deadline);
        }
    }

    private void unlink(Call c) {
        Call p = c.prev;
        Call n = c.next;
        if (p == null) {
            if (oldest != c) {
                return; // not in the list (already unlinked)
            }
            oldest = n;
        } else {
            p.next = n;
        }
        if (n == null) {
            newest = p;
        } else {
            n.prev = p;
        }
        c.prev = c.next = null;
        outstandingCount--;
        // the sweep stays armed: when it fires early for a call that completed, it re-arms for the
        // oldest one left (one timer per call timeout period at most, not one per call)
    }

    private void armSweep(long at) {
        sweep = loop.schedule(sweepTask, Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** Times out every call whose deadline has passed, oldest first; re-arms for the oldest left. */
    private void sweep() {
        sweep = null;
        long now = System.nanoTime();
        Call c;
        while ((c = oldest) != null && c.deadline - now <= 0) {
            unlink(c);
            c.timeOut();
        }
        if (oldest != null && sweep == null && !closed) {
            armSweep(oldest.deadline);
        }
    }

    /** Calls sent and not yet completed (for tests). On the loop. */
    int outstanding() {
        return outstandingCount;
    }

    /**
     * Fails outstanding calls with {@code CLOSED} and closes the connections. From another thread
     * the work is handed to the loop (and happens later).
     */
    @Override
    public void close() {
        if (ShardDrivers.handToLoop(loop, this::close, () -> {
                closeOffLoop();
        })) {
            return;
        }
        if (closed) {
            return;
        }
        closed = true;
        if (sweep != null) {
            sweep.cancel(false);
            sweep = null;
        }
        List<Call> calls = new ArrayList<>(outstandingCount);
        for (Call c = oldest; c != null; c = c.next) {
            calls.add(c);
        }
        oldest = newest = null;
        outstandingCount = 0;
        for (Call c : calls) {
            c.prev = c.next = null;
            if (!c.done) {
                c.done = true;
                ShardDrivers.deliverFailure(c.listener, c.tag, new ShardException(Kind.CLOSED, c.shard, "client closed"));
            }
        }
        for (Link l : links) {
            l.pending.clear();
            if (l.batch != null) {
                l.batch.cancel();
            }
            l.wake(new ShardException(Kind.CLOSED, l.shard, "client closed"));
        }
        closeOffLoop();
    }

    private void closeOffLoop() {
        closed = true;
        if (client != null) {
            client.shutdownAsync(0, 2, TimeUnit.SECONDS).whenComplete((v, e) -> shutdown.complete(null));
        } else {
            shutdown.complete(null);
        }
        driver.clients.forget(this);
    }

    /** Releases Lettuce's side when the loop is gone (no callback can run any more). */
    void abandon() {
        closeOffLoop();
    }

    /** Waits (off the loop) until the per-loop Lettuce client has shut down. */
    void awaitShutdown(long millis) {
        if (loop.inEventLoop()) {
            return;
        }
        try {
            shutdown.get(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.debug("redis loop client on {} did not shut down within {} ms", loop, millis, e);
        }
    }

    @Override
    public String toString() {
        return "RedisLoopClient[" + driver.describe() + " on " + loop + (perLoop ? "" : ", shared") + "]";
    }
}
