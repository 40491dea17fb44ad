package io.doubleface.redis;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.ShardRouting;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.Outcomes;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code redis-cluster://} (its native node connections, and Lettuce's with {@code connection=per-loop})
 * against real Redis Clusters of {@code redis-server} processes (3 masters,
 * each with a replica), keys under their natural names, placed by Redis: key routing checked
 * against the cluster's own {@code CLUSTER KEYSLOT} and Lettuce's view of the slot map, cross-slot
 * {@code MGET}/{@code DEL}/{@code EXISTS}, a slot migrated during load ({@code ASK}, then
 * {@code MOVED}), a master killed during load (fail-over followed without a restart), replica
 * reads, and the bad cases (a seed that is not a cluster node, a cluster with no slot served, two
 * nodes redirecting to each other).
 */
class RedisClusterTest {

    static final int KEYS = 3000;
    static final Redis<String, String> U = Redis.utf8();

    private static RedisServers cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = RedisServers.startCluster(3, 1, 0, "127.0.0.1");
        load(cluster);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    static String key(int i) {
        return "user:" + i;
    }

    static String value(int i) {
        return "value-of-user-" + i + ":" + "x".repeat(i % 50);
    }

    /** Writes the keys with Lettuce's own cluster client (an independent implementation), then waits for the replicas. */
    static void load(RedisServers servers) throws Exception {
        RedisClusterClient c = RedisClusterClient.create(RedisURI.create(servers.addresses().get(0).getHostString(),
                servers.addresses().get(0).getPort()));
        try (StatefulRedisClusterConnection<String, String> conn = c.connect()) {
            Map<String, String> kv = new LinkedHashMap<>();
            for (int i = 0; i < KEYS; i++) {
                kv.put(key(i), value(i));
            }
            assertEquals("OK", conn.sync().mset(kv));
            conn.sync().set("{tenant}:cart", "three items");
            conn.sync().set("{tenant}:name", "acme");
        } finally {
            c.shutdown();
        }
        awaitReplicated(servers);
    }

    /** Until every replica's replication offset equals its master's. */
    static void awaitReplicated(RedisServers servers) throws Exception {
        List<InetSocketAddress> all = servers.addresses();
        awaitReplicated(all.subList(servers.masters(), all.size()));
    }

