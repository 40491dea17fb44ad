package io.doubleface.services.ycsb;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.ShardException;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.mongo.MongoDriver;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.redis.RedisDriver;
import io.doubleface.redis.RedisServers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each store's record read (Redis, gRPC, MongoDB), through its driver's loop and blocking clients, gives exactly the
 * canonical bytes of {@link Records#writeReply} — wrapping SCANs, a 1,000-record SCAN, a projected
 * SCAN — and a record the store does not hold is a clear error, not wrong bytes.
 */
class RecordStoresTest {

    static final long RECORDS = 100;

    static final List<KvRequest> REQUESTS = List.of(
            KvRequest.readField(0, 0),
            KvRequest.readField(42, 9),
            KvRequest.readRecord(RECORDS - 1),
            KvRequest.readRecord(7),
            KvRequest.scan(95, 10),                          // wraps at RECORDS
            KvRequest.scan(3, 20),                           // the "large" 20 kB reply
            KvRequest.scan(3, KvRequest.MAX_SCAN),           // wraps ten times, ~1 MB
            new KvRequest(KvRequest.Op.SCAN, 98, 4, 5));     // one field of each record, wrapping

    static RedisServers redis;
    static GrpcLeafServer grpc;
    static MongoLeafServer mongo;
    static LoopGroup loops;

    @BeforeAll
    static void start() {
        redis = RedisServers.start(2, 0);
        RedisRecords.load(redis.uri(), RECORDS, n -> { });
        grpc = GrpcLeafServer.builder().shards(2).records((int) RECORDS).start();
        mongo = MongoLeafServer.builder().shards(2).start();
        MongoRecords.load(mongo.uri(), RECORDS, n -> { });
        loops = new LoopGroup("rs-test", 1, Transport.AUTO);
    }

    @AfterAll
    static void stop() {
        loops.close();
        mongo.close();
        grpc.close();
        redis.close();
    }

    static byte[] expected(KvRequest r) {
        ByteBuf b = Unpooled.buffer(Records.replySize(r));
        Records.writeReply(r, RECORDS, b);
        return ByteBufUtil.getBytes(b);
    }

    static List<RecordStore<?>> stores() {
        DriverSettings s = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(10));
        return List.of(new RedisRecords(RedisDriver.of(redis.uri(), s), RECORDS),
                new GrpcRecords(GrpcDriver.of(grpc.addresses(), s)),
                new MongoRecords(MongoDriver.of(mongo.uri(), MongoDriver.Options.DEFAULT.with(s)), RECORDS));
    }

    @Test
    void loopAndBlockingRepliesAreTheCanonicalBytes() throws Exception {
        for (RecordStore<?> store : stores()) {
            String name = store.getClass().getSimpleName();
            try (ShardDriver<?> driver = store.driver()) {
                List<byte[]> viaLoop = readOnLoop(store, REQUESTS);
                try (BlockingClient<?> blocking = store.driver().openBlocking()) {
                    for (int i = 0; i < REQUESTS.size(); i++) {
                        KvRequest r = REQUESTS.get(i);
                        int shard = i % 2;
                        assertArrayEquals(expected(r), viaLoop.get(i), name + " loop " + r);
                        assertArrayEquals(expected(r), bytes(store.canonical(r, callBlocking(blocking, store, shard, r))),
                                name + " blocking " + r);
                    }
                }
            }
        }
    }

    @Test
    void aRecordTheStoreDoesNotHoldIsAClearError() throws Exception {
        // the Redis shards hold keys 0..RECORDS-1 only; a store told it holds more finds the gap
        try (RedisDriver driver = RedisDriver.of(redis.uri(), DriverSettings.DEFAULT)) {
            RedisRecords store = new RedisRecords(driver, RECORDS * 2);
            try (BlockingClient<?> blocking = driver.openBlocking()) {
                for (KvRequest r : List.of(KvRequest.readField(RECORDS + 1, 0), KvRequest.readRecord(RECORDS + 1),
                        KvRequest.scan(RECORDS - 1, 3))) {
                    Object reply = callBlocking(blocking, store, 0, r);
                    IllegalStateException e = assertThrows(IllegalStateException.class, () -> store.canonical(r, reply));
                    assertTrue(e.getMessage().contains("not found") && e.getMessage().contains("load-data"),
                            e.getMessage());
                }
            }
        }
    }

    @Test
    void transportLoopIsTheOpMsgDriverAndOtherUrisStayAsTheyAre() {
        assertEquals("mongodb+loop://127.0.0.1:1-3", RecordStores.loopAlias("mongodb://127.0.0.1:1-3?transport=loop"));
        assertEquals("mongodb://a:1?poolSize=4", RecordStores.loopAlias("mongodb://a:1?poolSize=4"));
        assertEquals("redis://a:1-2", RecordStores.loopAlias("redis://a:1-2"));
        assertThrows(IllegalArgumentException.class,
                () -> RecordStores.loopAlias("mongodb://a:1?transport=loop&poolSize=4"));
        RecordStore<?> store = RecordStores.open("mongodb://127.0.0.1:" + mongo.port(0) + "?transport=loop",
                DriverSettings.DEFAULT, RECORDS);
        try {
            assertTrue(store.driver() instanceof OpMsgDriver, store.driver().toString());
        } finally {
            store.driver().close();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object callBlocking(BlockingClient blocking, RecordStore<?> store, int shard, KvRequest r)
            throws ShardException {
        return blocking.call(shard, store.command(shard, r), TimeUnit.SECONDS.toNanos(10));
    }

    private static byte[] bytes(ByteBuf b) {
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    /** Sends every request from one loop client, canonicalizes each reply on the loop. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static List<byte[]> readOnLoop(RecordStore<?> store, List<KvRequest> requests) throws Exception {
        EventLoop loop = loops.loops().get(0);
        byte[][] out = new byte[requests.size()][];
        String[] errors = new String[requests.size()];
        CountDownLatch done = new CountDownLatch(requests.size());
        LoopClient[] client = new LoopClient[1];
        ReplyListener listener = new ReplyListener() {
            @Override
            public void onReply(int tag, Object value) {
                try {
                    out[tag] = bytes(store.canonical(requests.get(tag), value));
                } catch (RuntimeException e) {
                    errors[tag] = e.toString();
                }
                done.countDown();
            }

            @Override
            public void onFailure(int tag, ShardException cause) {
                errors[tag] = cause.toString();
                done.countDown();
            }
        };
        loop.submit(() -> {
            client[0] = store.driver().openOn(loop);
            for (int i = 0; i < requests.size(); i++) {
                client[0].send(i % 2, store.command(i % 2, requests.get(i)), listener, i);
            }
        }).sync();
        assertTrue(done.await(30, TimeUnit.SECONDS), "replies missing");
        loop.submit(() -> client[0].close()).sync();
        List<byte[]> result = new ArrayList<>();
        for (int i = 0; i < out.length; i++) {
            assertNull(errors[i], "request " + requests.get(i));
            result.add(out[i]);
        }
        assertEquals(requests.size(), result.size());
        return result;
    }
}
