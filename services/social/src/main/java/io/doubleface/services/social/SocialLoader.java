package io.doubleface.services.social;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardException;
import io.doubleface.mongo.Mongo;
import io.doubleface.mongo.MongoCommand;
import io.doubleface.mongo.MongoDriver;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.RawBsonDocument;

/**
 * Loads a {@link SocialData} into running Redis and MongoDB shards, as {@link SocialLayout} places
 * it, through the drivers' blocking clients: per user, {@code timeline:U} (every post of the users
 * U follows, scored by time) and {@code followers:U}; per MongoDB shard, its posts. Loading replaces
 * what was there: the keys are deleted and written again, the collection emptied first, so posts
 * composed since the last load are gone. Redis commands go {@value #REDIS_BATCH} at a time with
 * every shard's written before any reply is awaited; MongoDB posts {@value #MONGO_BATCH} per
 * {@code update} command (upserts).
 *
 * <p>Stateless; one load at a time per set of shards.
 */
public final class SocialLoader {

    /** Redis commands per {@code callAll}: {@value}. */
    static final int REDIS_BATCH = 256;
    /** Posts per MongoDB {@code update} command: {@value}. */
    static final int MONGO_BATCH = 500;
    /** Longest one batch may take: {@value} s. */
    static final long BATCH_TIMEOUT_SECONDS = 60;

    private static final Redis<String, String> REDIS = Redis.utf8();

    private SocialLoader() {}

    /**
     * Loads {@code data} into the shards of two URIs.
     *
     * @param redisUri the Redis shards ({@code redis://})
     * @param mongoUri the MongoDB shards ({@code mongodb://})
     * @param data the data set
     * @throws IllegalArgumentException if a URI is malformed
     * @throws IllegalStateException if a shard cannot be reached or refuses a write (naming it)
     */
    public static void load(String redisUri, String mongoUri, SocialData data) {
        DriverSettings settings = DriverSettings.DEFAULT.withConnectTimeout(Duration.ofSeconds(5))
                .withCallTimeout(Duration.ofSeconds(BATCH_TIMEOUT_SECONDS));
        try (RedisDriver redis = RedisDriver.of(redisUri, settings)) {
            loadRedis(redis, data);
        }
        try (MongoDriver mongo = MongoDriver.of(mongoUri, MongoDriver.Options.DEFAULT.with(settings))) {
            loadMongo(mongo, data);
        }
    }

    private static void loadRedis(RedisDriver driver, SocialData data) {
        int shards = driver.shardCount();
        List<Integer> to = new ArrayList<>();
        List<RedisCommand<?>> commands = new ArrayList<>();
        try (BlockingClient<RedisCommand<?>> client = driver.openBlocking()) {
            for (int u = 0; u < data.users(); u++) {
                int shard = SocialLayout.redisShard(u, shards);
                String timeline = SocialLayout.timelineKey(u);
                String followers = SocialLayout.followersKey(u);
                add(to, commands, shard, REDIS.del(timeline, followers));
                List<Post> posts = new ArrayList<>();
                for (int v : data.followees(u)) {
                    posts.addAll(List.of(data.postsBy(v)));
                }
                if (!posts.isEmpty()) {
                    add(to, commands, shard, REDIS.raw(CommandType.ZADD, IntegerOutput::new, a -> {
                        a.addKey(timeline);
                        for (Post p : posts) {
                            a.add(p.ts()).addValue(Long.toString(p.id()));
                        }
                    }));
                }
                int[] f = data.followers(u);
                if (f.length > 0) {
                    String[] members = new String[f.length];
                    for (int i = 0; i < f.length; i++) {
                        members[i] = Integer.toString(f[i]);
                    }
                    add(to, commands, shard, REDIS.sadd(followers, members));
                }
                if (commands.size() >= REDIS_BATCH) {
                    flush(client, to, commands);
                }
            }
            flush(client, to, commands);
        }
    }

    private static void add(List<Integer> to, List<RedisCommand<?>> commands, int shard, RedisCommand<?> c) {
        to.add(shard);
        commands.add(c);
    }

    private static void flush(BlockingClient<RedisCommand<?>> client, List<Integer> to, List<RedisCommand<?>> commands) {
        if (commands.isEmpty()) {
            return;
        }
        int[] shards = to.stream().mapToInt(Integer::intValue).toArray();
        ShardException[] failed = new ShardException[1];
        client.callAll(shards, commands, TimeUnit.SECONDS.toNanos(BATCH_TIMEOUT_SECONDS), new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object reply) {}

            @Override
            public void onFailure(int index, ShardException cause) {
                if (failed[0] == null) {
                    failed[0] = cause;
                }
            }
        });
        if (failed[0] != null) {
            throw new IllegalStateException("loading the social data failed: redis " + failed[0].getMessage(), failed[0]);
        }
        to.clear();
        commands.clear();
    }

    private static void loadMongo(MongoDriver driver, SocialData data) {
        int shards = driver.shardCount();
        List<List<Post>> byShard = new ArrayList<>();
        for (int s = 0; s < shards; s++) {
            byShard.add(new ArrayList<>());
        }
        for (int p = 0; p < data.posts(); p++) {
            Post post = data.post(p);
            byShard.get(SocialLayout.mongoShard(post.id(), shards)).add(post);
        }
        long timeout = TimeUnit.SECONDS.toNanos(BATCH_TIMEOUT_SECONDS);
        try (BlockingClient<MongoCommand<?>> client = driver.openBlocking()) {
            for (int s = 0; s < shards; s++) {
                try {
                    client.call(s, Mongo.deleteMany(SocialLayout.POSTS, new BsonDocument()).inDatabase(SocialLayout.DATABASE),
                            timeout);
                    List<Post> posts = byShard.get(s);
                    for (int from = 0; from < posts.size(); from += MONGO_BATCH) {
                        BsonArray updates = new BsonArray();
                        for (Post p : posts.subList(from, Math.min(posts.size(), from + MONGO_BATCH))) {
                            updates.add(new BsonDocument("q", new BsonDocument("_id", new BsonInt64(p.id())))
                                    .append("u", p.toBson()).append("upsert", BsonBoolean.TRUE));
                        }
                        RawBsonDocument reply = (RawBsonDocument) client.call(s, Mongo.runCommand(
                                new BsonDocument("update", new BsonString(SocialLayout.POSTS)).append("updates", updates)
                                        .append("ordered", BsonBoolean.FALSE)).inDatabase(SocialLayout.DATABASE), timeout);
                        if (reply.containsKey("writeErrors")) {
                            throw new IllegalStateException("loading the social data failed: mongo shard " + s
                                    + " refused writes: " + reply.get("writeErrors"));
                        }
                    }
                } catch (ShardException e) {
                    throw new IllegalStateException("loading the social data failed: mongo shard " + s + " ("
                            + driver.shard(s).getHosts() + "): " + e.getMessage(), e);
                }
            }
        }
    }
}
