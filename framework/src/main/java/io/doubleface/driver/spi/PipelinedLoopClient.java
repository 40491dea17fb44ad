package io.doubleface.driver.spi;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.Command;
import io.doubleface.driver.FlushMode;
import io.doubleface.driver.ShardException;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.channel.socket.SocketChannel;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A {@link LoopClient} for a pipelined protocol: one connection per shard, registered on the
 * client's loop and made on the first send to that shard, with many calls outstanding on it. The
 * protocol — how a call is encoded, how replies are decoded — is a {@link PipelinedProtocol};
 * everything else is here, written once for every driver that speaks such a protocol (the KV
 * driver, the YCSB service's OP_MSG driver, a driver of your own).
 *
 * <p>Flush consolidation: {@link #send} encodes the call into its connection's buffer of unwritten
 * calls without writing it, and marks the connection dirty. The first connection marked dirty in a
 * loop iteration registers one tail task ({@link SingleThreadEventLoop#executeAfterEventLoopIteration});
 * at the end of the iteration that task writes and flushes every dirty connection once. So a
 * request fanned out to 20 shards, or 20 requests to one shard, cost one write system call per
 * connection. That is the default {@link FlushMode}; the loop's {@link LoopFlush} may instead say
 * to flush each call at once ({@code per-write}) or in bounded batches ({@code batch:N:Tus}: at
 * {@code N} calls waiting on a connection, or {@code T} after the first, by a timer) — read at each
 * send, so it can be switched at run time without stranding a call.
 *
 * <pre>
 *   loop iteration:  I/O events ─► tasks ─► send, send, send ─► … ─► tail: flush dirty connections
 *                                            (encode, mark dirty)
 * </pre>
 *
 * <p>Completion: every send ends in exactly one listener callback on the loop, never inside
 * {@code send} itself: a reply, or a {@link ShardException}: {@code UNAVAILABLE} when the
 * connection cannot be made (then sends to that shard fail at once for the reconnect backoff) or is
 * lost, {@code TIMEOUT} after the call timeout, {@code SHARD_ERROR} for an error reply or a command
 * the protocol refuses, {@code OVERLOADED} when the connection already holds
 * {@link DriverSettings#maxOutstanding} calls, {@code CLOSED} after {@link #close}.
 *
 * <p>Threading: confined to {@link #loop()}; {@link #send} throws {@link IllegalStateException}
 * when called from another thread. {@link #close} may be called from any thread (it hops to the
 * loop). No locks.
 *
 * @param <C> the command type
 */
public final class PipelinedLoopClient<C extends Command<?>> implements LoopClient<C> {

    /**
     * Calls of a replica group that fail in a row ({@code UNAVAILABLE} or {@code TIMEOUT}) on one
     * member before this client sets the member aside: {@value}.
     */
    public static final int EJECT_AFTER_FAILURES = 5;
    /**
     * How long a member set aside comes last in the choice of its group, in milliseconds: {@value}.
     * It still gets calls when every other member is set aside or in reconnect backoff; after this,
     * it is chosen as before and needs another run of failures to be set aside again.
     */
    public static final long EJECT_MILLIS = 5_000;

    private final EventLoop loop;
    private final Class<? extends SocketChannel> channelClass;
    /** The shards' members: fixed, or followed through {@link ShardGroups#current()}. */
    private final ShardGroups groups;
    /** Shard {@code i}'s members as last reconciled, and their connections (made on first use). */
    private InetSocketAddress[][] members;
    private PipelinedConnection[][] connections;
    private long membersVersion;
    /** The next member to try first when several have as few calls outstanding: round-robin per shard. */
    private int[] nextMember;
    private GroupCall freeCalls;
    private final long drainGraceMillis;
    private final String description;
    private final Consumer<? super PipelinedLoopClient<C>> onClose;
    final PipelinedProtocol<C> protocol;
    final long callTimeoutNanos;
    final int connectTimeoutMillis;
    final int maxOutstanding;
    final long reconnectBackoffNanos;
    /** The loop's flush mode, read at each send. */
    final LoopFlush flush;

    // connections with unflushed output, flushed by the tail task
    private PipelinedConnection[] dirty;
    private int dirtyCount;
    private boolean flushScheduled;
    private final Runnable flushTask = this::flushDirty;
    private boolean closed;

    /**
     * A client on {@code loop}; it connects to nothing until {@link #connect()} or the first send to a shard.
     *
     * @param loop an epoll or NIO event loop (see {@link ShardDrivers#socketChannelClass})
     * @param shards the shards' addresses; shard {@code i} is {@code shards.get(i)}
     * @param protocol how calls are encoded and replies decoded
     * @param settings connect and call timeouts, the bound of outstanding calls per connection
     * @param reconnectBackoff after a failed connection attempt, sends to that shard fail at once for
     *     this long ({@code 0}: the next send tries again)
     * @param description what {@link #toString} says the client talks to, e.g. the shard URI
     * @param onClose called once with this client when it has closed (e.g. to forget it in the
     *     driver's set of open clients), on the loop — or on the closing thread if the loop is gone
     * @throws IllegalArgumentException if the loop is neither epoll nor NIO, or the backoff is negative
     */
    public PipelinedLoopClient(EventLoop loop, List<InetSocketAddress> shards, PipelinedProtocol<C> protocol,
            DriverSettings settings, Duration reconnectBackoff, String description,
            Consumer<? super PipelinedLoopClient<C>> onClose) {
        this(loop, ShardGroups.of(protocol.protocolName(), shards), protocol, settings, reconnectBackoff, description,
                onClose);
    }

    /**
     * A client on {@code loop} over replica groups: shard {@code i}'s calls go to one of its members,
     * the one with the fewest calls outstanding on this loop (round-robin among equals, members in
     * reconnect backoff last); an idempotent call ({@link PipelinedProtocol#idempotent}) that fails
     * {@code UNAVAILABLE} on one member is sent once more to another. A member on which
     * {@value #EJECT_AFTER_FAILURES} such calls in a row failed {@code UNAVAILABLE} or {@code TIMEOUT}
     * is set aside for {@value #EJECT_MILLIS} ms: it comes last in the choice, as a member in
     * backoff does (outlier ejection, per loop; {@link ShardGroups#topology()} counts them), unless
     * it is the last member of its group neither set aside nor in backoff. A member holding
     * {@link DriverSettings#maxOutstanding} calls comes after all of them. When the groups' members change
     * ({@link ShardGroups#current()}'s version, read at each send), a member that left gets no new
     * calls and its connection is closed after the call timeout plus a second (its outstanding calls
     * finish first); a new member is connected on first use. A lost or refused connection asks the
     * groups for a new resolution ({@link ShardGroups#refresh}).
     *
     * @param loop an epoll or NIO event loop (see {@link ShardDrivers#socketChannelClass})
     * @param groups the shards' members; not closed by this client (they belong to the driver)
     * @param protocol how calls are encoded and replies decoded
     * @param settings connect and call timeouts, the bound of outstanding calls per connection
     * @param reconnectBackoff after a failed connection attempt, sends to that member fail at once (or go to
     *     another member) for this long ({@code 0}: the next send tries again)
     * @param description what {@link #toString} says the client talks to, e.g. the shard URI
     * @param onClose called once with this client when it has closed, on the loop — or on the closing
     *     thread if the loop is gone
     * @throws IllegalArgumentException if the loop is neither epoll nor NIO, or the backoff is negative
     */
    public PipelinedLoopClient(EventLoop loop, ShardGroups groups, PipelinedProtocol<C> protocol,
            DriverSettings settings, Duration reconnectBackoff, String description,
            Consumer<? super PipelinedLoopClient<C>> onClose) {
        this.loop = Objects.requireNonNull(loop, "loop");
        this.channelClass = ShardDrivers.socketChannelClass(loop);
        this.groups = Objects.requireNonNull(groups, "groups");
        ShardGroups.Snapshot snap = groups.current();
        int n = snap.members().size();
        this.members = new InetSocketAddress[n][];
        this.connections = new PipelinedConnection[n][];
        this.nextMember = new int[n];
        for (int i = 0; i < n; i++) {
            members[i] = snap.members().get(i).toArray(new InetSocketAddress[0]);
            connections[i] = new PipelinedConnection[members[i].length];
        }
        this.membersVersion = snap.version();
        this.dirty = new PipelinedConnection[Math.max(4, n)];
        this.drainGraceMillis = settings.callTimeout().toMillis() + 1000;
        this.protocol = Objects.requireNonNull(protocol, "protocol");
        this.callTimeoutNanos = settings.callTimeout().toNanos();
        this.connectTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis());
        this.maxOutstanding = settings.maxOutstanding();
        if (reconnectBackoff.isNegative()) {
            throw new IllegalArgumentException("reconnectBackoff: " + reconnectBackoff + " (expected: >= 0)");
        }
        this.reconnectBackoffNanos = reconnectBackoff.toNanos();
        this.description = Objects.requireNonNull(description, "description");
        this.onClose = Objects.requireNonNull(onClose, "onClose");
        this.flush = LoopFlush.of(loop);
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    Class<? extends SocketChannel> channelClass() {
        return channelClass;
    }

    @Override
    public void send(int shard, C command, ReplyListener listener, int tag) {
        ShardDrivers.checkSend(loop, shard, connections.length, command, listener);
        if (closed) {
            failLater(listener, tag, new ShardException(ShardException.Kind.CLOSED, shard, "client closed"));
            return;
        }
        String refused = protocol.refuse(command);
        if (refused != null) {
            failLater(listener, tag, new ShardException(ShardException.Kind.SHARD_ERROR, shard, refused));
            return;
        }
        if (groups.dynamic() && groups.current().version() != membersVersion) {
            reconcile(groups.current());
        }
        PipelinedConnection[] cs = connections[shard];
        if (cs.length == 1) { // the common case: one member, no choice, no wrapper
            PipelinedConnection c = cs[0];
            if (c == null) {
                c = cs[0] = new PipelinedConnection(this, shard, members[shard][0]);
            }
            c.send(command, listener, tag);
            return;
        }
        if (cs.length == 0) {
            groups.refresh("shard " + shard + " has no member");
            failLater(listener, tag, new ShardException(ShardException.Kind.UNAVAILABLE, shard, "shard " + shard
                    + " of " + groups.describe() + " has no member right now"));
            return;
        }
        if (!protocol.anyMember(command)) {
            connection(shard, 0).send(command, listener, tag);
            return;
        }
        int m = pick(shard, -1);
        if (protocol.idempotent(command)) {
            GroupCall g = freeCalls;
            if (g != null) {
                freeCalls = g.next;
                g.next = null;
            } else {
                g = new GroupCall();
            }
            g.listener = listener;
            g.tag = tag;
            g.shard = shard;
            g.member = m;
            g.command = command;
            g.version = membersVersion;
            connection(shard, m).send(command, g, 0);
        } else {
            connection(shard, m).send(command, listener, tag);
        }
    }

    /**
     * Connects to every member of every shard now ({@link LoopClient#connect()}); a shard whose
     * group has no member right now fails it.
     */
    @Override
    public java.util.concurrent.CompletableFuture<Void> connect() {
        ShardDrivers.requireOnLoop(loop, "connect");
        if (closed) {
            return java.util.concurrent.CompletableFuture.failedFuture(
                    new ShardException(ShardException.Kind.CLOSED, -1, "client closed"));
        }
        if (groups.dynamic() && groups.current().version() != membersVersion) {
            reconcile(groups.current());
        }
        List<java.util.concurrent.CompletableFuture<Void>> attempts = new java.util.ArrayList<>();
        for (int shard = 0; shard < connections.length; shard++) {
            if (connections[shard].length == 0) {
                groups.refresh("shard " + shard + " has no member");
                attempts.add(java.util.concurrent.CompletableFuture.failedFuture(new ShardException(
                        ShardException.Kind.UNAVAILABLE, shard, "shard " + shard + " of " + groups.describe()
                        + " has no member right now")));
                continue;
            }
            for (int m = 0; m < connections[shard].length; m++) {
                attempts.add(connection(shard, m).connectNow());
            }
        }
        return ShardDrivers.allConnected(attempts);
    }

    private PipelinedConnection connection(int shard, int m) {
        PipelinedConnection c = connections[shard][m];
        if (c == null) {
            c = connections[shard][m] = new PipelinedConnection(this, shard, members[shard][m]);
        }
        return c;
    }

    /**
     * The member of {@code shard} with the fewest calls outstanding on this loop, members in reconnect
     * backoff last, round-robin among equals; never {@code except} if there is another.
     */
    private int pick(int shard, int except) {
        PipelinedConnection[] cs = connections[shard];
        int n = cs.length;
        int start = nextMember[shard]++ & Integer.MAX_VALUE;
        long now = System.nanoTime();
        int best = -1;
        long bestScore = Long.MAX_VALUE;
        for (int k = 0; k < n; k++) {
            int m = (start + k) % n;
            if (m == except) {
                continue;
            }
            PipelinedConnection c = cs[m];
            long score = c == null ? 0 : c.outstanding() >= maxOutstanding ? 1L << 40 // it would refuse the call
                    : c.outstanding() + (c.inBackoff(now) || setAside(c, now) ? 1L << 32 : 0);
            if (score < bestScore) {
                bestScore = score;
                best = m;
            }
        }
        return best < 0 ? Math.max(0, except) : best;
    }

    private static boolean setAside(PipelinedConnection c, long now) {
        return c.ejected && now - c.ejectedUntil < 0;
    }

    /** Whether {@code shard} has a member other than {@code member} that is neither set aside nor in backoff. */
    private boolean anotherMemberUsable(int shard, int member, long now) {
        PipelinedConnection[] cs = connections[shard];
        for (int m = 0; m < cs.length; m++) {
            if (m != member && (cs[m] == null || !(cs[m].inBackoff(now) || setAside(cs[m], now)))) {
                return true;
            }
        }
        return false;
    }

    /** The groups changed: keep the connections of members still there, drain those of members that left. */
    private void reconcile(ShardGroups.Snapshot snap) {
        for (int i = 0; i < members.length; i++) {
            InetSocketAddress[] now = snap.members().get(i).toArray(new InetSocketAddress[0]);
            PipelinedConnection[] cs = new PipelinedConnection[now.length];
            for (int m = 0; m < members[i].length; m++) {
                PipelinedConnection old = connections[i][m];
                int at = java.util.Arrays.asList(now).indexOf(members[i][m]);
                if (at >= 0) {
                    cs[at] = old;
                } else if (old != null) {
                    loop.schedule(old::close, drainGraceMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
                }
            }
            members[i] = now;
            connections[i] = cs;
        }
        membersVersion = snap.version();
    }

    /** A connection to {@code address} was lost or refused: the groups may have changed. */
    void memberLost(InetSocketAddress address, String why) {
        groups.refresh(address + ": " + why);
    }

    /**
     * An idempotent call to one member of a group: a failure {@code UNAVAILABLE} sends it once more
     * to another member. Recycled (loop-confined free list).
     */
    private final class GroupCall implements ReplyListener {
        ReplyListener listener;
        int tag;
        int shard;
        int member;
        Object command;
        long version;
        boolean retried;
        GroupCall next;

        @Override
        public void onReply(int ignored, Object reply) {
            PipelinedConnection c = memberConnection();
            if (c != null) {
                c.groupFailures = 0;
            }
            ReplyListener l = listener;
            int t = tag;
            recycle();
            ShardDrivers.deliverReply(l, t, reply);
        }

        /** The connection of the member the call went to, if the groups have not changed since. */
        private PipelinedConnection memberConnection() {
            return version == membersVersion && member < connections[shard].length ? connections[shard][member] : null;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void onFailure(int ignored, ShardException cause) {
            ShardException.Kind kind = cause.kind();
            PipelinedConnection c = kind == ShardException.Kind.UNAVAILABLE || kind == ShardException.Kind.TIMEOUT
                    ? memberConnection() : null;
            if (c != null && ++c.groupFailures >= EJECT_AFTER_FAILURES) {
                c.groupFailures = 0;
                long now = System.nanoTime();
                if (anotherMemberUsable(shard, member, now)) { // never the last usable member
                    c.ejected = true;
                    c.ejectedUntil = now + TimeUnit.MILLISECONDS.toNanos(EJECT_MILLIS);
                    groups.memberEjected(members[shard][member], cause.getMessage());
                }
            }
            if (cause.kind() == ShardException.Kind.UNAVAILABLE && !retried && !closed
                    && connections[shard].length > 1) {
                retried = true;
                int from = version == membersVersion ? member : -1;
                member = pick(shard, from);
                version = membersVersion;
                if (member != from) {
                    connection(shard, member).send((C) command, this, 0);
                    return;
                }
            }
            ReplyListener l = listener;
            int t = tag;
            recycle();
            ShardDrivers.deliverFailure(l, t, cause);
        }

        private void recycle() {
            listener = null;
            command = null;
            retried = false;
            next = freeCalls;
            freeCalls = this;
        }
    }

    /** Delivers a failure found inside {@code send} on a later task, so no callback runs inside send. */
    void failLater(ReplyListener listener, int tag, ShardException cause) {
        loop.execute(() -> ShardDrivers.deliverFailure(listener, tag, cause));
    }

    /** Queues {@code c} for the end-of-iteration flush; the caller checked it is not dirty yet. */
    void markDirty(PipelinedConnection c) {
        c.dirty = true;
        if (dirtyCount == dirty.length) {
            dirty = java.util.Arrays.copyOf(dirty, dirty.length * 2);
        }
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
            PipelinedConnection c = dirty[i];
            dirty[i] = null;
            c.flush();
        }
        dirtyCount = 0;
        flushScheduled = false;
    }

    /**
     * Fails outstanding calls with {@code CLOSED} and closes the connections. From another thread
     * the work is handed to the loop (and happens later). Idempotent.
     */
    @Override
    public void close() {
        if (ShardDrivers.handToLoop(loop, this::close, () -> {
                onClose.accept(this); // the loop is gone, and its channels with it
        })) {
            return;
        }
        if (closed) {
            return;
        }
        closed = true;
        for (PipelinedConnection[] cs : connections) {
            for (PipelinedConnection c : cs) {
                if (c != null) {
                    c.close();
                }
            }
        }
        onClose.accept(this);
    }

    @Override
    public String toString() {
        return "PipelinedLoopClient[" + protocol.protocolName() + " " + description + " on " + loop + "]";
    }
}
