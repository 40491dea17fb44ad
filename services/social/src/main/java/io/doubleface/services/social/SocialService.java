package io.doubleface.services.social;

import io.doubleface.api.Backend;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.mongo.MongoCommand;
import io.doubleface.mongo.MongoDriver;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.doubleface.server.FanoutServer;

/**
 * The social network's mid-tier (DeathStarBench's social network, ASPLOS '19, its home-timeline
 * and compose-post paths), on two backends:
 *
 * <pre>
 *                       ┌─▶ redis  (backend {@value #REDIS_BACKEND}): timeline:U sorted sets, followers:U sets
 *   GET  /social/timeline ──┤
 *   POST /social/posts      └─▶ mongo  (backend {@value #MONGO_BACKEND}): the posts collection
 * </pre>
 *
 * {@link TimelineService} reads a home timeline (Redis, then MongoDB); {@link ComposeService}
 * writes a post (MongoDB and the follower set, then the followers' timelines). Where each key and
 * post lives: {@link SocialLayout}; the data: {@link SocialData}, loaded by {@link SocialLoader}.
 */
public final class SocialService {

    /** Name of the Redis backend: {@value}. */
    public static final String REDIS_BACKEND = "redis";
    /** Name of the MongoDB backend: {@value}. */
    public static final String MONGO_BACKEND = "mongo";
    /** read-home-timeline's HTTP route: {@value}. */
    public static final String TIMELINE_PATH = "/social/timeline";
    /** compose-post's HTTP route: {@value}. */
    public static final String POSTS_PATH = "/social/posts";

    private final TimelineService timeline;
    private final ComposeService compose;

    private SocialService(TimelineService timeline, ComposeService compose) {
        this.timeline = timeline;
        this.compose = compose;
    }

    /**
     * Adds the social network to a server: backends {@value #REDIS_BACKEND} and {@value #MONGO_BACKEND}
     * (closed by the server), {@code GET} {@value #TIMELINE_PATH}, {@code POST} {@value #POSTS_PATH}
     * and, if {@code grpc}, {@code doubleface.social.v1.Social/ReadHomeTimeline} and {@code /ComposePost}.
     *
     * @param builder the server being built
     * @param redis the Redis shards' driver
     * @param mongo the MongoDB shards' driver
     * @param data the data set (the users a request may name)
     * @param compose compose-post's ids, clock and batching
     * @param grpc whether to add the gRPC methods
     * @return the services
     */
    public static SocialService install(FanoutServer.Builder builder, ShardDriver<RedisCommand<?>> redis,
            ShardDriver<MongoCommand<?>> mongo, SocialData data, ComposeService.Settings compose, boolean grpc) {
        Backend<RedisCommand<?>> r = builder.backend(REDIS_BACKEND, redis);
        Backend<MongoCommand<?>> m = builder.backend(MONGO_BACKEND, mongo);
        SocialService s = new SocialService(new TimelineService(r, m), new ComposeService(r, m, compose));
        builder.get(TIMELINE_PATH, s.timeline, new SocialBindings.TimelineHttp(data));
        builder.post(POSTS_PATH, s.compose, new SocialBindings.ComposeHttp(data));
        if (grpc) {
            builder.grpcMethod(s.timeline, new SocialBindings.TimelineGrpc(data));
            builder.grpcMethod(s.compose, new SocialBindings.ComposeGrpc(data));
        }
        return s;
    }

    /**
     * As {@link #install(FanoutServer.Builder, ShardDriver, ShardDriver, SocialData, ComposeService.Settings,
     * boolean)} over the shards of two URIs, with production compose settings.
     *
     * @param builder the server being built
     * @param redisUri e.g. {@code redis://127.0.0.1:7401-7404}
     * @param mongoUri e.g. {@code mongodb://127.0.0.1:7501-7504}
     * @param data the data set
     * @param ids the post ids of this mid-tier
     * @param grpc whether to add the gRPC methods
     * @return the services
     */
    public static SocialService install(FanoutServer.Builder builder, String redisUri, String mongoUri,
            SocialData data, PostIds ids, boolean grpc) {
        return install(builder, RedisDriver.of(redisUri), MongoDriver.of(mongoUri), data,
                ComposeService.Settings.of(ids), grpc);
    }

    /** {@return read-home-timeline} */
    public TimelineService timeline() {
        return timeline;
    }

    /** {@return compose-post} */
    public ComposeService compose() {
        return compose;
    }
}