    /** Until each of {@code replicas} has caught up with its master (replication offsets equal). */
    static void awaitReplicated(List<InetSocketAddress> replicas) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        for (InetSocketAddress a : replicas) {
            while (true) {
                String info = String.valueOf(RedisClusterTopology.command(a, Duration.ofSeconds(5), "INFO", "replication"));
                long master = field(info, "master_repl_offset");
                long replica = field(info, "slave_repl_offset");
                if (info.contains("master_link_status:up") && master >= 0 && master == replica && master > 0) {
                    break;
                }
                assertTrue(System.nanoTime() < deadline, "replica " + a + " did not catch up: " + info);
                Thread.sleep(20);
            }
        }
    }

    private static long field(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        return -1;
    }

    /** {@code calls=} of {@code cmdstat_<cmd>} in the node's {@code INFO commandstats}. */
    static long calls(InetSocketAddress node, String cmd) throws Exception {
        String info = String.valueOf(RedisClusterTopology.command(node, Duration.ofSeconds(5), "INFO", "commandstats"));
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("cmdstat_" + cmd + ":calls=")) {
                String rest = line.substring(("cmdstat_" + cmd + ":calls=").length());
                return Long.parseLong(rest.substring(0, rest.indexOf(',')));
            }
        }
        return 0;
    }

    static RedisDriver open(String options) {
        RedisDriver d = RedisDriver.of(cluster.uri() + options, RedisDriverTest.SETTINGS);
        awaitReplicasInMap(d, 1);
        return d;
    }

    /**
     * Until the driver's map lists {@code n} replicas per master: right after they attach, the cluster
     * reports replicas {@code loading} for a moment, and the driver reads from them once a refresh
     * finds them {@code online}.
     */
    static void awaitReplicasInMap(RedisDriver d, int n) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            RedisClusterMap m = d.clusterTopology().current();
            boolean all = true;
            for (int i = 0; i < m.masters().size(); i++) {
                all &= m.replicasOf(i).size() == n;
            }
            if (all) {
                return;
            }
            assertTrue(System.nanoTime() < until, "replicas never all online in the map: " + d.topology());
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** Sends {@code commands} routed by key (the shard each was planned with: {@link RedisDriver#shardFor}). */
    static Outcomes sendAll(LoopClient<RedisCommand<?>> client, RedisDriver driver, List<RedisCommand<?>> commands)
            throws InterruptedException {
        EventLoop loop = client.loop();
        Outcomes out = new Outcomes(loop, commands.size());
        loop.submit(() -> {
            for (int i = 0; i < commands.size(); i++) {
                client.send(driver.shardFor(commands.get(i)), commands.get(i), out, i);
            }
        }).syncUninterruptibly();
        return out.await();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"?connection=native", "?connection=per-loop"})
    void everyKeyRoutedCallLandsOnItsSlotOwner(String options) throws Exception {
        try (LoopGroup group = new LoopGroup("rcluster", 1, Transport.AUTO);
                RedisDriver driver = open(options)) {
            assertTrue(driver.isCluster());
            assertEquals(3, driver.shardCount());
            assertEquals(cluster.addresses().subList(0, 3), driver.shards(), "shard i = the master of the i-th slot range");

            // our slot of a key is the cluster's own (CLUSTER KEYSLOT), hash tags included
            for (String k : List.of("user:0", "user:42", "user:2999", "{tenant}:cart", "{tenant}:name", "", "{}x", "a{b}c{d}")) {
                Object slot = RedisClusterTopology.command(cluster.addresses().get(0), Duration.ofSeconds(5), "CLUSTER",
                        "KEYSLOT", k);
                assertEquals(((Long) slot).intValue(), U.get(k).slot(), "slot of '" + k + "'");
            }

            // the owner of each slot per Lettuce's own cluster client
            RedisClusterClient lettuce = RedisClusterClient.create(RedisURI.create("127.0.0.1",
                    cluster.addresses().get(0).getPort()));
            Map<InetSocketAddress, Long> expected = new HashMap<>();
            try {
                lettuce.getPartitions(); // loads them
                for (int i = 0; i < KEYS; i++) {
                    RedisClusterNode owner = lettuce.getPartitions().getPartitionBySlot(U.get(key(i)).slot());
                    expected.merge(new InetSocketAddress(owner.getUri().getHost(), owner.getUri().getPort()), 1L, Long::sum);
                }
            } finally {
                lettuce.shutdown();
            }
            Map<InetSocketAddress, Long> before = new HashMap<>();
            for (InetSocketAddress a : cluster.addresses()) {
                before.put(a, calls(a, "get"));
            }

            LoopClient<RedisCommand<?>> client = driver.openOn(group.loops().get(0));
            List<RedisCommand<?>> gets = new ArrayList<>();
            for (int i = 0; i < KEYS; i++) {
                gets.add(U.get(key(i)));
            }
            Outcomes out = sendAll(client, driver, gets);
            for (int i = 0; i < KEYS; i++) {
                assertEquals(value(i), out.value(i), key(i));
            }
            for (InetSocketAddress a : cluster.addresses()) {
                assertEquals(expected.getOrDefault(a, 0L), calls(a, "get") - before.get(a), "GETs served by " + a);
            }
            assertEquals(0, driver.clusterTopology().stats().movedRedirects(), "no call needed a redirect");

            // keys the team already has, hash tags and all; the planned shard is the slot owner's index
            List<RedisCommand<?>> mixed = List.of(U.get("{tenant}:cart"), U.mget("{tenant}:cart", "{tenant}:name"),
                    U.get("no-such-key"));
            Outcomes m = sendAll(client, driver, mixed);
            assertEquals("three items", m.value(0));
            assertEquals(List.of("three items", "acme"), m.value(1));
            assertEquals(null, m.value(2));
            InetSocketAddress cartOwner = driver.shards().get(driver.shardFor(U.get("{tenant}:cart")));
            assertEquals(driver.clusterTopology().current().owner(ShardRouting.redisSlot("tenant")).address(), cartOwner);

            // a keyless command is addressed by shard: DBSIZE per master sums to the keys written
            List<RedisCommand<?>> sizes = new ArrayList<>();
            for (int s = 0; s < 3; s++) {
                sizes.add(U.raw(io.lettuce.core.protocol.CommandType.DBSIZE, io.lettuce.core.output.IntegerOutput::new,
                        a -> { }));
            }
            Outcomes dbs = new Outcomes(client.loop(), 3);
            client.loop().submit(() -> {
                for (int s = 0; s < 3; s++) {
                    client.send(s, sizes.get(s), dbs, s);
                }
            }).syncUninterruptibly();
            dbs.await();
            assertTrue((Long) dbs.value(0) + (Long) dbs.value(1) + (Long) dbs.value(2) >= KEYS + 2);
            IllegalArgumentException keyless = assertThrows(IllegalArgumentException.class,
                    () -> driver.shardFor(sizes.get(0)));
            assertTrue(keyless.getMessage().contains("carries no key"), keyless.getMessage());

            Map<String, Object> topo = driver.topology();
            assertTrue((Long) topo.get("slot_map_version") >= 1, topo.toString()); // 2 once syncing replicas came online
            assertEquals(16384, topo.get("served_slots"));
            assertEquals(0L, topo.get("moved_redirects"));
            Map<?, ?> first = (Map<?, ?>) ((List<?>) topo.get("masters")).get(0);
            assertEquals(List.of(List.of(0, 5460)), first.get("slots"));
            assertEquals(1, ((List<?>) first.get("replicas")).size(), topo.toString());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"?connection=native", "?connection=per-loop"})
    void multiKeyCommandsAcrossSlotsAreSplitAndPutBackInKeyOrder(String options) throws Exception {
        try (LoopGroup group = new LoopGroup("rcluster", 1, Transport.AUTO);
                RedisDriver driver = open(options)) {
            LoopClient<RedisCommand<?>> client = driver.openOn(group.loops().get(0));
            String[] keys = new String[60];
            List<String> want = new ArrayList<>();
            for (int i = 0; i < keys.length; i++) {
                int k = (i * 37) % KEYS;
                keys[i] = i % 7 == 3 ? "missing:" + i : key(k);
                want.add(i % 7 == 3 ? null : value(k));
            }
            assertTrue(java.util.Arrays.stream(keys).map(k -> U.get(k).slot()).distinct().count() > 3, "keys span slots");
            Outcomes out = sendAll(client, driver, List.of(U.mget(keys), U.exists(keys), U.exists(key(1), key(1), "nope")));
            assertEquals(want, out.value(0));
            assertEquals(keys.length - 9L, out.value(1), "EXISTS counts every existing key across the parts");
            assertEquals(2L, out.value(2), "a key named twice counts twice");

            // written across slots, deleted across slots
            Outcomes w = sendAll(client, driver, List.of(U.set("tmp:a", "1"), U.set("tmp:b", "2"), U.set("tmp:c", "3")));
            assertEquals("OK", w.value(0));
            assertEquals(3L, sendAll(client, driver, List.of(U.del("tmp:a", "tmp:b", "tmp:c", "tmp:none"))).value(0));

            // the blocking face (thread and Type-1 models) routes and splits the same way
            BlockingClient<RedisCommand<?>> blocking = driver.openBlocking();
            assertEquals(want, blocking.call(0, U.mget(keys), TimeUnit.SECONDS.toNanos(20)));
            assertEquals(value(7), blocking.call(2, U.get(key(7)), TimeUnit.SECONDS.toNanos(20)));
            List<Object> got = new ArrayList<>(List.of("", "", ""));
            blocking.callAll(new int[] {0, 0, 0}, List.of(U.get(key(1)), U.get(key(2)), U.get(key(3))),
                    TimeUnit.SECONDS.toNanos(20), new BlockingClient.Sink() {
                        @Override
                        public void onReply(int index, Object reply) {
                            got.set(index, reply);
                        }

                        @Override
                        public void onFailure(int index, ShardException cause) {
                            got.set(index, cause);
                        }
                    });
            assertEquals(List.of(value(1), value(2), value(3)), got);
        }
    }

    @Test
    void replicaReadsGoToReplicasAndWritesToMasters() throws Exception {
        try (LoopGroup group = new LoopGroup("rcluster", 1, Transport.AUTO);
                RedisDriver driver = open("?read-from=replica")) {
            assertEquals(RedisDriver.ReadFrom.REPLICA, driver.readFrom());
            List<InetSocketAddress> all = cluster.addresses();
            Map<InetSocketAddress, Long> before = new HashMap<>();
            for (InetSocketAddress a : all) {
                before.put(a, calls(a, "get") + 1_000_000L * calls(a, "set"));
            }
            LoopClient<RedisCommand<?>> client = driver.openOn(group.loops().get(0));
            List<RedisCommand<?>> gets = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                gets.add(U.get(key(i)));
            }
            gets.add(U.set("written:by-replica-test", "w"));
            Outcomes out = sendAll(client, driver, gets);
            for (int i = 0; i < 300; i++) {
                assertEquals(value(i), out.value(i), key(i));
            }
            assertEquals("OK", out.value(300));
            long replicaGets = 0;
            long masterGets = 0;
            long masterSets = 0;
            for (int i = 0; i < all.size(); i++) {
                InetSocketAddress a = all.get(i);
                long getsNow = calls(a, "get");
                long setsNow = calls(a, "set");
                long d = getsNow + 1_000_000L * setsNow - before.get(a);
                if (i < cluster.masters()) {
                    masterGets += d % 1_000_000L;
                    masterSets += d / 1_000_000L;
                } else {
                    replicaGets += d % 1_000_000L;
                }
            }
            assertEquals(300, replicaGets, "every GET served by a replica (READONLY connection)");
            assertEquals(0, masterGets, "no GET on a master");
            assertEquals(1, masterSets, "the write went to a master");
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"?connection=native", "?connection=per-loop"})
    void aSlotMigratedDuringLoadIsFollowedThroughAskThenMoved(String options) throws Exception {
        try (RedisServers c = RedisServers.startCluster(3, 0, 0, "127.0.0.1");
                LoopGroup group = new LoopGroup("rcluster", 1, Transport.AUTO);
                RedisDriver driver = RedisDriver.of(c.uri() + options, RedisDriverTest.SETTINGS)) {
            // 200 keys in one slot ({mig}), owned by some master; move that slot to another master
            int slot = ShardRouting.redisSlot("mig");
            RedisClusterMap map = driver.clusterTopology().current();
            InetSocketAddress from = map.owner(slot).address();
            InetSocketAddress to = map.masters().stream().map(RedisClusterMap.Node::address)
                    .filter(a -> !a.equals(from)).findFirst().orElseThrow();
            Duration t = Duration.ofSeconds(5);
            for (int i = 0; i < 200; i++) {
                assertEquals("OK", RedisClusterTopology.command(from, t, "SET", "{mig}:" + i, "m" + i));
            }
            String fromId = nodeId(from);
            String toId = nodeId(to);

            Load load = new Load(group.loops().get(0), driver, i -> "{mig}:" + (i % 200), i -> "m" + (i % 200));
            load.start();
            Thread.sleep(300);
            assertEquals("OK", RedisClusterTopology.command(to, t, "CLUSTER", "SETSLOT", Integer.toString(slot),
                    "IMPORTING", fromId));
            assertEquals("OK", RedisClusterTopology.command(from, t, "CLUSTER", "SETSLOT", Integer.toString(slot),
                    "MIGRATING", toId));
            for (int i = 0; i < 200; i++) { // one key at a time, so reads meet both halves (ASK)
                Object r = RedisClusterTopology.command(from, t, "MIGRATE", "127.0.0.1", Integer.toString(to.getPort()),
                        "{mig}:" + i, "0", "5000");
                assertEquals("OK", r, "MIGRATE {mig}:" + i);
                Thread.sleep(2);
            }
            for (InetSocketAddress m : c.addresses()) {
                RedisClusterTopology.command(m, t, "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", toId);
            }
            Thread.sleep(500);
            load.stop();
            assertEquals(0, load.wrong.get(), "wrong answers");
            assertEquals(List.of(), load.failures, "failed calls");
            assertTrue(load.ok.get() > 100, "answers: " + load.ok.get());
            RedisClusterTopology.Stats st = driver.clusterTopology().stats();
            assertTrue(st.askRedirects() > 0, "ASK followed: " + st);
            assertTrue(st.movedRedirects() > 0, "MOVED followed after the slot changed hands: " + st);
            assertEquals(to, driver.clusterTopology().current().owner(slot).address(), "the map learnt the new owner");
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"?connection=native", "?connection=per-loop"})
    void aKilledMasterIsReplacedByItsReplicaWithoutARestart(String options) throws Exception {
        try (RedisServers c = RedisServers.startCluster(3, 1, 0, "127.0.0.1");
                LoopGroup group = new LoopGroup("rcluster", 1, Transport.AUTO)) {
            load(c);
            try (RedisDriver driver = RedisDriver.of(c.uri() + options, RedisDriverTest.SETTINGS)) {
                InetSocketAddress dead = c.addresses().get(0);
                Load load = new Load(group.loops().get(0), driver, RedisClusterTest::key, RedisClusterTest::value);
                load.start();
                Thread.sleep(500);
                long killedAt = System.nanoTime();
                c.kill(0);
                InetSocketAddress promoted = RedisServers.awaitFailover(c.addresses().get(1), 0, dead, 30_000);
                long promotedAt = System.nanoTime();
                assertEquals(c.addresses().get(3), promoted, "master 0's replica took over");
                // until the map has it, and a little after: every call either right or failed, clearly
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (driver.clusterTopology().current().owner(0).address().equals(dead) && System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                assertEquals(promoted, driver.clusterTopology().current().owner(0).address(), "map refreshed without restart");
                long mapAt = System.nanoTime();
                Thread.sleep(1000);
                int failuresBefore = load.failures.size();
                long okBefore = load.ok.get();
                Thread.sleep(1000);
                load.stop();
                assertEquals(0, load.wrong.get(), "wrong answers");
                assertEquals(failuresBefore, load.failures.size(), "no failure a second after the map changed: "
                        + load.failures.subList(failuresBefore, load.failures.size()));
                assertTrue(load.ok.get() > okBefore, "answers after the fail-over");
                assertTrue(load.okOnDeadSlotsAfter(mapAt) > 0, "the dead master's slots are served again");
                for (String f : load.failures) {
                    assertTrue((f.startsWith("UNAVAILABLE") || f.startsWith("TIMEOUT")) && f.contains("redis-cluster"),
                            "a clear, bounded failure: " + f);
                }
                System.out.printf("fail-over: killed at 0, replica promoted after %d ms, map refreshed after %d ms; "
                        + "%d calls failed meanwhile, %d answered%n", TimeUnit.NANOSECONDS.toMillis(promotedAt - killedAt),
                        TimeUnit.NANOSECONDS.toMillis(mapAt - killedAt), load.failures.size(), load.ok.get());
            }
        }
    }

    @Test
    void seedThatIsNotAClusterNodeFailsOpenWithTheReason() {
        try (RedisServers plain = RedisServers.start(1, 0)) {
            InetSocketAddress a = plain.addresses().get(0);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> RedisDriver.of(
                    "redis-cluster://127.0.0.1:" + a.getPort(), RedisDriverTest.SETTINGS));
            assertTrue(e.getMessage().contains("127.0.0.1:" + a.getPort()) && e.getMessage().contains("not a cluster node"),
                    e.getMessage());
        }
        try (RedisServers lonely = RedisServers.startClusterNodesOnly(1, "127.0.0.1")) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> RedisDriver.of(lonely.uri(),
                    RedisDriverTest.SETTINGS));
            assertTrue(e.getMessage().contains("no master serving slots"), e.getMessage());
        }
    }

    @Test
    void twoNodesRedirectingToEachOtherFailTheCallBoundedly() throws Exception {
        try (FakeNode a = new FakeNode(); FakeNode b = new FakeNode();
                LoopGroup group = new LoopGroup("rcluster", 1, Transport.AUTO)) {
            a.redirectTo = b.port();
            b.redirectTo = a.port();
            try (RedisDriver driver = RedisDriver.of("redis-cluster://127.0.0.1:" + a.port(), RedisDriverTest.SETTINGS)) {
                LoopClient<RedisCommand<?>> client = driver.openOn(group.loops().get(0));
                Outcomes out = sendAll(client, driver, List.of(U.get("k")));
                ShardException f = out.failure(0);
                assertNotNull(f);
                assertEquals(ShardException.Kind.SHARD_ERROR, f.kind());
                assertTrue(f.getMessage().contains("redirected " + RedisClusterLoopClient.MAX_REDIRECTS + " times"),
                        f.getMessage());
                assertEquals(RedisClusterLoopClient.MAX_REDIRECTS + 1, a.commands.get() + b.commands.get(),
                        "the first send and one per redirect");
            }
        }
    }

    /** A node's id ({@code CLUSTER MYID}). */
    private static String nodeId(InetSocketAddress a) throws Exception {
        return String.valueOf(RedisClusterTopology.command(a, Duration.ofSeconds(5), "CLUSTER", "MYID"));
    }

    /**
     * Steady load on one loop: every millisecond 10 GETs of keys {@code key(i)}, each answer compared
     * with {@code value(i)}. Counts right and wrong answers, and keeps each failure's kind and message.
     */
    static final class Load implements ReplyListener {
        final EventLoop loop;
        final RedisDriver driver;
        final LoopClient<RedisCommand<?>> client;
        final java.util.function.IntFunction<String> key;
        final java.util.function.IntFunction<String> value;
        final AtomicLong ok = new AtomicLong();
        final AtomicLong wrong = new AtomicLong();
        final List<String> failures = new CopyOnWriteArrayList<>();
        final Map<Integer, Long> okAt = new ConcurrentHashMap<>();
        private final Map<Integer, Integer> keyOf = new HashMap<>();
        private int next;
        private volatile boolean stopped;
        private io.netty.util.concurrent.ScheduledFuture<?> task;

        Load(EventLoop loop, RedisDriver driver, java.util.function.IntFunction<String> key,
                java.util.function.IntFunction<String> value) {
            this.loop = loop;
            this.driver = driver;
            this.client = driver.openOn(loop);
            this.key = key;
            this.value = value;
        }

        void start() {
            task = loop.scheduleAtFixedRate(() -> {
                for (int j = 0; j < 10 && !stopped; j++) {
                    int i = next++ % KEYS;
                    int tag = next;
                    keyOf.put(tag, i);
                    RedisCommand<String> get = U.get(key.apply(i));
                    client.send(driver.shardFor(get), get, this, tag);
                }
            }, 0, 1, TimeUnit.MILLISECONDS);
        }

        @Override
        public void onReply(int tag, Object reply) {
            int i = keyOf.remove(tag);
            if (value.apply(i).equals(reply)) {
                ok.incrementAndGet();
                okAt.merge(U.get(key.apply(i)).slot(), System.nanoTime(), Math::max);
            } else {
                wrong.incrementAndGet();
                failures.add("WRONG " + key.apply(i) + ": " + reply);
            }
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            keyOf.remove(tag);
            failures.add(cause.kind() + " " + cause.getMessage());
        }

        /** Answers on slots 0..5460 (master 0's) after {@code nanos}. */
        long okOnDeadSlotsAfter(long nanos) {
            return okAt.entrySet().stream().filter(e -> e.getKey() <= 5460 && e.getValue() - nanos > 0).count();
        }

        void stop() throws InterruptedException {
            stopped = true;
            loop.submit(() -> task.cancel(false)).syncUninterruptibly();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < until) { // every call gets its outcome
                int left = loop.submit(keyOf::size).syncUninterruptibly().getNow();
                if (left == 0) {
                    return;
                }
                Thread.sleep(10);
            }
            throw new AssertionError("calls without an outcome 30 s after the load stopped");
        }
    }

    /**
     * A fake cluster node: answers {@code CLUSTER SHARDS} as the owner of every slot and every other
     * command with {@code MOVED} to another port.
     */
    static final class FakeNode implements AutoCloseable {
        final ServerSocket server;
        final AtomicLong commands = new AtomicLong();
        volatile int redirectTo;
        private final Thread acceptor;

        FakeNode() throws Exception {
            server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
            acceptor = new Thread(this::accept, "fake-node-" + server.getLocalPort());
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    Thread t = new Thread(() -> serve(s));
                    t.setDaemon(true);
                    t.start();
                } catch (Exception e) {
                    return;
                }
            }
        }

        private void serve(Socket s) {
            try (s) {
                java.io.InputStream in = new java.io.BufferedInputStream(s.getInputStream());
                java.io.OutputStream out = s.getOutputStream();
                while (true) {
                    Object cmd = RedisClusterTopology.readResp(in, 0);
                    List<?> args = (List<?>) cmd;
                    String reply;
                    if (args.size() == 2 && "CLUSTER".equals(args.get(0)) && "SHARDS".equals(args.get(1))) {
                        reply = "*1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*6\r\n"
                                + "$2\r\nid\r\n$4\r\nfake\r\n$4\r\nport\r\n:" + port() + "\r\n$4\r\nrole\r\n$6\r\nmaster\r\n";
                    } else {
                        commands.incrementAndGet();
                        reply = "-MOVED 1234 127.0.0.1:" + redirectTo + "\r\n";
                    }
                    out.write(reply.getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            } catch (Exception e) {
                // connection closed
            }
        }

        @Override
        public void close() throws Exception {
            server.close();
        }
    }

    @Test
    void slotOfAKeyIsComputedOnceAndMatchesLettuce() {
        for (String k : List.of("user:1", "{a}b", "x{}y", "é-key")) {
            assertEquals(io.lettuce.core.cluster.SlotHash.getSlot(k.getBytes(StandardCharsets.UTF_8)), U.get(k).slot(), k);
            assertEquals(io.lettuce.core.cluster.SlotHash.getSlot(k.getBytes(StandardCharsets.UTF_8)),
                    U.hgetall(k).slot(), k);
            assertEquals(io.lettuce.core.cluster.SlotHash.getSlot(k.getBytes(StandardCharsets.UTF_8)),
                    U.set(k, "v").slot(), k + " (a command whose key is encoded per send)");
        }
        assertEquals(RedisCommand.NO_KEY, U.raw(io.lettuce.core.protocol.CommandType.PING,
                io.lettuce.core.output.StatusOutput::new, a -> { }).slot());
        assertNotEquals(U.get("a").slot(), U.get("b").slot());
    }
}
