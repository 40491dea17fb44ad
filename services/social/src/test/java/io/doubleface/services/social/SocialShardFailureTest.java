package io.doubleface.services.social;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.services.social.v1.TimelineRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A dead shard under representative models: a killed {@code redis-server} or a stopped MongoDB
 * shard answers the requests that need it {@code 503 backend NAME: shard N …} (gRPC
 * {@code UNAVAILABLE}) well within the deadline, and the requests that do not need it as before.
 */
class SocialShardFailureTest {

    static final SocialData DATA = SocialData.of(11, 120, 6, 2, 0.9);
    static final Duration DEADLINE = Duration.ofSeconds(3);
    static final String[] MODELS = {"doubleface", "type2a-1f2b", "type2b", "type1-8", "thread-8"};

    /** {@code status} within the deadline, and the body's reason starting with {@code reason}. */
    static void assertFails(SocialCluster c, String what, String path, String body, String reason) throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<String> r = body == null ? c.get(path) : c.post(path, body);
        long tookMillis = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(503, r.statusCode(), what + ": " + r.body());
        assertTrue(r.body().startsWith(reason), what + ": " + r.body());
        assertTrue(tookMillis < DEADLINE.toMillis(), what + ": 503 after " + tookMillis + " ms");
    }

    /**
     * A user whose Redis shard is {@code redis} and the newest {@code limit} posts of whose timeline
     * live on MongoDB shards other than {@code notMongo}.
     */
    static int user(SocialReference ref, int redis, int notMongo, int limit) {
        for (int u = 0; u < DATA.users(); u++) {
            if (SocialLayout.redisShard(u, 3) == redis && !ref.timeline(u, limit).posts().isEmpty() && ref.timeline(u,
                    limit).posts().stream().allMatch(p -> SocialLayout.mongoShard(p.id(), 2) != notMongo)) {
                return u;
            }
        }
        throw new AssertionError("no such user");
    }

    @Test
    void aDeadRedisOrMongoShardGives503NamingItWithinTheDeadline() throws Exception {
        SocialReference ref = new SocialReference(DATA);
        try (SocialCluster c = new SocialCluster(DATA, 3, 2, ComposeService.Settings.of(new PostIds(1, 1)), DEADLINE,
                Duration.ofSeconds(1))) {
            int onDeadRedis = user(ref, 0, -1, 100);
            int onLiveRedis = user(ref, 1, -1, 100);
            int avoidsDeadMongo = user(ref, 2, 1, 2);
            int needsDeadMongo = -1;
            for (int u = 0; u < DATA.users() && needsDeadMongo < 0; u++) {
                if (SocialLayout.redisShard(u, 3) != 0 && ref.timeline(u, 100).posts().stream()
                        .anyMatch(p -> SocialLayout.mongoShard(p.id(), 2) == 1)) {
                    needsDeadMongo = u;
                }
            }
            int author = 0; // any author with a follower on Redis shard 0
            while (java.util.Arrays.stream(DATA.followers(author)).noneMatch(f -> SocialLayout.redisShard(f, 3) == 0)) {
                author++;
            }
            c.redis.kill(0);
            for (String model : MODELS) {
                c.server.switchTo(model);
                assertFails(c, model + " timeline on the dead redis", SocialService.TIMELINE_PATH + "?user="
                        + onDeadRedis, null, "backend redis: shard 0 ");
                assertEquals(ref.timeline(onLiveRedis, 100).toJson(), c.timeline(onLiveRedis, 100).body(), model);
                assertFails(c, model + " post fanned out to the dead redis", SocialService.POSTS_PATH,
                        SocialTest.json(author, "to a dead shard"), "backend ");
                try {
                    c.stub().readHomeTimeline(TimelineRequest.newBuilder().setUser(onDeadRedis).build());
                    throw new AssertionError("answered without its redis shard");
                } catch (StatusRuntimeException e) {
                    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), model);
                    assertTrue(e.getStatus().getDescription().contains("backend redis: shard 0"),
                            e.getStatus().getDescription());
                }
            }
            c.mongo.stop(1);
            for (String model : MODELS) {
                c.server.switchTo(model);
                assertFails(c, model + " timeline with posts on the dead mongo", SocialService.TIMELINE_PATH + "?user="
                        + needsDeadMongo + "&limit=100", null, "backend mongo: shard 1 ");
                assertEquals(ref.timeline(avoidsDeadMongo, 2).toJson(), c.timeline(avoidsDeadMongo, 2).body(), model);
            }
        }
    }
}
