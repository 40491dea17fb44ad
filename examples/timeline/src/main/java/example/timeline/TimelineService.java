package example.timeline;

import com.mongodb.client.model.Filters;
import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.CallHandler;
import io.doubleface.api.CallRef;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.StatusException;
import io.doubleface.driver.ShardException;
import io.doubleface.api.ShardRouting;
import io.doubleface.mongo.Mongo;
import io.doubleface.mongo.MongoCommand;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.RawBsonDocument;

/**
 * {@code GET /users/{user}/timeline?limit=N}: round 0 reads the newest post ids from the user's
 * Redis list; round 1 fetches those posts from the MongoDB shards holding them (one {@code find} per
 * shard), best effort; merge answers the posts newest first and names the shards that did not answer.
 * A user without a timeline (who never posted) is a {@code 404} with a JSON body.
 *
 * <p>Each call's reply is read by a typed reference ({@link CallRef}): no common reply type, no casts.
 */
final class TimelineService implements FanoutService<TimelineService.Request, Object, TimelineService.Timeline> {

    static final Redis<String, String> REDIS = Redis.utf8();
    static final int DEFAULT_LIMIT = 10;
    static final int MAX_LIMIT = 100;

    /** The request; {@code ids} is written by the first merge for the second. */
    static final class Request {
        final long user;
        final int limit;
        List<Long> ids = List.of();

        Request(long user, int limit) {
            this.user = user;
            this.limit = limit;
        }
    }

    /** The answer. */
    record Timeline(long user, List<Post> posts, List<Missing> missing) {}

    /** A shard whose posts are missing from the answer, and why. */
    record Missing(String backend, int shard, String reason) {}

    // the replies by name and type; the handlers are the per-reply work the DoubleFace scheduler orders
    static final CallRef<List<Long>> IDS = CallRef.named("ids");
    static final CallRef<List<Post>> POSTS = CallRef.named("posts");

    static final CallHandler<Request, List<String>, List<Long>> PARSE_IDS = (call, ids) -> {
        List<Long> out = new ArrayList<>(ids.size());
        for (String s : ids) {
            out.add(Long.parseLong(s));
        }
        return out;
    };
    static final CallHandler<Request, List<RawBsonDocument>, List<Post>> DECODE_POSTS = (call, docs) -> {
        List<Post> out = new ArrayList<>(docs.size());
        for (RawBsonDocument d : docs) {
            out.add(Post.of(d));
        }
        return out;
    };

    private final Backend<RedisCommand<?>> cache;
    private final Backend<MongoCommand<?>> posts;

    TimelineService(Backend<RedisCommand<?>> cache, Backend<MongoCommand<?>> posts) {
        this.cache = cache;
        this.posts = posts;
    }

    static String timelineKey(long user) {
        return "timeline:" + user;
    }

    @Override
    public void plan(Request q, FanoutPlan<Request, Object> plan) {
        int shard = ShardRouting.jump(q.user, cache.shardCount());
        plan.call(cache, shard, REDIS.lrange(timelineKey(q.user), 0, q.limit - 1), IDS, PARSE_IDS);
    }

    @Override
    public Timeline merge(Request q, Replies<Object> replies, FanoutPlan<Request, Object> next) {
        if (replies.round() == 0) {
            List<Long> ids = replies.get(IDS);
            if (ids.isEmpty()) { // Redis keeps no empty list: this user never posted
                throw StatusException.of(404, "application/json", Json.error(404, "no timeline for user " + q.user));
            }
            q.ids = ids;
            Map<Integer, List<Long>> byShard = new HashMap<>();
            for (long id : q.ids) {
                byShard.computeIfAbsent(ShardRouting.jump(id, posts.shardCount()), s -> new ArrayList<>()).add(id);
            }
            next.failurePolicy(FailurePolicy.bestEffort());
            byShard.forEach((shard, onShard) ->
                    next.call(posts, shard, Mongo.find("posts", Filters.in("_id", onShard)), POSTS, DECODE_POSTS));
            return null;
        }
        Map<Long, Post> found = new HashMap<>();
        for (List<Post> onShard : replies.all(POSTS)) {
            onShard.forEach(post -> found.put(post.id(), post));
        }
        List<Missing> missing = new ArrayList<>();
        for (ShardException f : replies.failures()) { // "backend posts: shard 1 unavailable", under every model
            missing.add(new Missing(f.backend(), f.shard(), f.getMessage()));
        }
        List<Post> ordered = new ArrayList<>();
        for (long id : q.ids) {
            Post p = found.get(id);
            if (p != null) {
                ordered.add(p);
            }
        }
        return new Timeline(q.user, ordered, missing);
    }

    static final class Binding implements HttpBinding<Request, Timeline> {
        @Override
        public Request decode(HttpRequestView req) throws BadRequestException {
            long user = req.pathLong("user");
            int limit = (int) req.queryLong("limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
            return new Request(user, limit);
        }

        @Override
        public ByteBuf encode(Timeline t, ByteBufAllocator alloc) {
            return Json.write(t, alloc);
        }
    }
}
