package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.testing.DriverContract;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The driver contract ({@link DriverContract}) over real {@code redis-server} shards. */
class RedisDriverContractTest extends DriverContract<RedisCommand<?>> {

    static RedisServers servers;

    @BeforeAll
    static void start() {
        servers = RedisServers.start(2, 0);
        TestData.load(servers);
    }

    @AfterAll
    static void stop() {
        servers.close();
    }

    @Override
    protected List<InetSocketAddress> shards() {
        return servers.addresses();
    }

    @Override
    protected ShardDriver<RedisCommand<?>> open(List<InetSocketAddress> shards, DriverSettings settings) {
        return RedisDriver.of(shards, settings);
    }

    @Override
    protected RedisCommand<?> command(int shard, int i) {
        return TestData.B.get(TestData.key("", i % TestData.KEYS));
    }

    @Override
    protected void assertReply(int shard, int i, Object reply) {
        assertArrayEquals(TestData.value(shard, i % TestData.KEYS), (byte[]) reply, "GET k:" + i % TestData.KEYS);
    }
}
