package io.doubleface.mongo;

import com.mongodb.connection.TransportSettings;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.doubleface.driver.Command;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.spi.DriverLoops;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The asynchronous MongoDB client of one event loop: per shard, one reactive-streams
 * {@code MongoClient} (made when the client opens, so its monitor has found the server before the
 * first call; {@link #connect()} also opens a pooled connection to each, which the server does
 * when a configuration is activated or prepared) whose connections run on this loop
 * ({@link MongoDriver.Transport#NETTY}) or on JDK asynchronous channels (AIO).
 *
 * <p>Thread hops. A call is a {@code find} subscribed on the loop. The driver checks a connection
 * out of its pool on its own {@code AsyncGetter} thread (one per pool, i.e. per shard and loop),
 * which also writes the command — with Netty that write is handed back to the loop as a task.
 * The reply is read where the transport reads: on this loop with Netty, on an AIO pool thread
 * otherwise. Whatever thread the driver completes a call on, the completion is delivered to the
 * listener on the loop:
 *
 * <pre>
 *   loop: send ─ subscribe ─▶ AsyncGetter: checkout, write ─▶ loop (Netty) / AIO thread: read reply
 *                                                              │ terminal signal
 *            on the loop, not inside send: deliver at once ◀───┤ ("onLoop")
 *            on another thread: loop.execute(deliver)      ◀───┘ ("hopped", thread name recorded)
 * </pre>
 *
 * {@link #stats()} counts both, and where commands were sent from ({@link CommandListener}).
 *
 * <p>Bounds: at most {@link MongoDriver.Options#maxOutstanding} calls per shard (beyond: OVERLOADED
 * at once; the driver's own checkout queue is unbounded, so this is the bound); every call has the
 * driver's {@code timeoutMS} and, as a guard, a sweep on the loop that fails it with TIMEOUT
 * {@link #GUARD_SLACK_MILLIS} ms after its call timeout if the driver has not answered. A shard
 * whose server monitor saw it unreachable fails calls at once with UNAVAILABLE until a heartbeat
 * sees it again.
 *
 * <p>Threading: confined to {@link #loop()} ({@link #send} throws elsewhere); the driver's
 * signals arrive on any thread and only touch their own {@link Call} before hopping.
 * {@link #close} may be called from any thread (it hops to the loop). {@link #stats()} from any
 * thread.
 */
public final class MongoLoopClient implements LoopClient<Command<?>> {

    private static final Logger log = LoggerFactory.getLogger(MongoLoopClient.class);

    /** How long after its call timeout the loop's sweep fails a call the driver has not answered: {@value} ms. */
    static final long GUARD_SLACK_MILLIS = 200;

    /** The command {@link #connect()} runs on every shard: {@value}. */
    static final String PING = "ping";

    /**
     * A snapshot of one loop client's counters.
     *
     * @param loop the loop's thread name
     * @param onLoop completions the driver signalled on the loop (outside {@code send}), delivered at once
     * @param hopped completions signalled on another thread, delivered by a task on the loop
     * @param inSend completions signalled inside {@code send} (early failures), delivered by a later task
     * @param sentOnLoop {@code find} commands the driver sent from the loop thread
     * @param sentOffLoop {@code find} commands sent from another thread (the pool's {@code AsyncGetter})
     * @param offLoopThreads names (digits as {@code N}) of the threads behind {@code hopped} and
     *     {@code sentOffLoop}, with counts
     */
    public record Stats(String loop, long onLoop, long hopped, long inSend, long sentOnLoop, long sentOffLoop,
            Map<String, Long> offLoopThreads) {}

    private final MongoDriver driver;
    private final EventLoop loop;
    /** The loop's thread name, learnt on the first send (for stats). */
    private volatile String loopName;
    private final Shard[] shards;
    private final long callTimeoutNanos;
    private final long guardNanos;
    private final int maxOutstanding;
    /** The fixed AIO pool of this client ({@link MongoDriver.Transport#AIO_FIXED}), else null. */
    private ExecutorService aioPool;

    // outstanding calls of all shards in send order (= deadline order): loop-confined
    private Call head;
    private Call tail;
    private ScheduledFuture<?> sweep;
    private final Runnable sweepTask = this::sweep;
    private boolean inSend;
    private boolean closed;

    private final AtomicLong onLoop = new AtomicLong();
    private final AtomicLong inSendCount = new AtomicLong();
    private final LongAdder hopped = new LongAdder();
    private final LongAdder sentOnLoop = new LongAdder();
    private final LongAdder sentOffLoop = new LongAdder();
    private final ConcurrentHashMap<String, LongAdder> offLoopThreads = new ConcurrentHashMap<>();

    MongoLoopClient(MongoDriver driver, EventLoop loop) {
        this.driver = driver;
        this.loop = loop;
        this.shards = new Shard[driver.shardCount()];
        MongoDriver.Options o = driver.options();
        this.callTimeoutNanos = o.callTimeout().toNanos();
        this.guardNanos = callTimeoutNanos + TimeUnit.MILLISECONDS.toNanos(GUARD_SLACK_MILLIS);
        this.maxOutstanding = o.maxOutstanding();
        // Eagerly: each client's monitor connects and learns its server before the first call,
        // which would otherwise wait for that (server selection) and for its connection's handshake.
        for (int i = 0; i < shards.length; i++) {
            try {
                shards[i] = new Shard(i, transport());
            } catch (RuntimeException e) {
                log.warn("mongodb shard {}: cannot create a client of {} (retried on first use): {}", i,
                        driver.address(i), e.toString());
            }
        }
    }

    /** One shard's {@code MongoClient} and its bookkeeping; made when the client opens. */
    private final class Shard implements CommandListener {
        final int id;
        final String address;
        final MongoClient client;
        /** Loop-confined. */
        int outstanding;
        /** Written by the driver's monitor thread. */

        Shard(int id, TransportSettings transport) {
            this.id = id;
            this.address = driver.address(id);
            this.client = MongoClients.create(driver.settings(id, transport, this, driver.options().poolSize(), driver.options().csot()));
        }


        /** What the shard's monitor last failed with, if it sees no server at all; else null. */
        Throwable downCause() {
            return MongoErrors.downCause(client.getClusterDescription());
        }

        @Override
        public void commandStarted(CommandStartedEvent event) {
            if (PING.equals(event.getCommandName())) {
                return; // connect()'s, not a call's
            }
            if (loop.inEventLoop()) {
                sentOnLoop.increment();
            } else {
                sentOffLoop.increment();
                countThread();
            }
        }
    }

    /** One call: the driver's subscriber, then (on the loop) the listener's completion. */
    private final class Call implements Subscriber<Object>, Runnable {
        final Shard shard;
        final Command<?> request;
        final ReplyListener listener;
        final int tag;
        final long deadline;
        volatile Subscription subscription;
        // written by the driver's serial signals, read on the loop after the hop (happens-before via execute)
        Object first;
        List<Object> more;
        Throwable error;
        // loop-confined
        boolean finished;
        Call prev;
        Call next;

        Call(Shard shard, Command<?> request, ReplyListener listener, int tag, long deadline) {
            this.shard = shard;
            this.request = request;
            this.listener = listener;
            this.tag = tag;
            this.deadline = deadline;
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Object d) {
            if (first == null) {
                first = d;
            } else {
                if (more == null) {
                    more = new ArrayList<>(16);
                    more.add(first);
                }
                more.add(d);
            }
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            terminal();
        }

        @Override
        public void onComplete() {
            terminal();
        }

        private void terminal() {
            if (loop.inEventLoop()) {
                if (inSend) {
                    inSendCount.lazySet(inSendCount.get() + 1);
                    loop.execute(this);
                } else {
                    onLoop.lazySet(onLoop.get() + 1);
                    complete(this);
                }
                return;
            }
            hopped.increment();
            countThread();
            try {
                loop.execute(this);
            } catch (RejectedExecutionException e) {
                // the loop is gone; close() failed every call before that
            }
        }

        @Override
        public void run() {
            complete(this);
        }

        List<Object> documents() {
            return more != null ? more : first != null ? List.of(first) : List.of();
        }
    }

    private void countThread() {
        String name = Thread.currentThread().getName().replaceAll("[0-9]+", "N");
        offLoopThreads.computeIfAbsent(name, k -> new LongAdder()).increment();
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    @Override
    public void send(int shard, Command<?> request, ReplyListener listener, int tag) {
        ShardDrivers.checkSend(loop, shard, shards.length, request, listener);
        if (!(request instanceof MongoCommand<?>)) {
            throw new IllegalArgumentException("command: " + request.getClass().getName()
                    + " (expected: a MongoCommand, see io.doubleface.mongo.Mongo)");
        }
        if (loopName == null) {
            loopName = Thread.currentThread().getName();
        }
        Objects.requireNonNull(listener, "listener");
        if (closed) {
            failLater(listener, tag, new ShardException(ShardException.Kind.CLOSED, shard, "client closed"));
            return;
        }
        Shard s = shards[shard];
        if (s == null) {
            try {
                s = shards[shard] = new Shard(shard, transport());
            } catch (RuntimeException e) {
                failLater(listener, tag, new ShardException(ShardException.Kind.UNAVAILABLE, shard,
                        "cannot create a client of " + driver.address(shard) + ": " + e, e));
                return;
            }
        }
        Throwable down = s.downCause();
        if (down != null) {
            failLater(listener, tag, MongoErrors.down(shard, s.address, down));
            return;
        }
        if (s.outstanding >= maxOutstanding) {
            failLater(listener, tag, new ShardException(ShardException.Kind.OVERLOADED, shard,
                    s.outstanding + " calls outstanding to " + s.address + " (limit " + maxOutstanding + ")"));
            return;
        }
        long now = System.nanoTime();
        Call c = new Call(s, request, listener, tag, now + guardNanos);
        link(c);
        s.outstanding++;
        if (sweep == null) {
            sweep = loop.schedule(sweepTask, guardNanos, TimeUnit.NANOSECONDS);
        }
        inSend = true;
        try {
            publisher(s, request).subscribe(c);
        } catch (RuntimeException e) {
            if (!c.finished && c.error == null) {
                c.error = e;
                loop.execute(c);
            }
        } finally {
            inSend = false;
        }
    }

    /**
     * Makes every shard's {@code MongoClient} reach its server now: a {@code ping} on each, which
     * selects the server and leaves an open connection in the client's pool for the first call.
     */
    @Override
    public java.util.concurrent.CompletableFuture<Void> connect() {
        ShardDrivers.requireOnLoop(loop, "connect");
        List<java.util.concurrent.CompletableFuture<Void>> pings = new ArrayList<>();
        for (int i = 0; i < shards.length; i++) {
            if (closed) {
                pings.add(java.util.concurrent.CompletableFuture.failedFuture(
                        new ShardException(ShardException.Kind.CLOSED, i, "client closed")));
                continue;
            }
            Shard s = shards[i];
            if (s == null) {
                try {
                    s = shards[i] = new Shard(i, transport());
                } catch (RuntimeException e) {
                    pings.add(java.util.concurrent.CompletableFuture.failedFuture(new ShardException(
                            ShardException.Kind.UNAVAILABLE, i, "cannot create a client of " + driver.address(i) + ": "
                            + e, e)));
                    continue;
                }
            }
            pings.add(MongoErrors.ping(s.client, i, s.address));
        }
        return ShardDrivers.allConnected(pings);
    }

    @SuppressWarnings("unchecked")
    private Publisher<Object> publisher(Shard s, Command<?> command) {
        MongoCommand<?> mc = (MongoCommand<?>) command;
        String db = mc.database() != null ? mc.database() : driver.database(s.id);
        return (Publisher<Object>) mc.op().reactive(s.client.getDatabase(db));
    }

    private TransportSettings transport() {
        return switch (driver.options().transport()) {
            case NETTY -> driver.nettyOn(loop);
            case AIO -> null; // the driver's default: JDK asynchronous channels, default group
            case AIO_FIXED -> {
                if (aioPool == null) {
                    aioPool = Executors.newFixedThreadPool(driver.options().aioThreads(), DriverLoops.platformThreads("mongo-aio"));
                }
                yield TransportSettings.asyncBuilder().executorService(aioPool).build();
            }
        };
    }

    /** Delivers the outcome of {@code c} to its listener; on the loop, at most once. */
    private void complete(Call c) {
        if (c.finished) {
            return; // timed out or closed before the driver answered
        }
        c.finished = true;
        unlink(c);
        c.shard.outstanding--;
        if (c.error != null) {
            ShardDrivers.deliverFailure(c.listener, c.tag, MongoErrors.map(c.error, c.shard.id, c.shard.address,
                    c.shard.downCause(), closed));
            return;
        }
        Object reply;
        try {
            reply = ((MongoCommand<?>) c.request).op().reply(c.documents());
        } catch (RuntimeException e) {
            ShardDrivers.deliverFailure(c.listener, c.tag, new ShardException(ShardException.Kind.SHARD_ERROR, c.shard.id,
                    c.shard.address + ": " + e.getMessage()));
            return;
        }
        ShardDrivers.deliverReply(c.listener, c.tag, reply);
    }

    private void sweep() {
        sweep = null;
        long now = System.nanoTime();
        ShardException timeout = null;
        while (head != null && head.deadline - now <= 0) {
            Call c = head;
            c.finished = true;
            unlink(c);
            c.shard.outstanding--;
            cancel(c);
            if (timeout == null) {
                timeout = new ShardException(ShardException.Kind.TIMEOUT, c.shard.id, "no reply from " + c.shard.address
                        + " within " + TimeUnit.NANOSECONDS.toMillis(callTimeoutNanos) + " ms");
            } else if (timeout.shard() != c.shard.id) {
                timeout = new ShardException(ShardException.Kind.TIMEOUT, c.shard.id, "no reply from " + c.shard.address
                        + " within " + TimeUnit.NANOSECONDS.toMillis(callTimeoutNanos) + " ms");
            }
            ShardDrivers.deliverFailure(c.listener, c.tag, timeout);
        }
        if (head != null && sweep == null && !closed) {
            sweep = loop.schedule(sweepTask, Math.max(0, head.deadline - now), TimeUnit.NANOSECONDS);
        }
    }

    private static void cancel(Call c) {
        Subscription s = c.subscription;
        if (s != null) {
            try {
                s.cancel();
            } catch (RuntimeException e) {
                log.debug("cancel failed", e);
            }
        }
    }

    private void failLater(ReplyListener listener, int tag, ShardException cause) {
        inSendCount.lazySet(inSendCount.get() + 1);
        loop.execute(() -> ShardDrivers.deliverFailure(listener, tag, cause));
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

    /** Calls outstanding to {@code shard} (loop only; for tests). */
    int outstanding(int shard) {
        return shards[shard] == null ? 0 : shards[shard].outstanding;
    }

    /** {@return a snapshot of this client's counters; any thread (values may be a little stale)} */
    public Stats stats() {
        Map<String, Long> threads = new TreeMap<>();
        offLoopThreads.forEach((k, v) -> threads.put(k, v.sum()));
        return new Stats(loopName == null ? String.valueOf(loop) : loopName, onLoop.get(), hopped.sum(), inSendCount.get(), sentOnLoop.sum(), sentOffLoop.sum(),
                threads);
    }

    /**
     * Fails outstanding calls with CLOSED, then closes the shards' {@code MongoClient}s off the loop
     * (closing one blocks). From another thread the work is handed to the loop.
     */
    @Override
    public void close() {
        if (ShardDrivers.handToLoop(loop, this::close, () -> {
                closed = true; // the loop is gone, and with it every call's listener
                closeClients();
                driver.clients.forget(this);
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
        Call c = head;
        head = tail = null;
        while (c != null) {
            Call next = c.next;
            c.finished = true;
            c.prev = c.next = null;
            c.shard.outstanding--;
            cancel(c);
            ShardDrivers.deliverFailure(c.listener, c.tag, new ShardException(ShardException.Kind.CLOSED, c.shard.id, "client closed"));
            c = next;
        }
        driver.closeLater(this::closeClients);
        driver.clients.forget(this);
    }

    private void closeClients() {
        boolean loopGone = driver.options().transport() == MongoDriver.Transport.NETTY && loop.isShuttingDown();
        for (Shard s : shards) {
            if (s != null) {
                // With our loop gone, the client's blocking endSessions command would wait forever for
                // I/O on it: an interrupt makes that wait end at once (the driver ignores the failure).
                if (loopGone) {
                    Thread.currentThread().interrupt();
                }
                try {
                    s.client.close();
                } catch (RuntimeException e) {
                    log.debug("closing the client of {} failed", s.address, e);
                } finally {
                    if (loopGone) {
                        Thread.interrupted();
                    }
                }
            }
        }
        if (aioPool != null) {
            aioPool.shutdownNow();
        }
    }

    @Override
    public String toString() {
        return "MongoLoopClient[" + driver.describe() + " on " + loop + "]";
    }
}
