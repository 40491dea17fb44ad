package io.doubleface.mongo;

import io.doubleface.testing.StallingProxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.ShardRequest;
import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.ShardException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The blocking (sync driver) client against real mongo-java-server shards. */
class MongoBlockingClientTest {

    static final int RECORDS = MongoLoopClientTest.RECORDS;
    static final long LONG = TimeUnit.SECONDS.toNanos(10);
    static MongoLeafServer leaf;

    @BeforeAll
    static void start() {
        leaf = MongoLeafServer.builder().shards(3).records(RECORDS).start();
    }

    @AfterAll
    static void stop() {
        leaf.close();
    }

    static byte[] bytes(ByteBuf b) {
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    @Test
    void callReturnsTheCanonicalBytes() throws Exception {
        try (MongoDriver d = new MongoDriver(MongoDriver.parse(leaf.uri()).shards(), MongoLoopClientTest.options());
                BlockingClient c = d.openBlocking()) {
            for (ShardRequest r : MongoLoopClientTest.REQUESTS) {
                assertArrayEquals(MongoLoopClientTest.expected(r), bytes((ByteBuf) c.call(1, r, LONG)), r.toString());
            }
            ShardException e = assertThrows(ShardException.class, () -> c.call(0, ShardRequest.readRecord(RECORDS), LONG));
            assertEquals(ShardException.Kind.SHARD_ERROR, e.kind());
        }
    }

    @Test
    void callAllGivesEveryIndexOneOutcomeOnTheCallingThread() throws Exception {
        try (MongoLeafServer own = MongoLeafServer.builder().shards(3).records(RECORDS).start();
                MongoDriver d = new MongoDriver(MongoDriver.parse(own.uri()).shards(),
                        MongoLoopClientTest.options().withConnectTimeout(Duration.ofMillis(500)));
                BlockingClient c = d.openBlocking()) {
            int n = 9;
            int[] shards = new int[n];
            ShardRequest[] requests = new ShardRequest[n];
            for (int i = 0; i < n; i++) {
                shards[i] = i % 3;
                requests[i] = i % 2 == 0 ? ShardRequest.scan(i * 20L, 20) : ShardRequest.readField(i, i);
            }
            byte[][] replies = new byte[n][];
            ShardException[] failures = new ShardException[n];
            Thread caller = Thread.currentThread();
            BlockingClient.Sink sink = new BlockingClient.Sink() {
                @Override
                public void onReply(int index, Object value) {
                ByteBuf reply = (ByteBuf) value;
                    assertTrue(Thread.currentThread() == caller);
                    assertNull(replies[index]);
                    replies[index] = bytes(reply);
                }

                @Override
                public void onFailure(int index, ShardException cause) {
                    assertTrue(Thread.currentThread() == caller);
                    failures[index] = cause;
                }
            };
            c.callAll(shards, java.util.Arrays.asList(requests), LONG, sink);
            for (int i = 0; i < n; i++) {
                assertNull(failures[i], () -> String.valueOf(failures));
                assertArrayEquals(MongoLoopClientTest.expected(requests[i]), replies[i], requests[i].toString());
            }

            own.stop(2);
            java.util.Arrays.fill(replies, null);
            c.callAll(shards, java.util.Arrays.asList(requests), LONG, sink);
            for (int i = 0; i < n; i++) {
                if (shards[i] == 2) {
                    assertNotNull(failures[i], "index " + i);
                    assertEquals(ShardException.Kind.UNAVAILABLE, failures[i].kind(), failures[i].toString());
                } else {
                    assertArrayEquals(MongoLoopClientTest.expected(requests[i]), replies[i]);
                }
            }
        }
    }

    @Test
    void shardThatStopsAnsweringTimesOut() throws Exception {
        try (StallingProxy proxy = new StallingProxy(leaf.addresses().get(0));
                MongoDriver d = new MongoDriver(MongoDriver.parse("mongodb://127.0.0.1:" + proxy.port()).shards(),
                        MongoLoopClientTest.options());
                BlockingClient c = d.openBlocking()) {
            bytes((ByteBuf) c.call(0, ShardRequest.readRecord(1), LONG));
            proxy.stall(true);
            ShardException e = assertThrows(ShardException.class,
                    () -> c.call(0, ShardRequest.readRecord(2), TimeUnit.MILLISECONDS.toNanos(300)));
            assertEquals(ShardException.Kind.TIMEOUT, e.kind(), e.toString());
        }
    }

    @Test
    void closedClientFailsWithClosed() throws Exception {
        MongoDriver d = new MongoDriver(MongoDriver.parse(leaf.uri()).shards(), MongoLoopClientTest.options());
        BlockingClient c = d.openBlocking();
        bytes((ByteBuf) c.call(0, ShardRequest.readRecord(1), LONG));
        d.close();
        ShardException e = assertThrows(ShardException.class, () -> c.call(0, ShardRequest.readRecord(2), LONG));
        assertEquals(ShardException.Kind.CLOSED, e.kind());
        assertThrows(IllegalStateException.class, d::openBlocking);
    }
}
