package io.doubleface.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The shards of a Redis Cluster ({@code redis-cluster://host:port[,host:port]}): shard {@code i}
 * is the {@code i}-th master node in the order of the lowest hash slot it serves. Each shard's
 * keys carry a hash tag ({@code {tag}user:k}, {@code {tag}rec:k}) whose slot that master serves,
 * chosen as the smallest number {@code t} with {@code SlotHash.getSlot("{t}")} in the master's
 * slot ranges; so every key of a shard lives in one slot of one master (routed by slot, as a
 * cluster client would), an {@code MGET} of a SCAN is a single-slot command, and every shard holds
 * the whole dataset, as KV shards do.
 *
 * <p>Discovery is a one-time {@code CLUSTER NODES} through the first reachable seed. Slot
 * migrations or fail-overs after that are not followed: restart the mid-tier (and reload) after
 * resharding. Node addresses are those the cluster announces.
 */
final class RedisClusterShards {

    /** URI scheme: {@value}. */
    static final String SCHEME = "redis-cluster";

    private final List<InetSocketAddress> masters;
    private final List<String> tags;

    private RedisClusterShards(List<InetSocketAddress> masters, List<String> tags) {
        this.masters = masters;
        this.tags = tags;
    }

    List<InetSocketAddress> masters() {
        return masters;
    }

    List<String> tags() {
        return tags;
    }

    /** Asks the first reachable seed for the cluster's masters. */
    static RedisClusterShards discover(List<InetSocketAddress> seeds, Duration timeout) {
        RuntimeException last = null;
        for (InetSocketAddress seed : seeds) {
            RedisClient client = RedisClient.create();
            try {
                RedisURI uri = RedisURI.builder().withHost(seed.getHostString()).withPort(seed.getPort())
                        .withTimeout(timeout.multipliedBy(5)).build();
                try (StatefulRedisConnection<String, String> c = client.connect(uri)) {
                    return parse(c.sync().clusterNodes(), seed.getHostString());
                }
            } catch (RuntimeException e) {
                last = e;
            } finally {
                client.shutdown(0, 1, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
        throw new IllegalStateException("redis-cluster: no seed of " + seeds + " answered CLUSTER NODES"
                + (last == null ? "" : ": " + last.getMessage()), last);
    }

    /**
     * Makes a cluster of fresh {@code --cluster-enabled} nodes: node {@code i} gets the
     * {@code i}-th of {@code nodes.size()} even slot ranges, all meet the first, and this waits
     * (up to 30 s) until every node reports {@code cluster_state:ok}.
     */
    static void form(List<InetSocketAddress> nodes) {
        RedisClient client = RedisClient.create();
        List<StatefulRedisConnection<String, String>> conns = new ArrayList<>();
        try {
            for (InetSocketAddress a : nodes) {
                conns.add(client.connect(RedisURI.builder().withHost(a.getHostString()).withPort(a.getPort())
                        .withTimeout(Duration.ofSeconds(10)).build()));
            }
            int n = nodes.size();
            for (int i = 0; i < n; i++) {
                int lo = (int) ((long) SlotHash.SLOT_COUNT * i / n);
                int hi = (int) ((long) SlotHash.SLOT_COUNT * (i + 1) / n) - 1;
                int[] slots = new int[hi - lo + 1];
                for (int k = 0; k < slots.length; k++) {
                    slots[k] = lo + k;
                }
                conns.get(i).sync().clusterAddSlots(slots);
            }
            for (int i = 1; i < n; i++) {
                conns.get(i).sync().clusterMeet(nodes.get(0).getHostString(), nodes.get(0).getPort());
            }
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            for (StatefulRedisConnection<String, String> c : conns) {
                while (!c.sync().clusterInfo().contains("cluster_state:ok")
                        || c.sync().clusterNodes().lines().filter(l -> !l.isBlank()).count() < n) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("redis cluster did not form within 30 s: "
                                + c.sync().clusterInfo().lines().findFirst().orElse(""));
                    }
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted while forming the cluster", e);
                    }
                }
            }
        } finally {
            for (StatefulRedisConnection<String, String> c : conns) {
                c.close();
            }
            client.shutdown(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** Reads {@code CLUSTER NODES} output; {@code seedHost} replaces empty announced hosts. */
    static RedisClusterShards parse(String clusterNodes, String seedHost) {
        record Master(InetSocketAddress address, List<int[]> ranges) {}
        List<Master> ms = new ArrayList<>();
        for (String line : clusterNodes.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length < 8 || !(("," + f[2] + ",").contains(",master,")) || f[2].contains("fail")) {
                continue;
            }
            String addr = f[1];
            int at = addr.indexOf('@');
            if (at >= 0) {
                addr = addr.substring(0, at);
            }
            int comma = addr.indexOf(',');
            if (comma >= 0) {
                addr = addr.substring(0, comma);
            }
            int colon = addr.lastIndexOf(':');
            String host = addr.substring(0, colon);
            if (host.isEmpty()) {
                host = seedHost;
            }
            int port = Integer.parseInt(addr.substring(colon + 1));
            List<int[]> ranges = new ArrayList<>();
            for (int i = 8; i < f.length; i++) {
                if (f[i].startsWith("[")) {
                    continue; // a slot being migrated
                }
                int dash = f[i].indexOf('-');
                int lo = Integer.parseInt(dash < 0 ? f[i] : f[i].substring(0, dash));
                int hi = dash < 0 ? lo : Integer.parseInt(f[i].substring(dash + 1));
                ranges.add(new int[] {lo, hi});
            }
            if (!ranges.isEmpty()) {
                ms.add(new Master(new InetSocketAddress(host, port), ranges));
            }
        }
        if (ms.isEmpty()) {
            throw new IllegalStateException("redis-cluster: CLUSTER NODES lists no master serving slots");
        }
        ms.sort(Comparator.comparingInt(m -> m.ranges().stream().mapToInt(r -> r[0]).min().orElse(0)));
        List<InetSocketAddress> addresses = new ArrayList<>();
        List<String> tags = new ArrayList<>();
        for (Master m : ms) {
            addresses.add(m.address());
            tags.add(tagFor(m.ranges()));
        }
        return new RedisClusterShards(List.copyOf(addresses), List.copyOf(tags));
    }

    private static String tagFor(List<int[]> ranges) {
        for (int t = 0; t < 1_000_000; t++) {
            int slot = SlotHash.getSlot(Integer.toString(t));
            for (int[] r : ranges) {
                if (slot >= r[0] && slot <= r[1]) {
                    return Integer.toString(t);
                }
            }
        }
        throw new IllegalStateException("redis-cluster: no hash tag found for slots " + ranges.size() + " ranges");
    }
}
