package io.doubleface.redis;

import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.PipelinedLoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandType;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The loop client of a {@code redis-cluster://} backend: routes each command to the node that owns
 * its key's hash slot in the current {@link RedisClusterMap}, over one connection per node per loop
 * (made on first use, written once per loop iteration): doubleface's native RESP client
 * ({@link PipelinedLoopClient}, {@code connection=native}, the default) or a Lettuce connection
 * registered on the loop ({@link RedisLoopClient}, {@code connection=per-loop}) — and follows the
 * cluster's redirects.
 *
 * <p>Routing, per send: a command with a key goes to the owner of its slot (or, with
 * {@code read-from=replica…} and a read-only command, to one of the owner's replicas), whatever
 * shard index it was planned with; a command without a key goes to master {@code shard} of the
 * current map (index-addressed calls and {@code plan.broadcast}). A multi-key command
 * ({@code MGET}, {@code DEL}, {@code EXISTS}, {@code UNLINK}) whose keys span several slots is
 * split into one command per slot; its parts' replies are put back together in key order
 * ({@code MGET}) or summed, and the caller gets one reply.
 *
 * <p>Redirects: {@code MOVED slot host:port} patches the shared map ({@link RedisClusterTopology#moved},
 * which also requests a refresh) and sends the call again to the named node; {@code ASK slot
 * host:port} sends {@code ASKING} and the call to the named node, back to back on its connection,
 * without touching the map. A call is redirected at most {@value #MAX_REDIRECTS} times, then fails
 * with {@code SHARD_ERROR} (two nodes redirecting to each other). A lost or refused connection fails
 * the call ({@code UNAVAILABLE}, the node and slot in the message) and requests a refresh, so a
 * fail-over is followed as soon as the cluster has promoted a replica.
 *
 * <p>Topology changes: when the map's version changes, connections to nodes that left it are closed
 * after a grace of the call timeout (their outstanding calls finish first); nodes that joined get
 * a connection on first use.
 *
 * <p>Threading: confined to {@link #loop()}, like every loop client; the map is read from the
 * topology's atomic reference. Redirect bookkeeping uses recycled call objects: nothing is allocated
 * per call unless it is split or redirected.
 */
final class RedisClusterLoopClient implements LoopClient<RedisCommand<?>> {

    /** Most redirects ({@code MOVED} or {@code ASK}) one call follows: {@value}. */
    static final int MAX_REDIRECTS = 5;

    private static final RedisCommand<String> ASKING = new RedisCommand<>(CommandType.ASKING,
            io.lettuce.core.codec.ByteArrayCodec.INSTANCE, a -> { }, StatusOutput::new);

    private final RedisDriver driver;
    private final RedisClusterTopology topology;
    private final EventLoop loop;
    private final RedisDriver.ReadFrom readFrom;
    private final Map<InetSocketAddress, LoopClient<RedisCommand<?>>> masters = new HashMap<>();
    private final Map<InetSocketAddress, LoopClient<RedisCommand<?>>> readers = new HashMap<>();
    /** Node connections through Lettuce ({@code connection=per-loop}) instead of the native RESP client. */
    private final boolean lettuce;
    private final long graceMillis;
    private RedisClusterMap seen;
    private ClusterCall free;
    private int nextReplica;
    private boolean closed;

    RedisClusterLoopClient(RedisDriver driver, RedisClusterTopology topology, EventLoop loop) {
        this.driver = driver;
        this.topology = topology;
        this.loop = Objects.requireNonNull(loop, "loop");
        this.readFrom = driver.readFrom();
        this.graceMillis = driver.settings().callTimeout().toMillis() + 1000;
        this.lettuce = driver.connectionMode() == RedisDriver.ConnectionMode.PER_LOOP;
        ShardDrivers.socketChannelClass(loop); // fails now for a loop that is neither epoll nor NIO
    }

    @Override
    public EventLoop loop() {
        return loop;
    }

    @Override
    public void send(int shard, RedisCommand<?> command, ReplyListener listener, int tag) {
        ShardDrivers.requireOnLoop(loop, "send");
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(listener, "listener");
        if (closed) {
            failLater(listener, tag, new ShardException(Kind.CLOSED, shard, "client closed"));
            return;
        }
        RedisClusterMap map = map();
        RedisCommand.MultiKey multi = command.multiKey();
        int slot;
        if (multi != null) {
            int[] slots = command.keySlots();
            slot = slots.length == 0 ? RedisCommand.NO_KEY : slots[0];
            for (int i = 1; i < slots.length; i++) {
                if (slots[i] != slot) {
                    split(shard, command, slots, listener, tag);
                    return;
                }
            }
        } else {
            slot = command.slot();
        }
        route(map, shard, command, slot, listener, tag);
    }

    /**
     * Connects to every master of the current slot map now (shard {@code i} is master {@code i});
     * replicas connect on first use.
     */
    @Override
    public java.util.concurrent.CompletableFuture<Void> connect() {
        ShardDrivers.requireOnLoop(loop, "connect");
        if (closed) {
            return java.util.concurrent.CompletableFuture.failedFuture(new ShardException(Kind.CLOSED, -1,
                    "client closed"));
        }
        RedisClusterMap map = map();
        List<RedisClusterMap.Node> ms = map.masters();
        if (ms.isEmpty()) {
            topology.requestRefresh("no master to connect to");
            return java.util.concurrent.CompletableFuture.failedFuture(new ShardException(Kind.UNAVAILABLE, -1,
                    "redis-cluster: slot map v" + map.version() + " has no master"));
        }
        List<java.util.concurrent.CompletableFuture<Void>> attempts = new java.util.ArrayList<>();
        for (int i = 0; i < ms.size(); i++) {
            int shard = i;
            InetSocketAddress a = ms.get(i).address();
            attempts.add(node(a, false).connect().handle((v, e) -> {
                if (e != null) {
                    Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                            ? e.getCause() : e;
                    throw new java.util.concurrent.CompletionException(new ShardException(
                            c instanceof ShardException se ? se.kind() : Kind.UNAVAILABLE, shard,
                            "redis-cluster master " + a.getHostString() + ":" + a.getPort() + ": " + c.getMessage(), c));
                }
                return null;
            }));
        }
        return ShardDrivers.allConnected(attempts);
    }

    private RedisClusterMap map() {
        RedisClusterMap m = topology.current();
        if (m != seen) {
            reconcile(m);
        }
        return m;
    }

    /** Sends one single-slot (or keyless) command where the map says, through a recycled call. */
    private void route(RedisClusterMap map, int shard, RedisCommand<?> command, int slot, ReplyListener listener,
            int tag) {
        RedisClusterMap.Node target;
        boolean replica = false;
        if (slot >= 0) {
            target = map.owner(slot);
            if (target == null) {
                topology.requestRefresh("slot " + slot + " has no owner");
                failLater(listener, tag, new ShardException(Kind.UNAVAILABLE, shard, "redis-cluster: slot " + slot
                        + " is served by no node in slot map v" + map.version()
                        + " (cluster state fail, or a slot not assigned); refreshing the map"));
                return;
            }
            if (readFrom != RedisDriver.ReadFrom.MASTER && command.readOnly()) {
                List<RedisClusterMap.Node> rs = map.replicasOf(target.index());
                if (!rs.isEmpty()) {
                    target = rs.get(Math.floorMod(nextReplica++, rs.size()));
                    replica = true;
                } else if (readFrom == RedisDriver.ReadFrom.REPLICA) {
                    failLater(listener, tag, new ShardException(Kind.UNAVAILABLE, shard, "redis-cluster: master "
                            + target + " of slot " + slot + " has no healthy replica (read-from=replica)"));
                    return;
                }
            }
        } else {
            List<RedisClusterMap.Node> ms = map.masters();
            if (shard < 0 || shard >= ms.size()) {
                failLater(listener, tag, new ShardException(Kind.SHARD_ERROR, shard, "redis-cluster: " + command.type()
                        + " carries no key, and master " + shard + " is not in slot map v" + map.version() + " ("
                        + ms.size() + " masters)"));
                return;
            }
            target = ms.get(shard);
        }
        ClusterCall c = obtain();
        c.listener = listener;
        c.tag = tag;
        c.shard = shard;
        c.command = command;
        c.slot = slot;
        c.redirects = 0;
        c.node = target.address();
        c.replica = replica;
        node(target.address(), replica).send(0, command, c, 0);
    }

    private LoopClient<RedisCommand<?>> node(InetSocketAddress a, boolean replica) {
        Map<InetSocketAddress, LoopClient<RedisCommand<?>>> m = replica ? readers : masters;
        LoopClient<RedisCommand<?>> n = m.get(a);
        if (n == null) {
            if (lettuce) { // replicas are refused at open with connection=per-loop (no READONLY handshake)
                io.lettuce.core.RedisURI uri = io.lettuce.core.RedisURI.builder().withHost(a.getHostString())
                        .withPort(a.getPort()).withTimeout(driver.settings().callTimeout()).build();
                n = ShardDrivers.narrow(new RedisLoopClient(driver, loop, ShardDrivers.socketChannelClass(loop),
                        new io.lettuce.core.RedisURI[] {uri}));
            } else {
                n = new PipelinedLoopClient<>(loop, List.of(a), replica ? RespProtocol.READ_ONLY : RespProtocol.INSTANCE,
                        driver.settings(), Duration.ofMillis(RedisDriver.RECONNECT_BACKOFF_MILLIS),
                        "redis-cluster node " + a.getHostString() + ":" + a.getPort() + (replica ? " (replica)" : ""),
                        x -> { });
            }
            m.put(a, n);
        }
        return n;
    }

    /** The map changed: connections to nodes no longer in it are closed after a grace period. */
    private void reconcile(RedisClusterMap m) {
        seen = m;
        Set<InetSocketAddress> now = m.addresses();
        for (Map<InetSocketAddress, LoopClient<RedisCommand<?>>> pool : List.of(masters, readers)) {
            for (Iterator<Map.Entry<InetSocketAddress, LoopClient<RedisCommand<?>>>> it = pool.entrySet()
                    .iterator(); it.hasNext(); ) {
                Map.Entry<InetSocketAddress, LoopClient<RedisCommand<?>>> e = it.next();
                if (!now.contains(e.getKey())) {
                    it.remove();
                    LoopClient<RedisCommand<?>> gone = e.getValue();
                    loop.schedule(gone::close, graceMillis, TimeUnit.MILLISECONDS);
                }
            }
        }
    }

    /**
     * A multi-key command over several slots: one part per slot (a {@code GET} for an {@code MGET}
     * part of one key), one reply to the caller.
     */
    private void split(int shard, RedisCommand<?> command, int[] slots, ReplyListener listener, int tag) {
        RedisCommand.MultiKey multi = command.multiKey();
        int n = slots.length;
        int[] partOf = new int[n];
        int[] partSlot = new int[n];
        int[] partSize = new int[n];
        int parts = 0;
        for (int i = 0; i < n; i++) {
            int p = 0;
            while (p < parts && partSlot[p] != slots[i]) {
                p++;
            }
            if (p == parts) {
                partSlot[parts++] = slots[i];
            }
            partOf[i] = p;
            partSize[p]++;
        }
        int[][] positions = new int[parts][];
        for (int p = 0; p < parts; p++) {
            positions[p] = new int[partSize[p]];
            partSize[p] = 0;
        }
        for (int i = 0; i < n; i++) {
            int p = partOf[i];
            positions[p][partSize[p]++] = i;
        }
        Split s = new Split(multi, positions, listener, tag);
        RedisClusterMap map = seen;
        for (int p = 0; p < parts; p++) {
            int[] at = positions[p];
            RedisCommand<?> part;
            if (at.length == 1 && multi.single() != null) {
                part = multi.single().apply(multi.keys().get(at[0]));
            } else {
                List<Object> keys = new ArrayList<>(at.length);
                for (int i : at) {
                    keys.add(multi.keys().get(i));
                }
                part = multi.part().apply(keys);
            }
            route(map, shard, part, partSlot[p], s, p);
        }
    }

    private ClusterCall obtain() {
        ClusterCall c = free;
        if (c != null) {
            free = c.next;
            c.next = null;
            return c;
        }
        return new ClusterCall();
    }

    private void failLater(ReplyListener listener, int tag, ShardException cause) {
        loop.execute(() -> ShardDrivers.deliverFailure(listener, tag, cause));
    }

    /**
     * One call in flight to a node: delivers the node's reply to the caller, or follows a redirect.
     * Recycled (loop-confined free list).
     */
    private final class ClusterCall implements ReplyListener {
        ReplyListener listener;
        int tag;
        int shard;
        RedisCommand<?> command;
        int slot;
        int redirects;
        InetSocketAddress node;
        boolean replica;
        ClusterCall next;

        @Override
        public void onReply(int ignored, Object reply) {
            ReplyListener l = listener;
            int t = tag;
            recycle();
            ShardDrivers.deliverReply(l, t, reply);
        }

        @Override
        public void onFailure(int ignored, ShardException cause) {
            if (cause.kind() == Kind.SHARD_ERROR && !closed) {
                String m = cause.getMessage();
                int at = m == null ? -1 : m.indexOf("MOVED ");
                int ask = m == null ? -1 : m.indexOf("ASK ");
                if (at >= 0 || ask >= 0) {
                    redirect(m.substring(at >= 0 ? at + 6 : ask + 4), at >= 0, m);
                    return;
                }
            }
            if (cause.kind() == Kind.UNAVAILABLE) {
                topology.requestRefresh("node " + node + ": " + cause.getMessage());
            }
            ShardException out = new ShardException(cause.kind(), shard, "redis-cluster " + (replica ? "replica " : "")
                    + "node " + node.getHostString() + ":" + node.getPort() + (slot >= 0 ? " (slot " + slot + ")" : "")
                    + ": " + cause.getMessage(), cause.getCause());
            ReplyListener l = listener;
            int t = tag;
            recycle();
            ShardDrivers.deliverFailure(l, t, out);
        }

        /** {@code slot host:port} after {@code MOVED } or {@code ASK }. */
        private void redirect(String where, boolean moved, String message) {
            InetSocketAddress to = null;
            int toSlot = -1;
            String[] f = where.trim().split(" ");
            if (f.length >= 2) {
                int colon = f[1].lastIndexOf(':');
                try {
                    toSlot = Integer.parseInt(f[0]);
                    if (colon > 0) {
                        to = InetSocketAddress.createUnresolved(f[1].substring(0, colon),
                                Integer.parseInt(f[1].substring(colon + 1)));
                        to = new InetSocketAddress(to.getHostString().isEmpty() ? node.getHostString()
                                : to.getHostString(), to.getPort());
                    }
                } catch (NumberFormatException e) {
                    to = null;
                }
            }
            if (to == null || toSlot < 0 || toSlot >= io.doubleface.api.ShardRouting.REDIS_SLOTS) {
                fail(Kind.SHARD_ERROR, "redis-cluster: malformed redirect from " + node + ": " + message);
                return;
            }
            if (++redirects > MAX_REDIRECTS) {
                topology.requestRefresh("redirect loop");
                fail(Kind.SHARD_ERROR, "redis-cluster: " + command.type() + " redirected " + MAX_REDIRECTS
                        + " times without an answer (last from " + node + ": " + message.substring(message.indexOf(moved
                        ? "MOVED" : "ASK")) + "): the cluster's nodes disagree about slot " + toSlot);
                return;
            }
            node = to;
            replica = false;
            if (moved) {
                topology.moved(toSlot, to);
                node(to, false).send(0, command, this, 0);
            } else {
                topology.asked();
                LoopClient<RedisCommand<?>> n = node(to, false);
                n.send(0, ASKING, IGNORE, 0); // on the same connection, right before the call
                n.send(0, command, this, 0);
            }
        }

        private void fail(Kind kind, String message) {
            ReplyListener l = listener;
            int t = tag;
            int s = shard;
            recycle();
            ShardDrivers.deliverFailure(l, t, new ShardException(kind, s, message));
        }

        private void recycle() {
            listener = null;
            command = null;
            node = null;
            next = free;
            free = this;
        }
    }

    /** The reply to {@code ASKING}: nothing to do ({@code +OK}, or an error the call itself will show). */
    private static final ReplyListener IGNORE = new ReplyListener() {
        @Override
        public void onReply(int tag, Object reply) {
            ReferenceCountUtil.release(reply);
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            // the call sent after it fails or succeeds on its own
        }
    };

    /** The parts of a split multi-key command; the caller's one outcome. Loop-confined. */
    private static final class Split implements ReplyListener {
        final RedisCommand.MultiKey multi;
        /** The key positions (in the command) of each part. */
        final int[][] positions;
        final ReplyListener listener;
        final int tag;
        /** {@code IN_KEY_ORDER}: each key's value (or {@code null}), by position; {@code SUM}: unused. */
        final Object[] values;
        long sum;
        int remaining;
        boolean done;

        Split(RedisCommand.MultiKey multi, int[][] positions, ReplyListener listener, int tag) {
            this.multi = multi;
            this.positions = positions;
            this.listener = listener;
            this.tag = tag;
            this.remaining = positions.length;
            this.values = multi.combine() == RedisCommand.Combine.IN_KEY_ORDER ? new Object[multi.keys().size()] : null;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void onReply(int part, Object reply) {
            if (done) {
                ReferenceCountUtil.release(reply);
                return;
            }
            try {
                int[] at = positions[part];
                if (values == null) {
                    sum += (Long) reply;
                } else if (at.length == 1 && multi.single() != null) {
                    values[at[0]] = reply;
                } else {
                    List<?> vs = (List<?>) reply;
                    if (vs.size() != at.length) {
                        throw new IllegalStateException("a part of " + at.length + " keys answered " + vs.size()
                                + " values");
                    }
                    for (int i = 0; i < at.length; i++) {
                        values[at[i]] = vs.get(i);
                    }
                }
            } catch (RuntimeException e) {
                done = true;
                ShardDrivers.deliverFailure(listener, tag, new ShardException(Kind.SHARD_ERROR, 0,
                        "redis-cluster: cannot put the parts of a split command together: " + e.getMessage(), e));
                return;
            }
            if (--remaining == 0) {
                done = true;
                ShardDrivers.deliverReply(listener, tag, values == null ? (Object) sum : java.util.Arrays.asList(values));
            }
        }

        @Override
        public void onFailure(int part, ShardException cause) {
            if (done) {
                return;
            }
            done = true;
            ShardDrivers.deliverFailure(listener, tag, cause);
        }
    }

    /** Fails outstanding calls with {@code CLOSED} and closes every node connection. Any thread. */
    @Override
    public void close() {
        if (ShardDrivers.handToLoop(loop, this::close, () -> {
                driver.clients.forget(this);
        })) {
            return;
        }
        if (closed) {
            return;
        }
        closed = true;
        for (LoopClient<RedisCommand<?>> n : List.copyOf(masters.values())) {
            n.close();
        }
        for (LoopClient<RedisCommand<?>> n : List.copyOf(readers.values())) {
            n.close();
        }
        masters.clear();
        readers.clear();
        driver.clients.forget(this);
    }

    @Override
    public String toString() {
        return "RedisClusterLoopClient[" + driver.describe() + " on " + loop + "]";
    }
}
