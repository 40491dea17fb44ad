package io.doubleface.services.ycsb;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.ShardException;
import io.doubleface.kv.KvRequest;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.testing.Outcomes;
import io.doubleface.testing.StallingProxy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The YCSB record read over our own OP_MSG client ({@code mongodb+loop://}, {@link OpMsgDriver})
 * against real mongo-java-server shards: the canonical bytes on the loop with no driver thread,
 * the blocking face on the official driver, and the failure kinds.
 */
class OpMsgDriverTest {

    static final long RECORDS = RecordStoresTest.RECORDS;
    static final DriverSettings SETTINGS = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(10))
            .withConnectTimeout(Duration.ofSeconds(5));
    static MongoLeafServer leaf;
    static LoopGroup loops;

    @BeforeAll
    static void start() {
        leaf = MongoLeafServer.builder().shards(3).start();
        MongoRecords.load(leaf.uri(), RECORDS, n -> { });
        loops = new LoopGroup("op", 1, Transport.AUTO);
    }

    @AfterAll
    static void stop() {
        loops.close();
        leaf.close();
    }

    static EventLoop loop() {
        return loops.loops().get(0);
    }

    static String loopUri(MongoLeafServer l) {
        return l.uri().replace("mongodb://", "mongodb+loop://");
    }

    static Outcomes run(int n, Consumer<Outcomes> sends) throws Exception {
        Outcomes o = new Outcomes(loop(), n);
        loop().submit(() -> sends.accept(o)).sync();
        return o.await();
    }

    static long driverThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().contains("AsyncGetter") || t.getName().startsWith("cluster-"))
                .count();
    }

    @Test
    void repliesAreTheCanonicalBytesOnTheLoopWithoutDriverThreads() throws Exception {
        long before = driverThreads();
        try (OpMsgDriver d = new OpMsgDriver(loopUri(leaf), SETTINGS, RECORDS)) {
            LoopClient<KvRequest> c = d.openOn(loop());
            List<KvRequest> requests = RecordStoresTest.REQUESTS;
            int n = requests.size() * 3;
            for (int round = 0; round < 3; round++) {
                Outcomes o = run(n, out -> {
                    for (int i = 0; i < n; i++) {
                        c.send(i % 3, requests.get(i / 3), out, i);
                    }
                });
                for (int i = 0; i < n; i++) {
                    KvRequest r = requests.get(i / 3);
                    assertArrayEquals(RecordStoresTest.expected(r), o.reply(i), r + " on shard " + i % 3);
                }
            }
            assertEquals(before, driverThreads(), "no AsyncGetter or monitor threads");
            run(1, out -> c.send(0, KvRequest.readRecord(RECORDS + 1), out, 0))
                    .assertFailed(0, ShardException.Kind.SHARD_ERROR);
        }
    }

    @Test
    void theBlockingFaceGivesTheSameBytesThroughTheOfficialDriver() throws Exception {
        try (OpMsgDriver d = new OpMsgDriver(loopUri(leaf), SETTINGS, RECORDS);
                BlockingClient<KvRequest> b = d.openBlocking()) {
            for (KvRequest r : RecordStoresTest.REQUESTS) {
                ByteBuf reply = (ByteBuf) b.call(1, r, TimeUnit.SECONDS.toNanos(10));
                try {
                    assertArrayEquals(RecordStoresTest.expected(r), ByteBufUtil.getBytes(reply), r.toString());
                } finally {
                    reply.release();
                }
            }
            ShardException e = assertThrows(ShardException.class,
                    () -> b.call(0, KvRequest.readRecord(RECORDS + 1), TimeUnit.SECONDS.toNanos(10)));
            assertEquals(ShardException.Kind.SHARD_ERROR, e.kind());
        }
    }

    @Test
    void stoppedShardIsUnavailableAndUsedAgainWhenItReturns() throws Exception {
        try (MongoLeafServer own = MongoLeafServer.builder().shards(2).start();
                OpMsgDriver d = new OpMsgDriver(loopUri(own), SETTINGS, RECORDS)) {
            MongoRecords.load(own.uri(), RECORDS, n -> { });
            LoopClient<KvRequest> c = d.openOn(loop());
            run(1, out -> c.send(1, KvRequest.readRecord(1), out, 0)).reply(0);
            own.stop(1);
            for (int round = 0; round < 3; round++) {
                Outcomes o = run(2, out -> {
                    c.send(0, KvRequest.readRecord(2), out, 0);
                    c.send(1, KvRequest.readRecord(2), out, 1);
                });
                o.reply(0);
                o.assertFailed(1, ShardException.Kind.UNAVAILABLE);
            }
            own.restart(1);
            MongoRecords.load("mongodb://" + own.host() + ":" + own.port(1), RECORDS, n -> { });
            boolean ok = false;
            for (int attempt = 0; attempt < 100 && !ok; attempt++) {
                Outcomes o = run(1, out -> c.send(1, KvRequest.scan(3, 5), out, 0));
                ok = o.replied(0);
                if (!ok) {
                    o.assertFailed(0, ShardException.Kind.UNAVAILABLE);
                    Thread.sleep(60);
                }
            }
            assertTrue(ok, "not used again after it came back");
        }
    }

    @Test
    void stalledShardTimesOutOverloadAndCloseFail() throws Exception {
        try (StallingProxy proxy = new StallingProxy(leaf.addresses().get(0));
                OpMsgDriver d = new OpMsgDriver("mongodb+loop://127.0.0.1:" + proxy.port(),
                        SETTINGS.withCallTimeout(Duration.ofMillis(300)).withMaxOutstanding(2), RECORDS)) {
            LoopClient<KvRequest> c = d.openOn(loop());
            run(1, out -> c.send(0, KvRequest.readRecord(0), out, 0)).reply(0);
            proxy.stall(true);
            Outcomes o = run(3, out -> {
                for (int i = 0; i < 3; i++) {
                    c.send(0, KvRequest.readRecord(i), out, i);
                }
            });
            o.assertFailed(0, ShardException.Kind.TIMEOUT);
            o.assertFailed(1, ShardException.Kind.TIMEOUT);
            o.assertFailed(2, ShardException.Kind.OVERLOADED);

            Outcomes closing = new Outcomes(loop(), 1);
            loop().submit(() -> c.send(0, KvRequest.readRecord(5), closing, 0)).sync();
            d.close();
            closing.await().assertFailed(0, ShardException.Kind.CLOSED);
        }
    }

    @Test
    void loopSchemeTakesOnlyTheShortForms() {
        assertThrows(IllegalArgumentException.class,
                () -> new OpMsgDriver("mongodb+loop://a:1/?replicaSet=rs", SETTINGS, RECORDS));
        assertThrows(IllegalArgumentException.class,
                () -> new OpMsgDriver("mongodb+loop://a:1/ycsb", SETTINGS, RECORDS));
        try (OpMsgDriver d = new OpMsgDriver("mongodb+loop://127.0.0.1:1-3", SETTINGS, RECORDS)) {
            assertEquals(3, d.shardCount());
        }
    }
}
