package io.doubleface.driver.spi;

import io.doubleface.driver.DriverSettings;
import java.util.List;

/**
 * A store a server can fan out to, found by {@link ShardDrivers} through {@link java.util.ServiceLoader}
 * (register the implementation in {@code META-INF/services/io.doubleface.driver.spi.ShardDriverProvider}).
 * One provider per store; it owns the URI schemes it lists.
 */
public interface ShardDriverProvider {

    /** {@return the URI schemes this provider opens, without {@code ://}, e.g. {@code ["redis", "redis-cluster"]}} */
    List<String> schemes();

    /** {@return one line for {@code --help} texts: the URI forms accepted, e.g. {@code redis://host:first-last}} */
    String usage();

    /**
     * Opens a driver of the shards in {@code uri}.
     *
     * @param uri a shard URI with one of {@link #schemes()}
     * @param settings the store-neutral settings the driver honours
     * @return the open driver; the caller closes it
     * @throws IllegalArgumentException if {@code uri} is malformed (the message says how)
     */
    ShardDriver<?> open(String uri, DriverSettings settings);
}
