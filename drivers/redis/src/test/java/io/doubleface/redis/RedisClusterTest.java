package io.doubleface.redis;

import io.doubleface.testing.Outcomes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.ShardRequest;
import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ShardDriver;
import io.doubleface.driver.ShardDrivers;
import io.doubleface.loop.LoopGroup;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code redis-cluster://} over a real 3-master Redis Cluster of redis-server processes. */
class RedisClusterTest {

    @Test
    void eachMasterIsAShardAndServesTheDatasetUnderItsHashTag() throws Exception {
        try (RedisServers nodes = RedisServers.startCluster(3, 0, "127.0.0.1");
                LoopGroup group = new LoopGroup("rcluster", 1, LoopGroup.Transport.AUTO)) {
            assertTrue(nodes.uri().startsWith("redis-cluster://"), nodes.uri());
            nodes.load(RedisDriverTest.RECORDS);
            try (ShardDriver driver = ShardDrivers.open(nodes.uri(), RedisDriverTest.SETTINGS)) {
                assertEquals(3, driver.shardCount());
                RedisDriver rd = (RedisDriver) driver;
                assertEquals(nodes.addresses(), rd.shards(), "shard i = the master serving the i-th slot range");

                // the keys of shard i really live on node i (a wrong node would answer MOVED)
                RedisClient raw = RedisClient.create();
                try {
                    for (int i = 0; i < 3; i++) {
                        InetSocketAddress a = rd.shards().get(i);
                        try (StatefulRedisConnection<byte[], byte[]> c = raw.connect(io.lettuce.core.codec.ByteArrayCodec.INSTANCE,
                                RedisURI.create(a.getHostString(), a.getPort()))) {
                            byte[] key = rd.layout(i).hashKey(5);
                            assertEquals(1L, c.sync().exists(key), "shard " + i + " holds " + new String(key));
                            int slot = SlotHash.getSlot(key);
                            assertTrue(slot >= 16384 * i / 3 && slot < 16384 * (i + 1) / 3, "slot " + slot);
                        }
                    }
                } finally {
                    raw.shutdown();
                }

                EventLoop loop = group.loops().get(0);
                LoopClient client = driver.openOn(loop);
                int n = RedisDriverTest.REQUESTS.size() * 3;
                Outcomes out = new Outcomes(loop, n);
                loop.submit(() -> {
                    for (int i = 0; i < n; i++) {
                        client.send(i % 3, RedisDriverTest.REQUESTS.get(i / 3), out, i);
                    }
                }).syncUninterruptibly();
                out.await();
                for (int i = 0; i < n; i++) {
                    assertArrayEquals(RedisDriverTest.expected(RedisDriverTest.REQUESTS.get(i / 3)), out.reply(i));
                }
                BlockingClient blocking = driver.openBlocking();
                for (ShardRequest r : List.of(ShardRequest.readRecord(9), ShardRequest.scan(90, 20))) {
                    for (int s = 0; s < 3; s++) {
                        ByteBuf b = (ByteBuf) blocking.call(s, r, TimeUnit.SECONDS.toNanos(20));
                        try {
                            assertArrayEquals(RedisDriverTest.expected(r), ByteBufUtil.getBytes(b));
                        } finally {
                            b.release();
                        }
                    }
                }
            }
        }
    }
}
