package example.timeline;

import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.BodyCodec;
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
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.Document;

/**
 * {@code POST /users/{user}/posts} with {@code {"text": "…"}}: one round of two calls — the post into
 * the MongoDB shard its id maps to, and its id pushed onto the author's Redis timeline. Fail fast:
 * the client learns if either write failed.
 */
final class NewPostService implements FanoutService<NewPostService.Request, Object, NewPostService.Created> {

    /** Longest post text: {@value} characters. */
    static final int MAX_TEXT = 280;

    /** The body. */
    public record Body(String text) {}

    /** The decoded request: author, text, and the id it will get. */
    record Request(long user, String text, long id, long ts) {}

    /** The answer. */
    record Created(long id) {}

    static final BodyCodec<Body> BODY = Json.body(Body.class);
    static final ReplyHandler<Request, Object, Object> DONE = (q, call, reply) -> reply;
    private static final AtomicLong IDS = new AtomicLong(System.currentTimeMillis() * 1000);

    private final Backend<RedisCommand<?>> cache;
    private final Backend<MongoCommand<?>> posts;

    NewPostService(Backend<RedisCommand<?>> cache, Backend<MongoCommand<?>> posts) {
        this.cache = cache;
        this.posts = posts;
    }

    @Override
    public void plan(Request q, FanoutPlan<Request, Object> plan) {
        Document post = new Document("_id", q.id()).append("author", q.user()).append("text", q.text())
                .append("ts", q.ts());
        plan.call(posts, ShardRouting.jump(q.id(), posts.shardCount()), Mongo.insertOne("posts", post), DONE);
        plan.call(cache, ShardRouting.jump(q.user(), cache.shardCount()),
                Redis.utf8().lpush(TimelineService.timelineKey(q.user()), Long.toString(q.id())), DONE);
    }

    @Override
    public Created merge(Request q, Replies<Object> replies, FanoutPlan<Request, Object> next) {
        return new Created(q.id());
    }

    static final class Binding implements HttpBinding<Request, Created> {
        @Override
        public Request decode(HttpRequestView req) throws BadRequestException {
            long user = req.pathLong("user");
            Body body = req.body(BODY);
            if (body.text() == null || body.text().isBlank()) {
                throw new BadRequestException("text: missing or empty");
            }
            if (body.text().length() > MAX_TEXT) {
                throw new BadRequestException("text: " + body.text().length() + " characters (expected: at most "
                        + MAX_TEXT + ")");
            }
            return new Request(user, body.text(), IDS.incrementAndGet(), System.currentTimeMillis());
        }

        @Override
        public HttpResponseStatus status(Created c) {
            return HttpResponseStatus.CREATED;
        }

        @Override
        public ByteBuf encode(Created c, ByteBufAllocator alloc) {
            return Json.write(c, alloc);
        }
    }
}
