package io.doubleface.redis;

import io.doubleface.data.Records;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardAddresses;
import io.doubleface.driver.ShardDriver;
import io.doubleface.driver.ShardDriverProvider;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * The {@code redis://} and {@code redis-cluster://} schemes: {@link RedisDriver} over
 * {@code redis-server} shards ({@code doubleface leaf redis}) or a Redis Cluster's masters.
 */
public final class RedisDriverProvider implements ShardDriverProvider {

    /** Records per pipelined batch of {@link #loadData} (per shard): {@value}. */
    static final int LOAD_BATCH = 256;

    /** Longest one batch of {@link #loadData} may take: {@value} s. */
    static final long LOAD_BATCH_TIMEOUT_SECONDS = 30;

    /** Instantiated by {@link java.util.ServiceLoader}. */
    public RedisDriverProvider() {}

    @Override
    public List<String> schemes() {
        return List.of("redis", RedisClusterShards.SCHEME);
    }

    @Override
    public String usage() {
        return "redis://HOST:FIRST-LAST or redis://HOST:PORT,HOST:PORT,... or redis-cluster://HOST:PORT"
                + "  [?connection=per-loop|shared]   (doubleface leaf redis; doubleface load-data)";
    }

    @Override
    public ShardDriver<?> open(String uri, DriverSettings settings) {
        return RedisDriver.open(uri, settings);
    }

    /**
     * Writes records {@code 0..records-1} into every shard ({@link RedisLayout}: the hash
     * {@code user:k} and the string {@code rec:k}), pipelined: {@value #LOAD_BATCH} records per
     * shard per round, every shard in parallel, one flush per connection per round.
     */
    @Override
    public void loadData(String uri, long records, LongConsumer progress) {
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        String base = uri.indexOf('?') < 0 ? uri : uri.substring(0, uri.indexOf('?'));
        List<InetSocketAddress> shards;
        List<RedisLayout> layouts = new ArrayList<>();
        if (base.startsWith(RedisClusterShards.SCHEME + "://")) {
            RedisClusterShards cs = RedisClusterShards.discover(ShardAddresses.parse(RedisClusterShards.SCHEME, base),
                    Duration.ofSeconds(1));
            shards = cs.masters();
            layouts.addAll(cs.layouts());
        } else {
            shards = ShardAddresses.parse("redis", base);
            shards.forEach(s -> layouts.add(RedisLayout.STANDALONE));
        }
        load(shards, layouts, records, progress);
    }

    /** Loads {@code records} records into each of {@code shards} with the given layouts. */
    static void load(List<InetSocketAddress> shards, List<RedisLayout> layouts, long records, LongConsumer progress) {
        RedisClient client = RedisClient.create();
        List<StatefulRedisConnection<byte[], byte[]>> conns = new ArrayList<>();
        try {
            for (InetSocketAddress a : shards) {
                RedisURI u = RedisURI.builder().withHost(a.getHostString()).withPort(a.getPort())
                        .withTimeout(Duration.ofSeconds(LOAD_BATCH_TIMEOUT_SECONDS)).build();
                StatefulRedisConnection<byte[], byte[]> c;
                try {
                    c = client.connect(ByteArrayCodec.INSTANCE, u);
                } catch (RuntimeException e) {
                    throw new IllegalStateException("redis shard " + a.getHostString() + ":" + a.getPort()
                            + " cannot be reached: " + e.getMessage(), e);
                }
                c.setAutoFlushCommands(false);
                conns.add(c);
            }
            long lastReport = System.nanoTime();
            for (long from = 0; from < records; from += LOAD_BATCH) {
                long to = Math.min(records, from + LOAD_BATCH);
                List<RedisFuture<?>> futures = new ArrayList<>();
                for (int s = 0; s < conns.size(); s++) {
                    RedisAsyncCommands<byte[], byte[]> cmds = conns.get(s).async();
                    RedisLayout layout = layouts.get(s);
                    for (long k = from; k < to; k++) {
                        Map<byte[], byte[]> fields = new LinkedHashMap<>();
                        for (int f = 0; f < Records.FIELD_COUNT; f++) {
                            fields.put(RedisLayout.fieldName(f), Records.value(k, f));
                        }
                        futures.add(cmds.hset(layout.hashKey(k), fields));
                        futures.add(cmds.set(layout.recordKey(k), RedisLayout.recordBytes(k)));
                    }
                    conns.get(s).flushCommands();
                }
                if (!LettuceFutures.awaitAll(LOAD_BATCH_TIMEOUT_SECONDS, TimeUnit.SECONDS,
                        futures.toArray(new RedisFuture<?>[0]))) {
                    throw new IllegalStateException("redis load: a batch took longer than " + LOAD_BATCH_TIMEOUT_SECONDS
                            + " s");
                }
                for (RedisFuture<?> f : futures) {
                    if (f.getError() != null) {
                        throw new IllegalStateException("redis load: a shard refused a write: " + f.getError());
                    }
                }
                long now = System.nanoTime();
                if (to == records || now - lastReport > TimeUnit.MILLISECONDS.toNanos(250)) {
                    lastReport = now;
                    progress.accept(to * conns.size());
                }
            }
        } catch (io.lettuce.core.RedisException e) {
            throw new IllegalStateException("redis load failed: " + e.getMessage(), e);
        } finally {
            for (StatefulRedisConnection<byte[], byte[]> c : conns) {
                c.close();
            }
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
