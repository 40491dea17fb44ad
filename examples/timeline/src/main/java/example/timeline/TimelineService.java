package example.timeline;

import com.mongodb.client.model.Filters;
import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
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
 */
final class TimelineService implements FanoutService<TimelineService.Request, TimelineService.Part, TimelineService.Timeline> {

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

    /** A processed reply: post ids (round 0) or posts (round 1). */
    sealed interface Part permits Ids, Posts {}

    record Ids(List<Long> ids) implements Part {}

    record Posts(List<Post> posts) implements Part {}

    /** The answer. */
    record Timeline(long user, List<Post> posts, List<Missing> missing) {}

    /** A shard whose posts are missing from the answer, and why. */
    record Missing(String backend, int shard, String reason) {}

    // per-reply work: parse ids, decode documents (the work the DoubleFace scheduler orders)
    static final ReplyHandler<Request, List<String>, Part> IDS = (q, call, ids) -> {
        List<Long> out = new ArrayList<>(ids.size());
        for (String s : ids) {
            out.add(Long.parseLong(s));
        }
        return new Ids(out);
    };
    static final ReplyHandler<Request, List<RawBsonDocument>, Part> POSTS = (q, call, docs) -> {
        List<Post> out = new ArrayList<>(docs.size());
        for (RawBsonDocument d : docs) {
            out.add(Post.of(d));
        }
        return new Posts(out);
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
    public void plan(Request q, FanoutPlan<Request, Part> plan) {
        int shard = ShardRouting.jump(q.user, cache.shardCount());
        plan.call(cache, shard, REDIS.lrange(timelineKey(q.user), 0, q.limit - 1), IDS);
    }

    @Override
    public Timeline merge(Request q, Replies<Part> replies, FanoutPlan<Request, Part> next) {
        if (replies.round() == 0) {
            if (!(replies.get(0) instanceof Ids ids) || ids.ids().isEmpty()) {
                return new Timeline(q.user, List.of(), List.of());
            }
            q.ids = ids.ids();
            Map<Integer, List<Long>> byShard = new HashMap<>();
            for (long id : q.ids) {
                byShard.computeIfAbsent(ShardRouting.jump(id, posts.shardCount()), s -> new ArrayList<>()).add(id);
            }
            next.failurePolicy(FailurePolicy.bestEffort());
            byShard.forEach((shard, ids2) -> next.call(posts, shard, Mongo.find("posts", Filters.in("_id", ids2)), POSTS));
            return null;
        }
        Map<Long, Post> found = new HashMap<>();
        List<Missing> missing = new ArrayList<>();
        for (int i = 0; i < replies.size(); i++) {
            if (replies.get(i) instanceof Posts p) {
                p.posts().forEach(post -> found.put(post.id(), post));
            } else {
                missing.add(new Missing(replies.backend(i).name(), replies.shard(i), replies.failure(i).getMessage()));
            }
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
