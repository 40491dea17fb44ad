package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Values handed on without a copy ({@link Redis#getBuffer}): the handler keeps each reply buffer,
 * merge answers a composite of them, retained or taken ({@link Replies#take}), under every model,
 * over native and Lettuce connections, with requests in flight at once — every byte right and
 * nothing leaked (the tests run with Netty's leak detection at {@code paranoid}).
 */
@Timeout(180)
class ZeroCopyValuesTest {

    static final Redis<byte[], byte[]> REDIS = Redis.bytes();
    static final int SHARDS = 3;

    /** GET /{conn}?key=K: key K's value on every shard, concatenated in shard order, uncopied. */
    static final class Values implements FanoutService<String, ByteBuf, ByteBuf> {
        static final ReplyHandler<String, ByteBuf, ByteBuf> KEEP = (key, call, value) -> value;
        private final Backend<RedisCommand<?>> redis;
        /** Merge takes the values instead of retaining them (and takes the first one twice). */
        private final boolean take;

        Values(Backend<RedisCommand<?>> redis, boolean take) {
            this.redis = redis;
            this.take = take;
        }

        @Override
        public void plan(String key, FanoutPlan<String, ByteBuf> plan) {
            for (int shard = 0; shard < redis.shardCount(); shard++) {
                plan.call(redis, shard, REDIS.getBuffer(key.getBytes(StandardCharsets.US_ASCII)), KEEP);
            }
        }

        @Override
        public ByteBuf merge(String key, Replies<ByteBuf> replies, FanoutPlan<String, ByteBuf> next) {
            for (int i = 0; i < replies.size(); i++) {
                if (replies.get(i) == null) {
                    throw new IllegalStateException("no value for " + key + " on shard " + replies.shard(i));
                }
            }
            CompositeByteBuf body = Unpooled.compositeBuffer(replies.size());
            if (take) {
                for (int i = 0; i < replies.size(); i++) {
                    body.addComponent(true, replies.take(i));
                }
                ByteBuf again = replies.take(0); // a second take: a reference of its own, to release
                if (again.refCnt() < 2) {
                    throw new IllegalStateException("a second take did not retain: refCnt " + again.refCnt());
                }
                again.release();
                return body;
            }
            for (ByteBuf v : replies.values()) {
                body.addComponent(true, v.retain());
            }
            return body;
        }
    }

    static final class Binding implements HttpBinding<String, ByteBuf> {
        @Override
        public String decode(HttpRequestView req) throws BadRequestException {
            String key = req.queryParam("key");
            if (key == null) {
                throw new BadRequestException("key: missing");
            }
            return key;
        }

        @Override
        public ByteBuf encode(ByteBuf body, ByteBufAllocator alloc) {
            return body;
        }
    }

    /** The value of {@code key} on {@code shard}: seeded bytes with CRLFs inside. */
    static byte[] value(String key, int shard, int size) {
        byte[] v = new byte[size];
        new Random(key.hashCode() * 31L + shard).nextBytes(v);
        for (int i = 5; i < size; i += 97) {
            v[i - 1] = '\r';
            v[i] = '\n';
        }
        return v;
    }

    @Test
    void uncopiedValuesAnswerEveryRequestUnderEveryModelAndNothingLeaks() throws Exception {
        List<String> keys = List.of("small", "large", "mixed");
        try (RedisServers servers = RedisServers.start(SHARDS, 0)) {
            try (RedisDriver loader = RedisDriver.of(servers.uri(), DriverSettings.DEFAULT);
                    BlockingClient<RedisCommand<?>> c = loader.openBlocking()) {
                for (int s = 0; s < SHARDS; s++) {
                    c.call(s, REDIS.set("small".getBytes(), value("small", s, 100)), TimeUnit.SECONDS.toNanos(5));
                    c.call(s, REDIS.set("large".getBytes(), value("large", s, 20_000)), TimeUnit.SECONDS.toNanos(5));
                    c.call(s, REDIS.set("mixed".getBytes(), value("mixed", s, s == 1 ? 70_000 : 10)),
                            TimeUnit.SECONDS.toNanos(5));
                }
            }
            FanoutServer.Builder b = FanoutServer.builder().port(0).ioThreads(2);
            Backend<RedisCommand<?>> nativeRedis = b.backend("native", RedisDriver.of(servers.uri() + "?connection=native"));
            Backend<RedisCommand<?>> lettuce = b.backend("lettuce", RedisDriver.of(servers.uri()));
            b.get("/native", new Values(nativeRedis, false), new Binding());
            b.get("/lettuce", new Values(lettuce, false), new Binding());
            b.get("/native-take", new Values(nativeRedis, true), new Binding());
            b.get("/lettuce-take", new Values(lettuce, true), new Binding());
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            try (FanoutServer server = b.configuration("doubleface").start()) {
                for (String model : List.of("doubleface", "type2a-1f2b", "type2b", "type1-4", "thread-4")) {
                    server.switchTo(model);
                    for (String conn : List.of("native", "lettuce", "native-take", "lettuce-take")) {
                        List<CompletableFuture<HttpResponse<byte[]>>> inFlight = new ArrayList<>();
                        List<String> asked = new ArrayList<>();
                        for (int i = 0; i < 24; i++) {
                            String key = keys.get(i % keys.size());
                            asked.add(key);
                            inFlight.add(http.sendAsync(get(server, "/" + conn + "?key=" + key),
                                    HttpResponse.BodyHandlers.ofByteArray()));
                        }
                        for (int i = 0; i < inFlight.size(); i++) {
                            HttpResponse<byte[]> r = inFlight.get(i).get(30, TimeUnit.SECONDS);
                            String where = model + " " + conn + " " + asked.get(i);
                            assertEquals(200, r.statusCode(), where);
                            assertArrayEquals(expected(asked.get(i)), r.body(), where);
                        }
                        HttpResponse<String> missing = http.send(get(server, "/" + conn + "?key=none"),
                                HttpResponse.BodyHandlers.ofString());
                        assertEquals(500, missing.statusCode(), model + " " + conn);
                        // the step, not the exception (which is logged)
                        assertEquals("merge failed\n", missing.body(), model + " " + conn);
                    }
                }
            }
        }
    }

    private static HttpRequest get(FanoutServer server, String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(30)).build();
    }

    private static byte[] expected(String key) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int s = 0; s < SHARDS; s++) {
            out.writeBytes(value(key, s, switch (key) {
                case "small" -> 100;
                case "large" -> 20_000;
                default -> s == 1 ? 70_000 : 10;
            }));
        }
        return out.toByteArray();
    }
}
