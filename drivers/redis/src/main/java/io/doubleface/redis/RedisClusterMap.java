package io.doubleface.redis;

import io.doubleface.api.ShardRouting;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One immutable snapshot of a Redis Cluster's topology: which master owns each of the
 * {@value ShardRouting#REDIS_SLOTS} hash slots, and each master's replicas. The driver keeps the
 * current snapshot in one atomic reference ({@link RedisClusterTopology}); the loops read it on
 * every send and never lock. A refresh builds a new snapshot and swaps it in; a {@code MOVED}
 * redirect swaps in a copy with one slot changed ({@link #moved}).
 *
 * <p>The slot table is 128 chunks of 128 slots, so that copy costs two 128-entry arrays, not a
 * 16,384-entry one: a fail-over moves thousands of slots at once, and each of them may be
 * redirected once before the refresh that follows lands.
 *
 * <p>Shard index {@code i} of the driver is the {@code i}-th master in the order of the lowest slot
 * it serves (what {@code plan.broadcast} and index-addressed calls reach).
 *
 * <p>Immutable and thread-safe.
 */
final class RedisClusterMap {

    private static final int CHUNK_BITS = 7;
    private static final int CHUNK = 1 << CHUNK_BITS;
    private static final int CHUNKS = ShardRouting.REDIS_SLOTS / CHUNK;

    /**
     * A node of the cluster.
     *
     * @param address where it is reached
     * @param id the cluster's node id ({@code ""} if not known, e.g. a node named only by a redirect)
     * @param master whether it serves slots as a master
     * @param index its shard index (position among the masters) for a master, {@code -1} otherwise
     */
    record Node(InetSocketAddress address, String id, boolean master, int index) {
        @Override
        public String toString() {
            return address.getHostString() + ":" + address.getPort();
        }
    }

    private final long version;
    private final List<Node> masters;
    /** The replicas of master {@code i} (those the cluster reports healthy). */
    private final List<List<Node>> replicas;
    /** Slot owner by chunk: {@code owners[slot >>> 7][slot & 127]}; {@code null} for a slot nobody serves. */
    private final Node[][] owners;
    private final int servedSlots;
    /** Replicas the cluster listed as still syncing when this map was read. */
    private int pendingReplicas;

    private RedisClusterMap(long version, List<Node> masters, List<List<Node>> replicas, Node[][] owners) {
        this.version = version;
        this.masters = masters;
        this.replicas = replicas;
        this.owners = owners;
        int served = 0;
        for (Node[] chunk : owners) {
            for (Node n : chunk) {
                if (n != null) {
                    served++;
                }
            }
        }
        this.servedSlots = served;
    }

    /**
     * A master and the slot ranges it serves, its replicas, as read from the cluster.
     *
     * @param pendingReplicas replicas the cluster lists but does not report ready yet ({@code loading}:
     *     still syncing), left out of {@code replicas}
     */
    record Shard(InetSocketAddress master, String masterId, List<int[]> ranges, List<InetSocketAddress> replicas,
            int pendingReplicas) {
        Shard(InetSocketAddress master, String masterId, List<int[]> ranges, List<InetSocketAddress> replicas) {
            this(master, masterId, ranges, replicas, 0);
        }
    }

    /**
     * Builds a snapshot from the cluster's answer.
     *
     * @param version the snapshot's version
     * @param shards every master that serves at least one slot, with its ranges and healthy replicas
     * @throws IllegalStateException if no master serves a slot
     */
    static RedisClusterMap of(long version, List<Shard> shards) {
        List<Shard> sorted = new ArrayList<>();
        for (Shard s : shards) {
            if (!s.ranges().isEmpty()) {
                sorted.add(s);
            }
        }
        if (sorted.isEmpty()) {
            throw new IllegalStateException("the cluster reports no master serving slots");
        }
        sorted.sort((a, b) -> Integer.compare(lowest(a), lowest(b)));
        List<Node> masters = new ArrayList<>();
        List<List<Node>> replicas = new ArrayList<>();
        Node[][] owners = new Node[CHUNKS][];
        for (int c = 0; c < CHUNKS; c++) {
            owners[c] = new Node[CHUNK];
        }
        for (int i = 0; i < sorted.size(); i++) {
            Shard s = sorted.get(i);
            Node m = new Node(s.master(), s.masterId(), true, i);
            masters.add(m);
            List<Node> rs = new ArrayList<>();
            for (InetSocketAddress r : s.replicas()) {
                rs.add(new Node(r, "", false, -1));
            }
            replicas.add(List.copyOf(rs));
            for (int[] r : s.ranges()) {
                for (int slot = Math.max(0, r[0]); slot <= Math.min(ShardRouting.REDIS_SLOTS - 1, r[1]); slot++) {
                    owners[slot >>> CHUNK_BITS][slot & (CHUNK - 1)] = m;
                }
            }
        }
        RedisClusterMap m = new RedisClusterMap(version, List.copyOf(masters), List.copyOf(replicas), owners);
        for (Shard s : sorted) {
            m.pendingReplicas += s.pendingReplicas();
        }
        return m;
    }

    /** {@return replicas the cluster listed as still syncing when this map was read (not read from yet)} */
    int pendingReplicas() {
        return pendingReplicas;
    }

    private static int lowest(Shard s) {
        int min = Integer.MAX_VALUE;
        for (int[] r : s.ranges()) {
            min = Math.min(min, r[0]);
        }
        return min;
    }

    /** {@return the snapshot's version: 1 for the first, one more for each refresh that changed something} */
    long version() {
        return version;
    }

    /** {@return the masters, shard {@code i} at index {@code i}} */
    List<Node> masters() {
        return masters;
    }

    /** {@return the replicas of master {@code index}} */
    List<Node> replicasOf(int index) {
        return index >= 0 && index < replicas.size() ? replicas.get(index) : List.of();
    }

    /** {@return how many slots some master serves (16384 when the cluster covers every slot)} */
    int servedSlots() {
        return servedSlots;
    }

    /** {@return the master serving {@code slot}, or {@code null} if none does} */
    Node owner(int slot) {
        return owners[slot >>> CHUNK_BITS][slot & (CHUNK - 1)];
    }

    /** {@return every node's address: masters, then replicas} */
    Set<InetSocketAddress> addresses() {
        Set<InetSocketAddress> all = new LinkedHashSet<>();
        for (Node m : masters) {
            all.add(m.address());
        }
        for (List<Node> rs : replicas) {
            for (Node r : rs) {
                all.add(r.address());
            }
        }
        for (Node[] chunk : owners) {
            for (Node n : chunk) {
                if (n != null) {
                    all.add(n.address()); // a node learnt from a MOVED
                }
            }
        }
        return all;
    }

    /**
     * This snapshot with {@code slot} served by the node at {@code to} (what a {@code MOVED} said),
     * or this very snapshot if that is already so. The version stays: a refresh replaces it soon.
     */
    RedisClusterMap moved(int slot, InetSocketAddress to) {
        Node now = owner(slot);
        if (now != null && now.address().equals(to)) {
            return this;
        }
        Node target = null;
        for (Node m : masters) {
            if (m.address().equals(to)) {
                target = m;
                break;
            }
        }
        if (target == null) {
            target = new Node(to, "", true, -1); // a node not (yet) in the map: a promoted replica, a new master
        }
        Node[][] copy = owners.clone();
        int c = slot >>> CHUNK_BITS;
        copy[c] = owners[c].clone();
        copy[c][slot & (CHUNK - 1)] = target;
        return new RedisClusterMap(version, masters, replicas, copy);
    }

    /** Whether {@code other} routes every slot and replica as this one does (a refresh that changed nothing). */
    boolean sameRouting(RedisClusterMap other) {
        if (!masters.equals(other.masters) || !replicas.equals(other.replicas)) {
            return false;
        }
        for (int c = 0; c < CHUNKS; c++) {
            if (owners[c] != other.owners[c] && !Arrays.equals(owners[c], other.owners[c])) {
                return false;
            }
        }
        return true;
    }

    /** This routing under {@code version}. */
    RedisClusterMap withVersion(long version) {
        RedisClusterMap m = new RedisClusterMap(version, masters, replicas, owners);
        m.pendingReplicas = pendingReplicas;
        return m;
    }

    /** {@return the slot ranges master {@code index} serves, e.g. {@code [[0, 5460]]}} */
    List<int[]> rangesOf(int index) {
        List<int[]> out = new ArrayList<>();
        int start = -1;
        for (int slot = 0; slot <= ShardRouting.REDIS_SLOTS; slot++) {
            Node n = slot < ShardRouting.REDIS_SLOTS ? owner(slot) : null;
            boolean mine = n != null && n.index() == index && n.master();
            if (mine && start < 0) {
                start = slot;
            } else if (!mine && start >= 0) {
                out.add(new int[] {start, slot - 1});
                start = -1;
            }
        }
        return out;
    }

    /** {@return the addresses of the nodes in this map that are not in {@code other}} */
    Set<InetSocketAddress> notIn(Set<InetSocketAddress> other) {
        Set<InetSocketAddress> gone = new HashSet<>(addresses());
        gone.removeAll(other);
        return gone;
    }

    @Override
    public String toString() {
        return "RedisClusterMap[v" + version + ", " + masters.size() + " masters, " + servedSlots + " slots served]";
    }
}
