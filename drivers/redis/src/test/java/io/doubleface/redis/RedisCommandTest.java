package io.doubleface.redis;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandType;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Native Redis commands ({@link Redis}) through the loop and blocking clients, against real redis-server. */
@Timeout(60)
class RedisCommandTest {

    static final Redis<String, String> R = Redis.utf8();
    static final DriverSettings SETTINGS = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(20))
            .withConnectTimeout(Duration.ofSeconds(5));
    static final long T = TimeUnit.SECONDS.toNanos(10);

    static RedisServers servers;
    static LoopGroup loops;
    static ShardDriver<RedisCommand<?>> driver;

    @BeforeAll
    static void start() {
        servers = RedisServers.start(2, 0);
        loops = new LoopGroup("redis-cmd", 1, Transport.AUTO);
        driver = RedisDriver.of(servers.uri(), SETTINGS);
    }

    @AfterAll
    static void stop() {
        if (driver != null) {
            driver.close();
        }
        if (loops != null) {
            loops.close();
        }
        if (servers != null) {
            servers.close();
        }
    }

    /** Sends {@code command} to {@code shard} from the loop client and waits for its one outcome. */
    static Object onLoop(LoopClient<RedisCommand<?>> client, int shard, RedisCommand<?> command) throws Exception {
        CompletableFuture<Object> out = new CompletableFuture<>();
        EventLoop loop = client.loop();
        loop.execute(() -> client.send(shard, command, new ReplyListener() {
            @Override
            public void onReply(int tag, Object reply) {
                if (!loop.inEventLoop()) {
                    out.completeExceptionally(new AssertionError("reply off the loop"));
                }
                out.complete(reply == null ? "(nil)" : reply);
            }

            @Override
            public void onFailure(int tag, ShardException cause) {
                out.completeExceptionally(cause);
            }
        }, 7));
        try {
            return out.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    @Test
    void everyTypedHelperRoundTripsThroughTheLoopClient() throws Exception {
        LoopClient<RedisCommand<?>> c = driver.openOn(loops.loops().get(0));
        try {
            assertEquals("OK", onLoop(c, 0, R.set("user:1:name", "ada")));
            assertEquals("ada", onLoop(c, 0, R.get("user:1:name")));
            assertEquals("(nil)", onLoop(c, 0, R.get("user:1:missing")));
            assertEquals(1L, onLoop(c, 1, R.incr("counter")));
            assertEquals(2L, onLoop(c, 1, R.incr("counter")));
            assertEquals(true, onLoop(c, 1, R.expire("counter", 60)));
            assertEquals(2L, onLoop(c, 1, R.sadd("followers:1", "2", "3")));
            assertEquals(Set.of("2", "3"), onLoop(c, 1, R.smembers("followers:1")));
            assertEquals(3L, onLoop(c, 0, R.lpush("timeline:1", "p1", "p2", "p3")));
            assertEquals(List.of("p3", "p2"), onLoop(c, 0, R.lrange("timeline:1", 0, 1)));
            assertEquals(true, onLoop(c, 0, R.hset("post:1", "title", "hello")));
            assertEquals(false, onLoop(c, 0, R.hset("post:1", "title", "hello again")));
            assertEquals("hello again", onLoop(c, 0, R.hget("post:1", "title")));
            assertEquals(Map.of("title", "hello again"), onLoop(c, 0, R.hgetall("post:1")));
            assertEquals(java.util.Arrays.asList("hello again", null), onLoop(c, 0, R.hmget("post:1", "title", "nope")));
            assertEquals(java.util.Arrays.asList("ada", null), onLoop(c, 0, R.mget("user:1:name", "user:1:missing")));
            assertEquals(1L, onLoop(c, 1, R.zadd("scores", 1.5, "a")));
            assertEquals(1L, onLoop(c, 1, R.zadd("scores", 3.0, "b")));
            assertEquals(List.of("a", "b"), onLoop(c, 1, R.zrange("scores", 0, -1)));
            assertEquals(List.of("b", "a"), onLoop(c, 1, R.zrevrange("scores", 0, -1)));
            assertEquals(List.of(new Redis.Scored<>("b", 3.0), new Redis.Scored<>("a", 1.5)),
                    onLoop(c, 1, R.zrevrangeWithScores("scores", 0, -1)));
            assertEquals(List.of(new Redis.Scored<>("a", 1.5)), onLoop(c, 1, R.zrangeWithScores("scores", 0, 0)));
            assertEquals(1L, onLoop(c, 1, R.zadd("scores", Double.POSITIVE_INFINITY, "top")));
            assertEquals(List.of(new Redis.Scored<>("top", Double.POSITIVE_INFINITY)),
                    onLoop(c, 1, R.zrevrangeWithScores("scores", 0, 0)), "inf reads back as Infinity");
            assertEquals(List.of(), onLoop(c, 1, R.zrangeWithScores("no-such-set", 0, -1)));
            assertEquals(1L, onLoop(c, 0, R.<Long>raw(CommandType.EXISTS, IntegerOutput::new, a -> a.addKey("post:1"))));
            assertEquals(2L, onLoop(c, 0, R.del("post:1", "user:1:name")));
            assertEquals("(nil)", onLoop(c, 0, R.get("user:1:name")));
        } finally {
            c.close();
        }
    }

    @Test
    void theCommonCommandFamiliesNeedNoLettuceTypeOverNativeAndLettuceConnections() throws Exception {
        ShardDriver<RedisCommand<?>> nativeDriver = RedisDriver.of(servers.uri() + "?connection=native", SETTINGS);
        try {
            for (ShardDriver<RedisCommand<?>> d : List.of(driver, nativeDriver)) {
                String p = d == nativeDriver ? "n:" : "l:"; // each connection kind its own keys
                LoopClient<RedisCommand<?>> c = d.openOn(loops.loops().get(0));
                try {
                    // strings and counters
                    assertEquals(5L, onLoop(c, 0, R.incrby(p + "views", 5)));
                    assertEquals(2L, onLoop(c, 0, R.incrby(p + "views", -3)));
                    assertEquals(1L, onLoop(c, 0, R.decr(p + "views")));
                    assertEquals(true, onLoop(c, 0, R.setnx(p + "lock", "me")));
                    assertEquals(false, onLoop(c, 0, R.setnx(p + "lock", "you")));
                    assertEquals("me", onLoop(c, 0, R.get(p + "lock")));
                    // keys and times to live
                    assertEquals("OK", onLoop(c, 0, R.setex(p + "session", 100, "s1")));
                    long ttl = (Long) onLoop(c, 0, R.ttl(p + "session"));
                    assertTrue(ttl > 0 && ttl <= 100, "ttl " + ttl);
                    long pttl = (Long) onLoop(c, 0, R.pttl(p + "session"));
                    assertTrue(pttl > 0 && pttl <= 100_000, "pttl " + pttl);
                    assertEquals(true, onLoop(c, 0, R.persist(p + "session")));
                    assertEquals(-1L, onLoop(c, 0, R.ttl(p + "session")));
                    assertEquals(-2L, onLoop(c, 0, R.ttl(p + "none")));
                    // hashes
                    assertEquals(3L, onLoop(c, 0, R.hincrby(p + "cart", "sku-1", 3)));
                    assertEquals(1L, onLoop(c, 0, R.hincrby(p + "cart", "sku-1", -2)));
                    assertEquals(true, onLoop(c, 0, R.hset(p + "cart", "sku-2", "4")));
                    assertEquals(true, onLoop(c, 0, R.hexists(p + "cart", "sku-2")));
                    assertEquals(2L, onLoop(c, 0, R.hlen(p + "cart")));
                    assertEquals(Set.of("sku-1", "sku-2"), Set.copyOf((List<?>) onLoop(c, 0, R.hkeys(p + "cart"))));
                    assertEquals(1L, onLoop(c, 0, R.hdel(p + "cart", "sku-2", "sku-9")));
                    assertEquals(false, onLoop(c, 0, R.hexists(p + "cart", "sku-2")));
                    // sets
                    assertEquals(3L, onLoop(c, 0, R.sadd(p + "tags", "a", "b", "c")));
                    assertEquals(true, onLoop(c, 0, R.sismember(p + "tags", "b")));
                    assertEquals(1L, onLoop(c, 0, R.srem(p + "tags", "b", "z")));
                    assertEquals(false, onLoop(c, 0, R.sismember(p + "tags", "b")));
                    assertEquals(2L, onLoop(c, 0, R.scard(p + "tags")));
                    // sorted sets
                    assertEquals(1L, onLoop(c, 0, R.zadd(p + "rank", 1.0, "x")));
                    assertEquals(1L, onLoop(c, 0, R.zadd(p + "rank", 5.0, "y")));
                    assertEquals(3.5, onLoop(c, 0, R.zincrby(p + "rank", 2.5, "x")));
                    assertEquals(3.5, onLoop(c, 0, R.zscore(p + "rank", "x")));
                    assertEquals("(nil)", onLoop(c, 0, R.zscore(p + "rank", "none")));
                    assertEquals(List.of("x"), onLoop(c, 0, R.zrangebyscore(p + "rank", 3.0, 4.0)));
                    assertEquals(List.of("x", "y"), onLoop(c, 0,
                            R.zrangebyscore(p + "rank", Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY)));
                    assertEquals(2L, onLoop(c, 0, R.zcard(p + "rank")));
                    assertEquals(1L, onLoop(c, 0, R.zrem(p + "rank", "y")));
                    // lists
                    assertEquals(3L, onLoop(c, 0, R.rpush(p + "queue", "1", "2", "3")));
                    assertEquals("1", onLoop(c, 0, R.lpop(p + "queue")));
                    assertEquals("3", onLoop(c, 0, R.rpop(p + "queue")));
                    assertEquals(1L, onLoop(c, 0, R.llen(p + "queue")));
                    assertEquals(3L, onLoop(c, 0, R.rpush(p + "queue", "a", "b")));
                    assertEquals("OK", onLoop(c, 0, R.ltrim(p + "queue", 1, -1)));
                    assertEquals(List.of("a", "b"), onLoop(c, 0, R.lrange(p + "queue", 0, -1)));
                    assertEquals("(nil)", onLoop(c, 0, R.lpop(p + "none")));
                    // SCAN, page by page, until the cursor comes back to 0: every key of the pattern seen
                    for (int i = 0; i < 25; i++) {
                        assertEquals("OK", onLoop(c, 1, R.set(p + "scan:" + i, "v")));
                    }
                    Set<String> seen = new java.util.HashSet<>();
                    String cursor = "0";
                    int pages = 0;
                    do {
                        @SuppressWarnings("unchecked")
                        Redis.ScanPage<String> page = (Redis.ScanPage<String>) onLoop(c, 1, R.scan(cursor, p + "scan:*", 5));
                        seen.addAll(page.keys());
                        cursor = page.cursor();
                        assertTrue(++pages < 1000, "SCAN does not end");
                    } while (!"0".equals(cursor));
                    Set<String> want = new java.util.HashSet<>();
                    for (int i = 0; i < 25; i++) {
                        want.add(p + "scan:" + i);
                    }
                    assertEquals(want, seen);
                } finally {
                    c.close();
                }
            }
        } finally {
            nativeDriver.close();
        }
        assertThrows(IllegalArgumentException.class, () -> R.setex("k", 0, "v"));
        assertThrows(IllegalArgumentException.class, () -> R.scan("0", null, 0));
        assertTrue(new Redis.ScanPage<>("0", List.of()).finished());
    }

    @Test
    void getBufferHandsTheValueOnAsABufferOverNativeAndLettuceConnections() throws Exception {
        byte[] large = new byte[20_000];
        new java.util.Random(7).nextBytes(large);
        large[100] = '\r'; // a CRLF inside the value is data, not framing
        large[101] = '\n';
        Redis<byte[], byte[]> b = Redis.bytes();
        byte[] key = "buf:large".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        ShardDriver<RedisCommand<?>> nativeDriver = RedisDriver.of(servers.uri() + "?connection=native", SETTINGS);
        try {
            for (ShardDriver<RedisCommand<?>> d : List.of(driver, nativeDriver)) {
                boolean isNative = d == nativeDriver;
                LoopClient<RedisCommand<?>> c = d.openOn(loops.loops().get(0));
                try {
                    assertEquals("OK", onLoop(c, 1, b.set(key, large)));
                    assertEquals("OK", onLoop(c, 1, b.set("buf:small".getBytes(), "ada".getBytes())));
                    for (int round = 0; round < 3; round++) { // several replies on one connection stay framed
                        io.netty.buffer.ByteBuf v = (io.netty.buffer.ByteBuf) onLoop(c, 1, b.getBuffer(key));
                        try {
                            assertEquals(large.length, v.readableBytes());
                            assertTrue(java.util.Arrays.equals(large, io.netty.buffer.ByteBufUtil.getBytes(v)),
                                    "the value's bytes, " + (isNative ? "native" : "lettuce"));
                            assertEquals(isNative, v.unwrap() != null,
                                    "native: a slice of the received bytes; lettuce: a buffer of its own");
                        } finally {
                            v.release();
                        }
                        io.netty.buffer.ByteBuf small = (io.netty.buffer.ByteBuf) onLoop(c, 1,
                                b.getBuffer("buf:small".getBytes()));
                        try {
                            assertEquals("ada", small.toString(java.nio.charset.StandardCharsets.US_ASCII));
                        } finally {
                            small.release();
                        }
                    }
                    assertEquals("(nil)", onLoop(c, 1, b.getBuffer("buf:none".getBytes())));
                    assertEquals(1L, onLoop(c, 1, b.sadd("buf:set".getBytes(), "m".getBytes())));
                    ShardException wrong = assertThrows(ShardException.class,
                            () -> onLoop(c, 1, b.getBuffer("buf:set".getBytes())));
                    assertEquals(ShardException.Kind.SHARD_ERROR, wrong.kind());
                    assertTrue(wrong.getMessage().contains("WRONGTYPE"), wrong.getMessage());
                    assertEquals("ada", new String((byte[]) onLoop(c, 1, b.get("buf:small".getBytes())),
                            java.nio.charset.StandardCharsets.US_ASCII), "the connection still in step");
                    assertEquals(3L, onLoop(c, 1, b.del(key, "buf:small".getBytes(), "buf:set".getBytes())));
                } finally {
                    c.close();
                }
            }
        } finally {
            nativeDriver.close();
        }
    }

    @Test
    void oneKeyCommandsBuiltOnceEncodeAsTheirArgumentsWould() {
        io.netty.buffer.ByteBuf pre = io.netty.buffer.Unpooled.buffer();
        io.netty.buffer.ByteBuf generic = io.netty.buffer.Unpooled.buffer();
        try {
            List<String> keys = List.of("k", "", "user:1:name", "naïve-日本", "x".repeat(300), "a\r\nb");
            Redis<byte[], byte[]> b = Redis.bytes();
            for (String key : keys) {
                byte[] kb = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                List<RedisCommand<?>> built = List.of(R.get(key), R.getBuffer(key), R.incr(key), R.smembers(key),
                        R.hgetall(key), b.get(kb), b.getBuffer(kb));
                List<CommandType> types = List.of(CommandType.GET, CommandType.GET, CommandType.INCR,
                        CommandType.SMEMBERS, CommandType.HGETALL, CommandType.GET, CommandType.GET);
                for (int i = 0; i < built.size(); i++) {
                    RedisCommand<?> c = built.get(i);
                    assertTrue(c.encoded() != null, "built once: " + c);
                    boolean bytes = i >= 5;
                    RedisCommand<?> same = bytes
                            ? b.raw(types.get(i), IntegerOutput::new, a -> a.addKey(kb))
                            : R.raw(types.get(i), IntegerOutput::new, a -> a.addKey(key));
                    pre.clear();
                    generic.clear();
                    RespProtocol.INSTANCE.encode(1, 0, c, pre);
                    RespProtocol.INSTANCE.encode(1, 0, same, generic);
                    assertEquals(io.netty.buffer.ByteBufUtil.hexDump(generic), io.netty.buffer.ByteBufUtil.hexDump(pre),
                            types.get(i) + " '" + key + "'");
                }
            }
            assertThrows(NullPointerException.class, () -> R.get(null));
        } finally {
            pre.release();
            generic.release();
        }
    }

    @Test
    void errorReplyFailsTheCallWithTheShardsMessage() throws Exception {
        LoopClient<RedisCommand<?>> c = driver.openOn(loops.loops().get(0));
        try {
            onLoop(c, 0, R.set("plain", "x"));
            ShardException e = assertThrows(ShardException.class, () -> onLoop(c, 0, R.smembers("plain")));
            assertEquals(ShardException.Kind.SHARD_ERROR, e.kind());
            assertTrue(e.getMessage().contains("WRONGTYPE"), e.getMessage());
            ShardException noScript = assertThrows(ShardException.class, () -> onLoop(c, 0,
                    R.evalsha("0000000000000000000000000000000000000000", Redis.ScriptReply.INTEGER, new String[0])));
            assertTrue(noScript.getMessage().contains("NOSCRIPT"), noScript.getMessage());
            assertEquals("x", onLoop(c, 0, R.get("plain")), "the connection is still usable");
        } finally {
            c.close();
        }
    }

    @Test
    void blockingClientRunsTheSameCommandsAndCallAllInParallel() throws Exception {
        try (BlockingClient<RedisCommand<?>> b = driver.openBlocking()) {
            assertEquals("OK", b.call(0, R.set("b:k", "v"), T));
            assertEquals("v", b.call(0, R.get("b:k"), T));
            String sha = (String) b.call(1, R.<String>raw(CommandType.SCRIPT, io.lettuce.core.output.StatusOutput::new,
                    a -> a.add("LOAD").add("return tonumber(ARGV[1]) + 1")), T);
            assertEquals(42L, b.call(1, R.evalsha(sha, Redis.ScriptReply.INTEGER, new String[0], "41"), T));
            assertEquals(42L, b.call(1, R.eval("return tonumber(ARGV[1]) + 1", Redis.ScriptReply.INTEGER, new String[0],
                    "41"), T));
            assertEquals(List.of("b:k", "v"), b.call(0, R.eval("return {KEYS[1], redis.call('GET', KEYS[1])}",
                    Redis.ScriptReply.MULTI, new String[] {"b:k"}), T));
            List<Object> replies = new ArrayList<>(List.of("-", "-"));
            b.callAll(new int[] {0, 1}, List.of(R.get("b:k"), R.incr("b:n")), T, new BlockingClient.Sink() {
                @Override
                public void onReply(int index, Object reply) {
                    replies.set(index, reply);
                }

                @Override
                public void onFailure(int index, ShardException cause) {
                    replies.set(index, cause);
                }
            });
            assertEquals(List.of("v", 1L), replies);
            assertNull(b.call(0, R.get("b:none"), T));
        }
    }
}
