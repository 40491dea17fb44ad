package io.doubleface.driver;

import java.util.List;
import java.util.function.LongConsumer;

/**
 * A store a server can fan out to, found by {@link ShardDrivers} through {@link java.util.ServiceLoader}
 * (register the implementation in {@code META-INF/services/io.doubleface.driver.ShardDriverProvider}).
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

    /**
     * Writes the deterministic dataset ({@link io.doubleface.data.Records}, keys
     * {@code 0..records-1}) into every shard of {@code uri}, so queries read byte-identical records
     * from this store as from any other.
     *
     * @param uri a shard URI with one of {@link #schemes()}
     * @param records records per shard to write, {@code > 0} (the same as {@link DriverSettings#records()}
     *     of the drivers that will read them)
     * @param progress receives the number of records written so far over all shards (called from
     *     the loading thread, at most a few times per second)
     * @throws UnsupportedOperationException if this store generates its records itself
     * @throws IllegalStateException if a shard cannot be reached or refuses the writes
     */
    void loadData(String uri, long records, LongConsumer progress);
}
