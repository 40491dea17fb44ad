package example.timeline;

import io.doubleface.api.Backend;
import io.doubleface.mongo.MongoCommand;
import io.doubleface.mongo.MongoDriver;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.doubleface.server.FanoutServer;

/**
 * A user-timeline mid-tier, written only against doubleface's public API:
 *
 * <ul>
 *   <li>{@code GET /users/{user}/timeline?limit=N}: the user's newest post ids from Redis (round 0),
 *       then the posts from the MongoDB shards that hold them (round 1, best effort: a shard that is
 *       down is listed under {@code "missing"});
 *   <li>{@code POST /users/{user}/posts} with {@code {"text": "…"}}: the post into MongoDB and its id
 *       onto the user's Redis list, in one round.
 * </ul>
 *
 * <pre>
 *   java -cp … example.timeline.TimelineApp redis://127.0.0.1:7201-7204 mongodb://127.0.0.1:7301-7302/app 8080
 * </pre>
 */
public final class TimelineApp {

    private TimelineApp() {}

    /** Adds the timeline's backends and routes to {@code builder}. */
    public static void install(FanoutServer.Builder builder, String redisUri, String mongoUri) {
        Backend<RedisCommand<?>> cache = builder.backend("cache", RedisDriver.of(redisUri));
        Backend<MongoCommand<?>> posts = builder.backend("posts", MongoDriver.of(mongoUri));
        builder.get("/users/{user}/timeline", new TimelineService(cache, posts), new TimelineService.Binding())
                .post("/users/{user}/posts", new NewPostService(cache, posts), new NewPostService.Binding());
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 3) {
            System.err.println("usage: TimelineApp REDIS_URI MONGODB_URI PORT");
            System.exit(2);
        }
        FanoutServer.Builder b = FanoutServer.builder().port(Integer.parseInt(args[2])).adminPort(9090);
        install(b, args[0], args[1]);
        try (FanoutServer server = b.start()) {
            System.out.println("timeline on http://127.0.0.1:" + server.port());
            Thread.currentThread().join();
        }
    }
}
