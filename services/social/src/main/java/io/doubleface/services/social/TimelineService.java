package io.doubleface.services.social;

import com.mongodb.client.model.Filters;
import io.doubleface.api.Backend;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.CallHandler;
import io.doubleface.api.CallRef;
import io.doubleface.mongo.Mongo;
import io.doubleface.mongo.MongoCommand;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.RawBsonDocument;

/**
 * read-home-timeline: the newest posts of the users a user follows, in two rounds over two backends.
 *
 * <pre>
 *   round 0  ZREVRANGE timeline:U 0 limit-1      on U's Redis shard
 *            onReply: the members parsed to post ids (newest first)
 *   round 1  find posts {_id: {$in: [ids on shard s]}}   one call per MongoDB shard holding any of them
 *            onReply: each BSON document decoded and checked, posts not asked for dropped
 *   merge    the posts in the timeline's order
 * </pre>
 *
 * <p><b>Failures.</b> Fail fast: a Redis or MongoDB shard that fails answers {@code 503 backend NAME:
 * shard N KIND: …} (gRPC {@code UNAVAILABLE}) at once, one that does not answer {@code 504} at the
 * request deadline. A post id on a timeline whose document is not found (never the case when posts
 * are written before their ids are fanned out, as compose-post does) is left out.
 *
 * <p>Thread-safe and stateless; a {@link Query} is written by merge only (rounds of one request
 * never overlap), and read by round 1's handlers after it.
 */
public final class TimelineService implements FanoutService<TimelineService.Query, Object, TimelineResult> {

    /** Posts answered unless {@code limit} says otherwise: {@value}. */
    public static final int DEFAULT_LIMIT = 10;
    /** Most posts one request may ask for: {@value}. */
    public static final int MAX_LIMIT = 100;

    private static final Redis<String, String> REDIS = Redis.utf8();

    /** A decoded request; {@code ids} is round 0's answer, kept for round 1. */
    public static final class Query {
        final int user;
        final int limit;
        /** The timeline's post ids, newest first (round 0's merge). */
        long[] ids;
        /** The same, ascending, for round 1's handlers to look posts up in. */
        long[] wanted;

        /**
         * A request.
         *
         * @param user whose timeline, checked by the binding
         * @param limit how many posts at most, {@code 1 ..} {@value #MAX_LIMIT}
         */
        public Query(int user, int limit) {
            this.user = user;
            this.limit = limit;
        }

        /** {@return the user} */
        public int user() {
            return user;
        }

        /** {@return the limit} */
        public int limit() {
            return limit;
        }
    }

    // per-reply work, round 0: the timeline's members to ids
    private static final CallRef<long[]> IDS = CallRef.named("ids");
    private static final CallRef<List<Post>> POSTS = CallRef.named("posts");

    private static final CallHandler<Query, List<String>, long[]> PARSE_IDS = (call, members) -> {
        long[] ids = new long[members.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = Long.parseLong(members.get(i));
        }
        return ids;
    };

    // per-reply work, round 1: decode and check every document, keep the posts asked for
    private static final CallHandler<Query, List<RawBsonDocument>, List<Post>> DECODE_POSTS = (call, docs) -> {
        long[] wanted = call.request().wanted;
        List<Post> out = new ArrayList<>(docs.size());
        for (RawBsonDocument d : docs) {
            Post p = Post.of(d);
            if (Arrays.binarySearch(wanted, p.id()) >= 0) {
                out.add(p);
            }
        }
        return out;
    };

    private final Backend<RedisCommand<?>> redis;
    private final Backend<MongoCommand<?>> mongo;

    /**
     * The service over its two backends.
     *
     * @param redis the timelines
     * @param mongo the posts
     */
    public TimelineService(Backend<RedisCommand<?>> redis, Backend<MongoCommand<?>> mongo) {
        this.redis = redis;
        this.mongo = mongo;
    }

    @Override
    public void plan(Query q, FanoutPlan<Query, Object> plan) {
        plan.call(redis, SocialLayout.redisShard(q.user, redis.shardCount()),
                REDIS.zrevrange(SocialLayout.timelineKey(q.user), 0, q.limit - 1), IDS, PARSE_IDS);
    }

    @Override
    public TimelineResult merge(Query q, Replies<Object> replies, FanoutPlan<Query, Object> next) {
        if (replies.round() == 0) {
            long[] ids = replies.get(IDS);
            if (ids.length == 0) {
                return new TimelineResult(q.user, List.of());
            }
            q.ids = ids;
            q.wanted = ids.clone();
            Arrays.sort(q.wanted);
            Map<Integer, List<Long>> byShard = new HashMap<>();
            for (long id : ids) {
                byShard.computeIfAbsent(SocialLayout.mongoShard(id, mongo.shardCount()), s -> new ArrayList<>()).add(id);
            }
            byShard.forEach((shard, onShard) -> next.call(mongo, shard,
                    Mongo.find(SocialLayout.POSTS, Filters.in("_id", onShard)).inDatabase(SocialLayout.DATABASE), POSTS, DECODE_POSTS));
            return null;
        }
        Map<Long, Post> found = new HashMap<>();
        for (List<Post> posts : replies.all(POSTS)) {
            for (Post p : posts) {
                found.put(p.id(), p);
            }
        }
        List<Post> ordered = new ArrayList<>(q.ids.length);
        for (long id : q.ids) {
            Post p = found.get(id);
            if (p != null) {
                ordered.add(p);
            }
        }
        return new TimelineResult(q.user, ordered);
    }
}
