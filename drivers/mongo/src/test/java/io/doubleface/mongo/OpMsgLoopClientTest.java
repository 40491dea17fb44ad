package io.doubleface.mongo;

import io.doubleface.testing.Outcomes;
import io.doubleface.testing.StallingProxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.ShardRequest;
import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ShardException;
import io.doubleface.loop.LoopGroup;
import io.netty.channel.EventLoop;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The per-loop OP_MSG client ({@code mongodb+loop://}) against real mongo-java-server shards: the
 * canonical bytes, every completion on the loop with no driver thread at all, and the failure
 * kinds.
 */
class OpMsgLoopClientTest {

    static final int RECORDS = MongoLoopClientTest.RECORDS;
    static MongoLeafServer leaf;
    static LoopGroup loops;

    @BeforeAll
    static void start() {
        leaf = MongoLeafServer.builder().shards(3).records(RECORDS).start();
        loops = new LoopGroup("op", 1, LoopGroup.Transport.AUTO);
    }

    @AfterAll
    static void stop() {
        loops.close();
        leaf.close();
    }

    static EventLoop loop() {
        return loops.loops().get(0);
    }

    static MongoDriver open(String uri, MongoDriver.Options o) {
        return MongoDriver.open(uri.replace("mongodb://", "mongodb+loop://"), o);
    }

    @Test
    void repliesAreTheCanonicalBytesOnTheLoopWithoutDriverThreads() throws Exception {
        long before = MongoLoopClientTest.driverThreads();
        try (MongoDriver d = open(leaf.uri(), MongoLoopClientTest.options())) {
            assertEquals(MongoDriver.Transport.LOOP, d.options().transport());
            LoopClient c = d.openOn(loop());
            assertTrue(c instanceof OpMsgLoopClient, c.toString());
            int n = MongoLoopClientTest.REQUESTS.size() * 3;
            for (int round = 0; round < 3; round++) {
                Outcomes o = MongoLoopClientTest.run(c, n, out -> {
                    for (int i = 0; i < n; i++) {
                        c.send(i % 3, MongoLoopClientTest.REQUESTS.get(i / 3), out, i);
                    }
                });
                for (int i = 0; i < n; i++) {
                    ShardRequest r = MongoLoopClientTest.REQUESTS.get(i / 3);
                    assertArrayEquals(MongoLoopClientTest.expected(r), o.reply(i), r + " on shard " + i % 3);
                }
            }
            assertEquals(before, MongoLoopClientTest.driverThreads(), "no AsyncGetter or monitor threads: "
                    + MongoLoopClientTest.threadNames());
            Outcomes missing = MongoLoopClientTest.run(c, 1, out -> c.send(0, ShardRequest.readRecord(RECORDS + 1), out, 0));
            missing.assertFailed(0, ShardException.Kind.SHARD_ERROR);
        }
    }

    @Test
    void stoppedShardIsUnavailableAndUsedAgainWhenItReturns() throws Exception {
        try (MongoLeafServer own = MongoLeafServer.builder().shards(2).records(RECORDS).start();
                MongoDriver d = open(own.uri(), MongoLoopClientTest.options())) {
            LoopClient c = d.openOn(loop());
            MongoLoopClientTest.run(c, 1, out -> c.send(1, ShardRequest.readRecord(1), out, 0)).reply(0);
            own.stop(1);
            for (int round = 0; round < 3; round++) {
                Outcomes o = MongoLoopClientTest.run(c, 2, out -> {
                    c.send(0, ShardRequest.readRecord(2), out, 0);
                    c.send(1, ShardRequest.readRecord(2), out, 1);
                });
                o.reply(0);
                o.assertFailed(1, ShardException.Kind.UNAVAILABLE);
            }
            own.restart(1);
            boolean ok = false;
            for (int attempt = 0; attempt < 100 && !ok; attempt++) {
                Outcomes o = MongoLoopClientTest.run(c, 1, out -> c.send(1, ShardRequest.scan(3, 5), out, 0));
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
                MongoDriver d = open("mongodb://127.0.0.1:" + proxy.port(), MongoLoopClientTest.options()
                        .withCallTimeout(Duration.ofMillis(300)).withMaxOutstanding(2))) {
            LoopClient c = d.openOn(loop());
            MongoLoopClientTest.warmUp(c, 0);
            proxy.stall(true);
            Outcomes o = MongoLoopClientTest.run(c, 3, out -> {
                for (int i = 0; i < 3; i++) {
                    c.send(0, ShardRequest.readRecord(i), out, i);
                }
            });
            o.assertFailed(0, ShardException.Kind.TIMEOUT);
            o.assertFailed(1, ShardException.Kind.TIMEOUT);
            o.assertFailed(2, ShardException.Kind.OVERLOADED);

            Outcomes closing = new Outcomes(loop(), 1);
            loop().submit(() -> c.send(0, ShardRequest.readRecord(5), closing, 0)).sync();
            d.close();
            closing.await().assertFailed(0, ShardException.Kind.CLOSED);
        }
    }

    @Test
    void loopSchemeTakesOnlyTheShortForms() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> MongoDriver.parse("mongodb+loop://a:1/?replicaSet=rs"));
        assertEquals("loop", MongoDriver.parse("mongodb+loop://a:1-3").options().get("transport"));
        assertEquals(3, MongoDriver.parse("mongodb+loop://a:1-3").shards().size());
    }
}
