package io.doubleface.redis;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.Outcomes;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Standalone Redis shards as replica groups, {@code redis://master|replica,master|replica}: real
 * {@code redis-server} processes, each second one a replica ({@code REPLICAOF}) of the one before.
 * Writes must reach the master (a replica answers them with {@code READONLY}), reads are spread over
 * both members, and a dead replica costs no failed read (the read is sent again to the master).
 */
class RedisReplicaGroupsTest {

    static final Redis<String, String> U = Redis.utf8();
    static final int KEYS = 400;

    private RedisServers servers;

    @BeforeEach
    void start() throws Exception {
        servers = RedisServers.start(4, 0, "127.0.0.1");
        List<InetSocketAddress> a = servers.addresses();
        for (int m = 0; m < 4; m += 2) {
            assertEquals("OK", RedisClusterTopology.command(a.get(m + 1), Duration.ofSeconds(5), "REPLICAOF",
                    a.get(m).getHostString(), String.valueOf(a.get(m).getPort())));
        }
    }

    @AfterEach
    void stop() {
        if (servers != null) {
            servers.close();
        }
    }

    private String uri(String options) {
        List<InetSocketAddress> a = servers.addresses();
        return "redis://" + hp(a.get(0)) + "|" + hp(a.get(1)) + "," + hp(a.get(2)) + "|" + hp(a.get(3)) + options;
    }

    private static String hp(InetSocketAddress a) {
        return a.getHostString() + ":" + a.getPort();
    }

    private static String value(int i) {
        return "v" + i + "-" + "y".repeat(i % 40);
    }

    static Outcomes sendAll(LoopClient<RedisCommand<?>> client, List<RedisCommand<?>> commands, List<Integer> shards)
            throws InterruptedException {
        EventLoop loop = client.loop();
        Outcomes out = new Outcomes(loop, commands.size());
        loop.submit(() -> {
            for (int i = 0; i < commands.size(); i++) {
                client.send(shards.get(i), commands.get(i), out, i);
            }
        }).syncUninterruptibly();
        return out.await();
    }

    private void awaitReplicated() throws Exception {
        RedisClusterTest.awaitReplicated(List.of(servers.addresses().get(1), servers.addresses().get(3)));
    }

    @Test
    void writesGoToTheMasterReadsToEveryMember() throws Exception {
        try (LoopGroup group = new LoopGroup("rgroups", 1, Transport.AUTO);
                RedisDriver driver = RedisDriver.of(uri(""), RedisDriverTest.SETTINGS)) {
            assertEquals(2, driver.shardCount());
            assertEquals(List.of(servers.addresses().get(0), servers.addresses().get(2)), driver.shards(),
                    "shard i is its group's first member, the master");
            LoopClient<RedisCommand<?>> client = driver.openOn(group.loops().get(0));

            List<RedisCommand<?>> sets = new ArrayList<>();
            List<Integer> shards = new ArrayList<>();
            for (int i = 0; i < KEYS; i++) {
                sets.add(U.set("k" + i, value(i)));
                shards.add(i % 2);
            }
            Outcomes w = sendAll(client, sets, shards);
            for (int i = 0; i < KEYS; i++) {
                assertEquals("OK", w.value(i), "SET k" + i + " (a replica would answer READONLY)");
            }
            awaitReplicated();

            long[] before = new long[4];
            for (int s = 0; s < 4; s++) {
                before[s] = RedisClusterTest.calls(servers.addresses().get(s), "get");
            }
            for (int round = 0; round < 5; round++) {
                List<RedisCommand<?>> gets = new ArrayList<>();
                for (int i = 0; i < KEYS; i++) {
                    gets.add(U.get("k" + i));
                }
                Outcomes r = sendAll(client, gets, shards);
                for (int i = 0; i < KEYS; i++) {
                    assertEquals(value(i), r.value(i), "GET k" + i);
                }
            }
            long total = 0;
            for (int s = 0; s < 4; s++) {
                long served = RedisClusterTest.calls(servers.addresses().get(s), "get") - before[s];
                assertTrue(served > 0, "member " + servers.addresses().get(s) + " served no GET");
                total += served;
            }
            assertEquals(5L * KEYS, total, "every GET served once, by one member");

            Map<String, Object> topology = driver.topology();
            assertTrue(String.valueOf(topology).contains(hp(servers.addresses().get(1))), "topology: " + topology);

            // the blocking form (thread-per-request and the Type models) goes through the same groups
            try (BlockingClient<RedisCommand<?>> blocking = driver.openBlocking()) {
                assertEquals(value(7), blocking.call(1, U.get("k7"), TimeUnit.SECONDS.toNanos(5)));
                assertEquals("OK", blocking.call(0, U.set("k0", "rewritten"), TimeUnit.SECONDS.toNanos(5)));
                // the write reached the master itself
                assertEquals("rewritten", String.valueOf(RedisClusterTopology.command(servers.addresses().get(0),
                        Duration.ofSeconds(5), "GET", "k0")));
            }
        }
    }

    @Test
    void aDeadReplicaCostsNoFailedRead() throws Exception {
        try (LoopGroup group = new LoopGroup("rgroups", 1, Transport.AUTO);
                RedisDriver driver = RedisDriver.of(uri(""), RedisDriverTest.SETTINGS)) {
            LoopClient<RedisCommand<?>> client = driver.openOn(group.loops().get(0));
            List<RedisCommand<?>> sets = new ArrayList<>();
            List<Integer> zeros = new ArrayList<>();
            for (int i = 0; i < KEYS; i++) {
                sets.add(U.set("k" + i, value(i)));
                zeros.add(0);
            }
            Outcomes w = sendAll(client, sets, zeros);
            for (int i = 0; i < KEYS; i++) {
                assertEquals("OK", w.value(i));
            }
            awaitReplicated();
            servers.kill(1); // shard 0's replica

            for (int round = 0; round < 3; round++) {
                List<RedisCommand<?>> gets = new ArrayList<>();
                for (int i = 0; i < KEYS; i++) {
                    gets.add(U.get("k" + i));
                }
                Outcomes r = sendAll(client, gets, zeros);
                for (int i = 0; i < KEYS; i++) {
                    assertEquals(value(i), r.value(i), "GET k" + i + " in round " + round);
                }
            }
        }
    }

    @Test
    void groupsNeedNativeConnectionsAndOptionsNeedGroups() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of(uri("?connection=per-loop"), RedisDriverTest.SETTINGS));
        assertTrue(e.getMessage().contains("connection=native"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("redis://127.0.0.1:6379?dns-refresh=5s", RedisDriverTest.SETTINGS));
        assertTrue(e.getMessage().contains("dns-refresh is for replica groups and DNS names"), e.getMessage());
        try (RedisDriver d = RedisDriver.of(uri("?connection=native&dns-refresh=5s"), RedisDriverTest.SETTINGS)) {
            assertTrue(d.describe().contains("|"), d.describe());
        }
    }
}
