package io.doubleface.services.social;

import io.doubleface.api.ShardRouting;
import io.doubleface.services.musuite.SplitMix64;

/**
 * Where the social network's data lives, shared by the service, the loader and the reference.
 *
 * <pre>
 *   Redis shard jump(user)            timeline:U   sorted set: post id (decimal) scored by its time in ms
 *                                     followers:U  set: the ids (decimal) of the users following U
 *   MongoDB shard jump(mix64(id))     social.posts {_id: id, author, ts, text}
 * </pre>
 *
 * {@code jump} is {@link ShardRouting#jump} (Jump consistent hash); {@code mix64} the SplitMix64
 * finaliser ({@link SplitMix64#mix}), which spreads a server's ids (whose low bits are all the
 * same) over the MongoDB shards. Stateless.
 */
public final class SocialLayout {

    /** MongoDB database of the posts, whatever the shard list's connection strings say: {@value}. */
    public static final String DATABASE = "social";
    /** MongoDB collection of the posts: {@value}. */
    public static final String POSTS = "posts";

    private SocialLayout() {}

    /**
     * {@return the key of {@code user}'s home timeline}
     *
     * @param user a user
     */
    public static String timelineKey(int user) {
        return "timeline:" + user;
    }

    /**
     * {@return the key of {@code user}'s follower set}
     *
     * @param user a user
     */
    public static String followersKey(int user) {
        return "followers:" + user;
    }

    /**
     * {@return the Redis shard of {@code user}'s keys}
     *
     * @param user a user
     * @param shards the number of Redis shards
     */
    public static int redisShard(int user, int shards) {
        return ShardRouting.jump(user, shards);
    }

    /**
     * {@return the MongoDB shard of post {@code id}}
     *
     * @param id a post id
     * @param shards the number of MongoDB shards
     */
    public static int mongoShard(long id, int shards) {
        return ShardRouting.jump(SplitMix64.mix(id), shards);
    }
}
