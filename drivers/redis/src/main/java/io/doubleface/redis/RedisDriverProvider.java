package io.doubleface.redis;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDriverProvider;
import java.util.List;

/**
 * The {@code redis://} and {@code redis-cluster://} schemes: {@link RedisDriver} over
 * {@code redis-server} shards ({@code doubleface leaf redis}) or a Redis Cluster's masters.
 */
public final class RedisDriverProvider implements ShardDriverProvider {

    /** Instantiated by {@link java.util.ServiceLoader}. */
    public RedisDriverProvider() {}

    @Override
    public List<String> schemes() {
        return List.of("redis", RedisDriver.TLS_SCHEME, RedisDriver.CLUSTER_SCHEME);
    }

    @Override
    public String usage() {
        return "redis://HOST:FIRST-LAST or redis://HOST:PORT,HOST:PORT,... or redis-cluster://HOST:PORT"
                + "  [?connection=per-loop|shared]   (doubleface leaf redis); rediss://… for TLS"
                + " [&cacert=PEM&verify=full|ca|none]";
    }

    @Override
    public ShardDriver<?> open(String uri, DriverSettings settings) {
        return RedisDriver.of(uri, settings);
    }
}
