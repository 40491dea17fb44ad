package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's embedding example, verbatim, over real redis-server shards under every model. */
@Timeout(120)
class FollowersExampleTest {

    /** GET /users/{user}/followers: the user's followers, from the Redis shard that holds them. */
    static final class FollowersService implements FanoutService<Long, Set<String>, String> {
        static final Redis<String, String> REDIS = Redis.utf8();
        static final ReplyHandler<Long, Set<String>, Set<String>> IDS = (user, call, ids) -> ids; // must not block

        private final Backend<RedisCommand<?>> cache;

        FollowersService(Backend<RedisCommand<?>> cache) {
            this.cache = cache;
        }

        @Override
        public void plan(Long user, FanoutPlan<Long, Set<String>> plan) {
            int shard = (int) Math.floorMod(user, (long) cache.shardCount());
            plan.call(cache, shard, REDIS.smembers("followers:" + user), IDS);   // typed: Set<String>
        }

        @Override
        public String merge(Long user, Replies<Set<String>> replies, FanoutPlan<Long, Set<String>> next) {
            return String.join(",", new TreeSet<>(replies.get(0)));             // or: next.call(...); return null;
        }
    }

    static final class FollowersBinding implements HttpBinding<Long, String> {
        @Override
        public Long decode(HttpRequestView req) throws BadRequestException {
            return req.pathLong("user");                                           // 'abc' -> 400 with the reason
        }

        @Override
        public ByteBuf encode(String followers, ByteBufAllocator alloc) {
            return ByteBufUtil.writeUtf8(alloc, followers);
        }
    }

    @Test
    void theReadmeServiceAnswersUnderEveryModel() throws Exception {
        try (RedisServers servers = RedisServers.start(2, 0)) {
            try (RedisDriver loader = RedisDriver.of(servers.uri(), DriverSettings.DEFAULT);
                    BlockingClient<RedisCommand<?>> c = loader.openBlocking()) {
                for (long user = 0; user < 10; user++) {
                    c.call((int) (user % 2), Redis.utf8().sadd("followers:" + user, "u" + (user + 1), "u" + (user + 2)),
                            TimeUnit.SECONDS.toNanos(5));
                }
            }
            FanoutServer.Builder b = FanoutServer.builder().port(0).ioThreads(2);
            Backend<RedisCommand<?>> cache = b.backend("cache", RedisDriver.of(servers.uri()));
            b.get("/users/{user}/followers", new FollowersService(cache), new FollowersBinding());
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            try (FanoutServer server = b.configuration("doubleface").start()) {
                for (String model : List.of("doubleface", "type2a-1f2b", "type2b", "type1-4", "thread-4")) {
                    server.switchTo(model);
                    for (long user = 0; user < 10; user++) {
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                + server.port() + "/users/" + user + "/followers")).timeout(Duration.ofSeconds(30)).build(),
                                HttpResponse.BodyHandlers.ofString());
                        assertEquals(200, r.statusCode(), model + " " + r.body());
                        assertEquals(String.join(",", new TreeSet<>(Set.of("u" + (user + 1), "u" + (user + 2)))), r.body(), model);
                    }
                    HttpResponse<String> bad = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + server.port() + "/users/abc/followers")).build(), HttpResponse.BodyHandlers.ofString());
                    assertEquals(400, bad.statusCode());
                    assertEquals("user: 'abc' (expected: a number)\n", bad.body());
                }
            }
        }
    }
}
