package io.doubleface.redis;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import java.net.InetSocketAddress;
import java.util.List;

/** The driver contract over real {@code redis-server} shards with the native client ({@code connection=native}). */
class RedisNativeDriverContractTest extends RedisDriverContractTest {

    @Override
    protected ShardDriver<RedisCommand<?>> open(List<InetSocketAddress> shards, DriverSettings settings) {
        return new RedisDriver(shards, settings, RedisDriver.ConnectionMode.NATIVE, null, null, null,
                RedisDriver.ReadFrom.MASTER, null);
    }
}
