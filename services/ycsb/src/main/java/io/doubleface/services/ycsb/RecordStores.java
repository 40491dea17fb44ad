package io.doubleface.services.ycsb;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.kv.KvDriver;
import io.doubleface.mongo.MongoDriver;
import io.doubleface.redis.RedisDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

/** Opening a {@link RecordStore} from a shard URI, and loading the records into a store. */
public final class RecordStores {

    private RecordStores() {}

    /**
     * Opens the store of {@code uri}: {@code kv://}, {@code redis://}, {@code redis-cluster://},
     * {@code mongodb://}, {@code mongodb+loop://} or {@code grpc://} (the drivers' URI forms,
     * {@link ShardDrivers#usages()}).
     *
     * @param uri the shards
     * @param settings the driver settings
     * @param records records per shard: SCANs wrap at it
     * @return the store; its driver is open and the caller (or the server) closes it
     * @throws IllegalArgumentException if the URI is malformed or no store speaks its scheme
     */
    public static RecordStore<?> open(String uri, DriverSettings settings, long records) {
        uri = loopAlias(uri);
        if (uri.startsWith(OpMsgDriver.SCHEME + "://")) {
            return new KvRecords(new OpMsgDriver(uri, settings, records));
        }
        ShardDriver<?> d = ShardDrivers.open(uri, settings);
        try {
            return switch (d) {
                case KvDriver kv -> new KvRecords(kv);
                case RedisDriver redis -> new RedisRecords(redis, records);
                case GrpcDriver grpc -> new GrpcRecords(grpc);
                case MongoDriver mongo -> new MongoRecords(mongo, records);
                default -> throw new IllegalArgumentException("shard URI '" + uri + "': no YCSB record store for "
                        + d.getClass().getSimpleName() + " (known: kv, redis, redis-cluster, mongodb, mongodb+loop, grpc)");
            };
        } catch (RuntimeException e) {
            d.close();
            throw e;
        }
    }

    /**
     * {@code mongodb://HOSTS?transport=loop} (the form the experiment runner's
     * {@code CONFIG@transport=loop} gives) as {@code mongodb+loop://HOSTS}; any other URI as it is.
     *
     * @throws IllegalArgumentException if {@code transport=loop} comes with other options
     */
    static String loopAlias(String uri) {
        int q = uri.indexOf('?');
        if (!uri.startsWith("mongodb://") || q < 0) {
            return uri;
        }
        List<String> kept = new ArrayList<>();
        boolean loop = false;
        for (String kv : uri.substring(q + 1).split("&")) {
            if (kv.equals("transport=loop") || kv.equals("df.transport=loop")) {
                loop = true;
            } else if (!kv.isEmpty()) {
                kept.add(kv);
            }
        }
        if (!loop) {
            return uri;
        }
        if (!kept.isEmpty()) {
            throw new IllegalArgumentException("shard URI '" + uri + "': transport=loop (our OP_MSG client, "
                    + OpMsgDriver.SCHEME + "://) takes no other options, got " + kept);
        }
        return OpMsgDriver.SCHEME + uri.substring("mongodb".length(), q);
    }

    /**
     * Writes records {@code 0..records-1} into every shard of {@code uri}, so queries read
     * byte-identical records from this store as from any other.
     *
     * @param uri the shards ({@code redis://}, {@code redis-cluster://}, {@code mongodb://})
     * @param records records per shard, {@code > 0}
     * @param progress receives the records written so far over all shards, a few times a second
     * @throws UnsupportedOperationException for KV and gRPC leaves, which generate their records
     *     themselves ({@code doubleface leaf kv|grpc --records N})
     * @throws IllegalArgumentException if the URI is malformed
     * @throws IllegalStateException if a shard cannot be reached or refuses the writes
     */
    public static void load(String uri, long records, LongConsumer progress) {
        uri = loopAlias(uri);
        String scheme = uri.indexOf("://") < 0 ? uri : uri.substring(0, uri.indexOf("://"));
        switch (scheme) {
            case "redis", "redis-cluster" -> RedisRecords.load(uri, records, progress);
            case "mongodb" -> MongoRecords.load(uri, records, progress);
            case OpMsgDriver.SCHEME -> MongoRecords.load("mongodb" + uri.substring(OpMsgDriver.SCHEME.length()), records,
                    progress);
            case "kv", "grpc" -> throw new UnsupportedOperationException(scheme + " leaves generate their records "
                    + "themselves: start them with 'doubleface leaf " + scheme + " --records " + records + "'");
            default -> throw new IllegalArgumentException("shard URI '" + uri + "': unknown scheme '" + scheme
                    + "' (known: kv, redis, redis-cluster, mongodb, mongodb+loop, grpc)");
        }
    }
}
