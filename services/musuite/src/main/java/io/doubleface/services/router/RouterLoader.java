package io.doubleface.services.router;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardException;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Fills Redis servers used as Router replicas ({@link RouterService#installOnRedis}) with the keys of
 * {@link RouterData}, as {@link RouterLeaf} preloads a gRPC leaf: every replica of a group holds the
 * group's keys. Keys already on the servers are kept (a preloaded key is overwritten with its value).
 */
public final class RouterLoader {

    /** Key-value pairs per {@code MSET}: {@value}. */
    static final int PAIRS_PER_MSET = 256;
    /** Longest the whole load may take: {@value} s. */
    static final long TIMEOUT_SECONDS = 60;

    private static final Redis<String, String> REDIS = Redis.utf8();

    private RouterLoader() {}

    /**
     * Loads {@code data} into the Redis servers of {@code redisUri}, laid out as {@code layout}
     * ({@code layout.leaves()} servers, replica {@code r} of group {@code g} is server {@code g × replicas + r}).
     *
     * @param redisUri the servers, e.g. {@code redis://127.0.0.1:7701-7712}
     * @param data the keys and values
     * @param layout the groups and replicas
     * @throws IllegalArgumentException if the URI is malformed or names another number of servers than
     *     {@code layout.leaves()}
     * @throws IllegalStateException if a server cannot be reached or refuses a write (naming it)
     */
    public static void load(String redisUri, RouterData data, RouterKeys layout) {
        DriverSettings settings = DriverSettings.DEFAULT.withConnectTimeout(Duration.ofSeconds(5))
                .withCallTimeout(Duration.ofSeconds(TIMEOUT_SECONDS));
        try (RedisDriver redis = RedisDriver.of(redisUri, settings)) {
            if (redis.shardCount() != layout.leaves()) {
                throw new IllegalArgumentException("redis: " + redisUri + " names " + redis.shardCount()
                        + " servers, the layout has " + layout.leaves() + " (groups × replicas)");
            }
            List<List<String>> byGroup = new ArrayList<>();
            for (int g = 0; g < layout.groups(); g++) {
                byGroup.add(new ArrayList<>());
            }
            for (int n = 0; n < data.keys(); n++) {
                String key = RouterData.key(n);
                List<String> pairs = byGroup.get(layout.group(key));
                pairs.add(key);
                pairs.add(data.value(n));
            }
            List<Integer> to = new ArrayList<>();
            List<RedisCommand<?>> commands = new ArrayList<>();
            for (int g = 0; g < layout.groups(); g++) {
                List<String> pairs = byGroup.get(g);
                for (int from = 0; from < pairs.size(); from += 2 * PAIRS_PER_MSET) {
                    List<String> chunk = pairs.subList(from, Math.min(pairs.size(), from + 2 * PAIRS_PER_MSET));
                    RedisCommand<String> mset = REDIS.raw(CommandType.MSET, StatusOutput::new, a -> {
                        for (int i = 0; i < chunk.size(); i += 2) {
                            a.addKey(chunk.get(i)).addValue(chunk.get(i + 1));
                        }
                    });
                    for (int r = 0; r < layout.replicas(); r++) {
                        to.add(layout.leaf(g, r));
                        commands.add(mset);
                    }
                }
            }
            run(redis, to, commands);
        }
    }

    private static void run(RedisDriver redis, List<Integer> to, List<RedisCommand<?>> commands) {
        if (commands.isEmpty()) {
            return;
        }
        int[] shards = to.stream().mapToInt(Integer::intValue).toArray();
        ShardException[] failed = new ShardException[1];
        int[] failedShard = new int[1];
        try (BlockingClient<RedisCommand<?>> client = redis.openBlocking()) {
            client.callAll(shards, commands, TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS), new BlockingClient.Sink() {
                @Override
                public void onReply(int index, Object reply) {}

                @Override
                public void onFailure(int index, ShardException cause) {
                    if (failed[0] == null) {
                        failed[0] = cause;
                        failedShard[0] = shards[index];
                    }
                }
            });
        }
        if (failed[0] != null) {
            throw new IllegalStateException("loading the Router keys failed on redis server " + failedShard[0] + ": "
                    + failed[0].getMessage(), failed[0]);
        }
    }
}
