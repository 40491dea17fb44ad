package io.doubleface.cli;

import io.doubleface.mongo.MongoDriver;
import io.doubleface.redis.RedisDriver;
import io.doubleface.services.social.ComposeService;
import io.doubleface.services.social.PostIds;
import io.doubleface.services.social.SocialData;
import io.doubleface.services.social.SocialLoader;
import io.doubleface.services.social.SocialService;
import io.doubleface.services.social.v1.SocialGrpc;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code doubleface serve social}: the social network's mid-tier ({@link SocialService}) over Redis and MongoDB. */
@Command(name = "social",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs the social network mid-tier (DeathStarBench): home timelines from Redis, posts from MongoDB.",
        description = {
            "GET /social/timeline?user=U&limit=N reads the user's home timeline: the newest post ids from the "
                + "user's Redis sorted set, then the posts from the MongoDB shards holding them (one find each). "
                + "POST /social/posts with {\"user\":U,\"text\":\"...\"} (or with no body and ?user=U&text=...) "
                + "stores the post on its MongoDB shard and adds its id to the timeline of every follower of U "
                + "(one EVAL per Redis shard and batch), answering 201 {\"id\":…,\"ts\":…,\"followers\":…}. "
                + "A failed shard is 503 naming the backend and shard; the deadline 504. Users are 0..--users-1 of "
                + "the same data options as the shards' (leaf social); --load-data (re)loads that data first. "
                + "See docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf social --redis-shards 4 --mongo-shards 4",
            "  doubleface serve social --redis redis://127.0.0.1:7401-7404 --mongo mongodb://127.0.0.1:7501-7504 "
                + "--grpc-port 8081",
            "  curl 'http://127.0.0.1:8080/social/timeline?user=12&limit=5'",
            "  curl -X POST -d '{\"user\":12,\"text\":\"hello\"}' http://127.0.0.1:8080/social/posts",
            "", "Exit codes: 0 stopped by Ctrl-C/SIGTERM, 1 failure at run time (a port in use, loading failed), "
                + "2 usage error."})
final class ServeSocialCommand implements Callable<Integer> {

    private final CliEnv env;

    @Option(names = "--redis", paramLabel = "URI", required = true,
            description = "The Redis shards of the timelines and follower sets, redis://HOST:FIRST-LAST or "
                    + "redis://HOST:PORT,HOST:PORT,... (as printed by doubleface leaf social).")
    String redis;

    @Option(names = "--mongo", paramLabel = "URI", required = true,
            description = "The MongoDB shards of the posts (database social, collection posts), "
                    + "mongodb://HOST:FIRST-LAST or mongodb://HOST:PORT,HOST:PORT,...")
    String mongo;

    @Option(names = "--load-data", description = "Load the seeded data into the shards before serving (replaces "
            + "their timelines, follower sets and posts).")
    boolean loadData;

    @Option(names = "--server-id", paramLabel = "N",
            description = "This mid-tier's id in its posts' ids (0.." + PostIds.MAX_SERVER + "); give each mid-tier "
                    + "over the same shards its own.")
    int serverId;

    @Option(names = "--first-post-sequence", paramLabel = "N",
            description = "Sequence of this mid-tier's first post id (ids: sequence << 10 | server id). Default: the "
                    + "clock in microseconds, so a restart does not reuse ids.")
    Long firstSequence;

    @Mixin
    MidTierServeOptions serve;

    @Mixin
    SocialOptions social;

    ServeSocialCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        SocialData data = social.data();
        PostIds ids = new PostIds(serverId, firstSequence != null ? firstSequence : PostIds.clockSequence());
        return serve.serve(env, "social", (b, grpc) -> {
            RedisDriver r = RedisDriver.of(redis, serve.driverSettings());
            MongoDriver m;
            try {
                m = MongoDriver.of(mongo, MongoDriver.Options.DEFAULT.with(serve.driverSettings()));
            } catch (RuntimeException e) {
                r.close();
                throw e;
            }
            if (loadData) {
                try {
                    SocialLoader.load(redis, mongo, data);
                } catch (RuntimeException e) {
                    r.close();
                    m.close();
                    throw e;
                }
            }
            SocialService.install(b, r, m, data, ComposeService.Settings.of(ids), grpc);
            return List.of("  redis    " + redis + " (" + r.shardCount() + " shards)",
                    "  mongo    " + mongo + " (" + m.shardCount() + " shards)",
                    "  data     " + data + (loadData ? ", loaded" : ""),
                    "  posts    ids sequence << 10 | server " + serverId);
        }, "curl '{base}" + SocialService.TIMELINE_PATH + "?user=12&limit=5'",
                SocialGrpc.getReadHomeTimelineMethod().getFullMethodName() + ", "
                        + SocialGrpc.getComposePostMethod().getFullMethodName());
    }
}
