package io.doubleface.mongo;

import io.doubleface.testing.Outcomes;
import io.doubleface.testing.StallingProxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.ShardRequest;
import io.doubleface.data.Records;
import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ShardException;
import io.doubleface.loop.LoopGroup;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The loop client against real mongo-java-server shards over loopback. */
class MongoLoopClientTest {

    static final int RECORDS = 200;
    static MongoLeafServer leaf;
    static LoopGroup loops;

    @BeforeAll
    static void start() {
        leaf = MongoLeafServer.builder().shards(3).records(RECORDS).start();
        loops = new LoopGroup("mt", 1, LoopGroup.Transport.AUTO);
    }

    @AfterAll
    static void stop() {
        loops.close();
        leaf.close();
    }

    static MongoDriver.Options options() {
        return MongoDriver.Options.DEFAULT.withRecords(RECORDS).withCallTimeout(Duration.ofSeconds(10))
                .withConnectTimeout(Duration.ofSeconds(5));
    }

    static byte[] expected(ShardRequest r) {
        ByteBuf b = Unpooled.buffer(Records.replySize(r));
        try {
            Records.writeReply(r, RECORDS, b);
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    static EventLoop loop() {
        return loops.loops().get(0);
    }

    /** Runs {@code sends} on the loop, then waits for every outcome. */
    static Outcomes run(LoopClient c, int n, Consumer<Outcomes> sends) throws Exception {
        Outcomes o = new Outcomes(c.loop(), n);
        c.loop().submit(() -> sends.accept(o)).sync();
        return o.await();
    }

    static final List<ShardRequest> REQUESTS = List.of(
            ShardRequest.readField(7, 3), ShardRequest.readRecord(0), ShardRequest.readRecord(RECORDS - 1),
            ShardRequest.scan(RECORDS - 5, 10), ShardRequest.scan(3, 20), ShardRequest.scan(150, 1000),
            new ShardRequest(ShardRequest.Op.SCAN, 11, 9, 4));

    @ParameterizedTest
    @EnumSource(MongoDriver.Transport.class)
    void repliesAreTheCanonicalBytesOverEveryTransport(MongoDriver.Transport transport) throws Exception {
        try (MongoDriver d = new MongoDriver(MongoDriver.parse(leaf.uri()).shards(), options().withTransport(transport))) {
            LoopClient c = d.openOn(loop());
            int n = REQUESTS.size() * 3;
            Outcomes o = run(c, n, out -> {
                for (int i = 0; i < n; i++) {
                    c.send(i % 3, REQUESTS.get(i / 3), out, i);
                }
            });
            for (int i = 0; i < n; i++) {
                assertArrayEquals(expected(REQUESTS.get(i / 3)), o.reply(i), REQUESTS.get(i / 3) + " on shard " + i % 3);
            }
            if (!(c instanceof MongoLoopClient m)) {
                return; // transport=loop: OpMsgLoopClient, every completion on the loop (Outcomes checks)
            }
            MongoLoopClient.Stats s = m.stats();
            assertEquals(n, s.onLoop() + s.hopped() + s.inSend(), "every completion counted once: " + s);
            if (transport != MongoDriver.Transport.NETTY) {
                assertEquals(n, s.hopped(), "AIO completes on its own threads: " + s);
            }
        }
    }

    /**
     * Records where the driver's work happens on the request path. With Netty on our loop, the
     * replies are read on the loop; but every command is written from the pool's AsyncGetter
     * thread (connection checkout), which docs/mongo.md documents as the driver's hop.
     */
    @Test
    void recordsOnWhichThreadsTheDriverCompletesAndSends() throws Exception {
        try (MongoDriver d = new MongoDriver(MongoDriver.parse(leaf.uri()).shards(), options())) {
            LoopClient c = d.openOn(loop());
            int n = 60;
            run(c, n, out -> {
                for (int i = 0; i < n; i++) {
                    c.send(i % 3, ShardRequest.readField(i, i % 10), out, i);
                }
            }).reply(0);
            MongoLoopClient.Stats s = ((MongoLoopClient) c).stats();
            System.out.println("mongo netty-on-loop stats: " + s);
            assertEquals(n, s.onLoop() + s.hopped() + s.inSend(), s.toString());
            assertEquals(n, s.sentOnLoop() + s.sentOffLoop(), s.toString());
            assertTrue(s.onLoop() > 0, "with Netty on the loop, replies complete on the loop: " + s);
            assertTrue(s.sentOffLoop() > 0 && s.offLoopThreads().keySet().stream().anyMatch(t -> t.startsWith("AsyncGetter")),
                    "commands are written from the pool's AsyncGetter thread: " + s);
            assertEquals(List.of(s), d.stats());
        }
    }

    @Test
    void missingKeyIsAShardError() throws Exception {
        try (MongoDriver d = new MongoDriver(MongoDriver.parse(leaf.uri()).shards(), options())) {
            LoopClient c = d.openOn(loop());
            Outcomes o = run(c, 2, out -> {
                c.send(0, ShardRequest.readField(RECORDS + 5, 0), out, 0);
                c.send(1, ShardRequest.readField(5, 0), out, 1);
            });
            o.assertFailed(0, ShardException.Kind.SHARD_ERROR);
            assertArrayEquals(expected(ShardRequest.readField(5, 0)), o.reply(1));
        }
    }

    @Test
    void callsBeyondMaxOutstandingAreOverloaded() throws Exception {
        try (MongoDriver d = new MongoDriver(MongoDriver.parse(leaf.uri()).shards(), options().withMaxOutstanding(2))) {
            LoopClient c = d.openOn(loop());
            Outcomes o = run(c, 6, out -> {
                for (int i = 0; i < 5; i++) {
                    c.send(0, ShardRequest.readRecord(i), out, i);
                }
                c.send(1, ShardRequest.readRecord(9), out, 5); // another shard has its own bound
            });
            o.reply(0);
            o.reply(1);
            for (int i = 2; i < 5; i++) {
                o.assertFailed(i, ShardException.Kind.OVERLOADED);
            }
            o.reply(5);
        }
    }

    @Test
    void shardThatStopsAnsweringTimesOutAndCloseFailsTheRest() throws Exception {
        try (StallingProxy proxy = new StallingProxy(leaf.addresses().get(0));
                MongoDriver d = new MongoDriver(MongoDriver.parse("mongodb://127.0.0.1:" + proxy.port()).shards(),
                        options().withCallTimeout(Duration.ofMillis(300)))) {
            LoopClient c = d.openOn(loop());
            warmUp(c, 0);
            proxy.stall(true);
            Outcomes o = run(c, 2, out -> {
                c.send(0, ShardRequest.readRecord(2), out, 0);
                c.send(0, ShardRequest.scan(2, 20), out, 1);
            });
            o.assertFailed(0, ShardException.Kind.TIMEOUT);
            o.assertFailed(1, ShardException.Kind.TIMEOUT);

            // calls outstanding at close fail with CLOSED
            MongoDriver d2 = new MongoDriver(MongoDriver.parse("mongodb://127.0.0.1:" + proxy.port()).shards(),
                    options().withCallTimeout(Duration.ofSeconds(30)));
            LoopClient c2 = d2.openOn(loop());
            Outcomes closing = new Outcomes(loop(), 3);
            loop().submit(() -> {
                for (int i = 0; i < 3; i++) {
                    c2.send(0, ShardRequest.readRecord(i), closing, i);
                }
            }).sync();
            Thread.sleep(100);
            d2.close();
            closing.await();
            for (int i = 0; i < 3; i++) {
                closing.assertFailed(i, ShardException.Kind.CLOSED);
            }
            Outcomes after = run(c2, 1, out -> c2.send(0, ShardRequest.readRecord(1), out, 0));
            after.assertFailed(0, ShardException.Kind.CLOSED);
        }
    }

    @Test
    void stoppedShardIsUnavailableAndUsedAgainWhenItReturns() throws Exception {
        try (MongoLeafServer own = MongoLeafServer.builder().shards(2).records(RECORDS).start();
                MongoDriver d = new MongoDriver(MongoDriver.parse(own.uri()).shards(),
                        options().withConnectTimeout(Duration.ofMillis(500)).withHeartbeat(Duration.ofMillis(500)))) {
            LoopClient c = d.openOn(loop());
            run(c, 2, out -> {
                c.send(0, ShardRequest.readRecord(1), out, 0);
                c.send(1, ShardRequest.readRecord(1), out, 1);
            }).reply(1);
            own.stop(1);
            for (int round = 0; round < 5; round++) {
                Outcomes o = run(c, 2, out -> {
                    c.send(0, ShardRequest.readRecord(2), out, 0);
                    c.send(1, ShardRequest.readRecord(2), out, 1);
                });
                assertArrayEquals(expected(ShardRequest.readRecord(2)), o.reply(0));
                o.assertFailed(1, ShardException.Kind.UNAVAILABLE);
            }
            own.restart(1);
            boolean ok = false;
            for (int attempt = 0; attempt < 100 && !ok; attempt++) {
                Outcomes o = run(c, 1, out -> c.send(1, ShardRequest.scan(3, 5), out, 0));
                if (o.replied(0)) {
                    assertArrayEquals(expected(ShardRequest.scan(3, 5)), o.reply(0));
                    ok = true;
                } else {
                    o.assertFailed(0, ShardException.Kind.UNAVAILABLE);
                    Thread.sleep(100);
                }
            }
            assertTrue(ok, "the shard was not used again after it came back");
        }
    }

    @Test
    void closingTheDriverStopsItsThreads() throws Exception {
        long before = driverThreads();
        MongoDriver d = new MongoDriver(MongoDriver.parse(leaf.uri()).shards(), options());
        LoopClient c = d.openOn(loop());
        run(c, 3, out -> {
            for (int i = 0; i < 3; i++) {
                c.send(i, ShardRequest.readRecord(i), out, i);
            }
        }).reply(2);
        assertTrue(driverThreads() > before, "the driver started threads");
        d.close();
        long guard = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (driverThreads() > before && System.nanoTime() - guard < 0) {
            Thread.sleep(20);
        }
        assertEquals(before, driverThreads(), "threads left: " + threadNames());
    }

    /** Calls {@code shard} until it answers (the first calls also connect, and may take longer than a short timeout). */
    static void warmUp(LoopClient c, int shard) throws Exception {
        for (int attempt = 0; attempt < 50; attempt++) {
            if (run(c, 1, out -> c.send(shard, ShardRequest.readRecord(1), out, 0)).replied(0)) {
                return;
            }
        }
        throw new AssertionError("shard " + shard + " never answered");
    }

    static long driverThreads() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith("AsyncGetter") || n.startsWith("cluster-")).count();
    }

    static List<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).sorted().toList();
    }

    @Test
    void sendFromAnotherThreadIsRefused() {
        try (MongoDriver d = new MongoDriver(MongoDriver.parse(leaf.uri()).shards(), options())) {
            LoopClient c = d.openOn(loop());
            org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> c.send(0, ShardRequest.readRecord(0), new Outcomes(loop(), 1), 0));
        }
    }


}
