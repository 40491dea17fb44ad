package io.doubleface.redis;

import io.doubleface.testing.Outcomes;
import static io.doubleface.redis.TestData.B;
import static io.doubleface.redis.TestData.PROBES;
import static io.doubleface.redis.TestData.canon;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.doubleface.loop.LoopGroup;
import io.doubleface.redis.TestData.Probe;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.codec.ByteArrayCodec;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code redis-cluster://} over a real 3-master Redis Cluster of redis-server processes. */
class RedisClusterTest {

    @Test
    void eachMasterIsAShardAndServesTheDatasetUnderItsHashTag() throws Exception {
        try (RedisServers nodes = RedisServers.startCluster(3, 0, "127.0.0.1");
                LoopGroup group = new LoopGroup("rcluster", 1, LoopGroup.Transport.AUTO);
                RedisDriver driver = (RedisDriver) ShardDrivers.open(nodes.uri(), RedisDriverTest.SETTINGS)) {
            assertTrue(nodes.uri().startsWith("redis-cluster://"), nodes.uri());
            assertEquals(3, driver.shardCount());
            assertEquals(nodes.addresses(), driver.shards(), "shard i = the master serving the i-th slot range");
            for (int i = 0; i < 3; i++) {
                String tag = driver.keyTag(i);
                assertTrue(tag.startsWith("{") && tag.endsWith("}") && tag.length() > 2, "shard " + i + " tag " + tag);
            }
            TestData.load(driver);

            // the keys of shard i really live on node i (a wrong node would have answered MOVED to the load)
            RedisClient raw = RedisClient.create();
            try {
                for (int i = 0; i < 3; i++) {
                    InetSocketAddress a = driver.shards().get(i);
                    try (StatefulRedisConnection<byte[], byte[]> c = raw.connect(ByteArrayCodec.INSTANCE,
                            RedisURI.create(a.getHostString(), a.getPort()))) {
                        for (byte[] key : List.of(TestData.key(driver.keyTag(i), 5), TestData.rec(driver.keyTag(i), 5))) {
                            String k = new String(key, StandardCharsets.US_ASCII);
                            assertEquals(1L, c.sync().exists(key), "shard " + i + " holds " + k);
                            int slot = SlotHash.getSlot(key);
                            assertTrue(slot >= 16384 * i / 3 && slot < 16384 * (i + 1) / 3, k + ": slot " + slot);
                        }
                    }
                }
            } finally {
                raw.shutdown();
            }

            // the whole mix, MGETs of up to 10 000 tagged keys included (single-slot), through the loop client
            EventLoop loop = group.loops().get(0);
            LoopClient<RedisCommand<?>> client = driver.openOn(loop);
            int n = PROBES.size() * 3;
            Outcomes out = new Outcomes(loop, n);
            loop.submit(() -> {
                for (int i = 0; i < n; i++) {
                    client.send(i % 3, PROBES.get(i / 3).command(driver.keyTag(i % 3)), out, i);
                }
            }).syncUninterruptibly();
            out.await();
            for (int i = 0; i < n; i++) {
                Probe p = PROBES.get(i / 3);
                assertEquals(p.expected(driver.keyTag(i % 3), i % 3), TestData.canon(out.value(i)), "shard " + i % 3 + ": " + p);
            }

            // and through the blocking client: a record, and an MGET of several keys of one shard
            BlockingClient<RedisCommand<?>> blocking = driver.openBlocking();
            for (Probe p : List.of(TestData.hmget(9), TestData.mget(90, 20))) {
                for (int s = 0; s < 3; s++) {
                    String tag = driver.keyTag(s);
                    assertEquals(p.expected(tag, s), canon(blocking.call(s, p.command(tag), TimeUnit.SECONDS.toNanos(20))),
                            "shard " + s + ": " + p);
                }
            }

            // without the tag, keys of different slots make a multi-key command fail: the tag is what makes MGET work
            byte[] k1 = TestData.key("", 1);
            byte[] k2 = TestData.key("", 2);
            assertNotEquals(SlotHash.getSlot(k1), SlotHash.getSlot(k2));
            ShardException e = assertThrows(ShardException.class,
                    () -> blocking.call(0, B.mget(k1, k2), TimeUnit.SECONDS.toNanos(20)));
            assertEquals(ShardException.Kind.SHARD_ERROR, e.kind(), e.toString());
            assertTrue(e.getMessage().contains("CROSSSLOT"), e.getMessage());
        }
    }
}
