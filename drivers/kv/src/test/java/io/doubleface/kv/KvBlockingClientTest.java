package io.doubleface.kv;

import io.doubleface.testing.Outcomes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.doubleface.kv.TestShards.FakeShard;
import io.doubleface.internal.loop.Threads;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The blocking client against real leaf servers and fake shards, on real sockets. */
class KvBlockingClientTest {

    private static final int RECORDS = 100;
    private static final long GENEROUS = TimeUnit.SECONDS.toNanos(30);

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        closeables.add(c);
        return c;
    }

    private BlockingClient open(KvDriver driver) {
        return closeLater(driver).openBlocking();
    }

    private static byte[] bytes(ByteBuf b) {
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    private static final List<KvRequest> REQUESTS = List.of(
            KvRequest.readField(0, 0),
            KvRequest.readField(42, 9),
            KvRequest.readRecord(RECORDS - 1),
            KvRequest.scan(95, 10),
            KvRequest.scan(3, KvRequest.MAX_SCAN),
            new KvRequest(KvRequest.Op.SCAN, 98, 4, 5));

    @Test
    void callRepliesAreByteIdenticalToRecordsWriteReply() throws Exception {
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(2).records(RECORDS).start());
        BlockingClient client = open(KvDriver.of(leaf.addresses()));
        for (int i = 0; i < REQUESTS.size(); i++) {
            KvRequest r = REQUESTS.get(i);
            assertArrayEquals(TestShards.expected(r, RECORDS), bytes((ByteBuf) client.call(i % 2, r, GENEROUS)), r.toString());
        }
    }

    @Test
    void callAllGivesEveryIndexItsOwnReplyOrFailureExactlyOnce() throws Exception {
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(REQUESTS.size()).records(RECORDS).start());
        BlockingClient client = open(KvDriver.of(leaf.addresses()));
        int n = REQUESTS.size() + 1;
        int[] shards = new int[n];
        KvRequest[] requests = new KvRequest[n];
        for (int i = 0; i < REQUESTS.size(); i++) {
            shards[i] = i;
            requests[i] = REQUESTS.get(i);
        }
        shards[n - 1] = 0;
        requests[n - 1] = KvRequest.readRecord(RECORDS + 1); // not found
        byte[][] replies = new byte[n][];
        ShardException[] failures = new ShardException[n];
        int[] outcomes = new int[n];
        Thread caller = Thread.currentThread();
        client.callAll(shards, java.util.Arrays.asList(requests), GENEROUS, new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object value) {
                ByteBuf reply = (ByteBuf) value;
                assertEquals(caller, Thread.currentThread());
                outcomes[index]++;
                replies[index] = bytes(reply);
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                assertEquals(caller, Thread.currentThread());
                outcomes[index]++;
                failures[index] = cause;
            }
        });
        for (int i = 0; i < n; i++) {
            assertEquals(1, outcomes[i], "outcomes of index " + i);
        }
        for (int i = 0; i < REQUESTS.size(); i++) {
            assertArrayEquals(TestShards.expected(requests[i], RECORDS), replies[i], requests[i].toString());
        }
        assertNotNull(failures[n - 1]);
        assertEquals(Kind.SHARD_ERROR, failures[n - 1].kind());
    }

    @Test
    void sequentialCallsReuseOnePooledConnectionPerShard() throws Exception {
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(2).records(RECORDS).start());
        KvBlockingClient client = (KvBlockingClient) open(KvDriver.of(leaf.addresses()));
        for (int i = 0; i < 50; i++) {
            assertArrayEquals(TestShards.expected(KvRequest.readField(i, i % 10), RECORDS),
                    bytes(client.call(i % 2, KvRequest.readField(i, i % 10), GENEROUS)));
        }
        assertEquals(1, client.idleConnections(0));
        assertEquals(1, client.idleConnections(1));
    }

    @Test
    void keyBeyondTheRecordsFailsWithShardErrorAndTheConnectionIsReused() throws Exception {
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(1).records(RECORDS).start());
        BlockingClient client = open(KvDriver.of(leaf.addresses()));
        ShardException e = assertThrows(ShardException.class,
                () -> client.call(0, KvRequest.readRecord(RECORDS), GENEROUS));
        assertEquals(Kind.SHARD_ERROR, e.kind());
        assertTrue(e.getMessage().contains("NOT_FOUND"), e.getMessage());
        assertArrayEquals(TestShards.expected(KvRequest.readRecord(3), RECORDS),
                bytes((ByteBuf) client.call(0, KvRequest.readRecord(3), GENEROUS)));
    }

    @Test
    void manyThreadsCallAtOnceEachGettingItsOwnReply() throws Exception {
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(4).records(RECORDS).start());
        BlockingClient client = open(KvDriver.of(leaf.addresses()));
        ExecutorService pool = Executors.newFixedThreadPool(16, Threads.platform("kv-callers"));
        closeLater(pool::shutdownNow);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int seed = t;
            done.add(pool.submit(() -> {
                for (int i = 0; i < 200; i++) {
                    KvRequest r = KvRequest.readField((seed * 31L + i) % RECORDS, i % 10);
                    assertArrayEquals(TestShards.expected(r, RECORDS), bytes((ByteBuf) client.call(i % 4, r, GENEROUS)));
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(Outcomes.HANG_SECONDS, TimeUnit.SECONDS);
        }
    }

    @Test
    void shardThatNeverAnswersFailsTheCallWithTimeout() throws Exception {
        FakeShard shard = closeLater(FakeShard.silent());
        BlockingClient client = open(KvDriver.of(List.of(shard.address())));
        long timeout = TimeUnit.MILLISECONDS.toNanos(200);
        long start = System.nanoTime();
        ShardException e = assertThrows(ShardException.class, () -> client.call(0, KvRequest.readRecord(1), timeout));
        assertEquals(Kind.TIMEOUT, e.kind(), e.getMessage());
        assertTrue(System.nanoTime() - start >= timeout);
    }

    @Test
    void callAllReportsTimeoutForTheSilentShardAndRepliesForTheOthers() throws Exception {
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(1).records(RECORDS).start());
        FakeShard silent = closeLater(FakeShard.silent());
        BlockingClient client = open(KvDriver.of(List.of(silent.address(), leaf.addresses().get(0))));
        KvRequest[] requests = {KvRequest.readRecord(1), KvRequest.readRecord(2)};
        Object[] outcome = new Object[2];
        client.callAll(new int[] {0, 1}, java.util.Arrays.asList(requests), TimeUnit.MILLISECONDS.toNanos(300), new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object value) {
                ByteBuf reply = (ByteBuf) value;
                outcome[index] = bytes(reply);
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                outcome[index] = cause;
            }
        });
        assertEquals(Kind.TIMEOUT, ((ShardException) outcome[0]).kind());
        assertArrayEquals(TestShards.expected(requests[1], RECORDS), (byte[]) outcome[1]);
    }

    @Test
    void shardDownFailsUnavailableAndAfterItRestartsOnTheSamePortCallsSucceedAgain() throws Exception {
        KvLeafServer leaf = KvLeafServer.builder().shards(1).records(RECORDS).start();
        int port = leaf.port(0);
        BlockingClient client = open(KvDriver.of(leaf.addresses(),
                KvDriver.Options.DEFAULT.withConnectTimeout(Duration.ofSeconds(5))));
        bytes((ByteBuf) client.call(0, KvRequest.readRecord(1), GENEROUS)); // a pooled connection now exists
        leaf.close();
        ShardException e = assertThrows(ShardException.class, () -> client.call(0, KvRequest.readRecord(1), GENEROUS));
        assertEquals(Kind.UNAVAILABLE, e.kind(), e.getMessage());
        closeLater(KvLeafServer.builder().shards(1).basePort(port).records(RECORDS).start());
        assertArrayEquals(TestShards.expected(KvRequest.readRecord(4), RECORDS),
                bytes((ByteBuf) client.call(0, KvRequest.readRecord(4), GENEROUS)));
    }

    @Test
    void pooledConnectionToARestartedShardIsReplacedWithoutFailingTheCall() throws Exception {
        KvLeafServer leaf = KvLeafServer.builder().shards(1).records(RECORDS).start();
        int port = leaf.port(0);
        BlockingClient client = open(KvDriver.of(leaf.addresses()));
        bytes((ByteBuf) client.call(0, KvRequest.readRecord(1), GENEROUS));
        leaf.close();
        closeLater(KvLeafServer.builder().shards(1).basePort(port).records(RECORDS).start());
        assertArrayEquals(TestShards.expected(KvRequest.readRecord(6), RECORDS),
                bytes((ByteBuf) client.call(0, KvRequest.readRecord(6), GENEROUS)));
    }

    @Test
    void closeUnblocksACallWaitingForAReplyWithClosed() throws Exception {
        FakeShard shard = closeLater(FakeShard.silent());
        BlockingClient client = open(KvDriver.of(List.of(shard.address())));
        ExecutorService pool = Executors.newSingleThreadExecutor(Threads.platform("kv-caller"));
        closeLater(pool::shutdownNow);
        Future<ShardException> call = pool.submit(() -> assertThrows(ShardException.class,
                () -> client.call(0, KvRequest.readRecord(1), GENEROUS)));
        while (shard.accepted().isEmpty()) {
            Thread.sleep(5); // hang-protected by the get below only after; the accept comes at once
        }
        client.close();
        assertEquals(Kind.CLOSED, call.get(Outcomes.HANG_SECONDS, TimeUnit.SECONDS).kind());
        ShardException after = assertThrows(ShardException.class, () -> client.call(0, KvRequest.readRecord(1), GENEROUS));
        assertEquals(Kind.CLOSED, after.kind());
    }
}
