package io.doubleface.kv;

import io.doubleface.driver.Transport;
import io.doubleface.testing.Outcomes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.ShardException.Kind;
import io.doubleface.kv.TestShards.FakeShard;
import io.doubleface.internal.loop.LoopGroup;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The loop client against real leaf servers and fake shards, on real sockets. */
class KvLoopClientTest {

    private static final int RECORDS = 100;

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

    private KvLeafServer leaf(int shards, Transport transport) {
        return closeLater(KvLeafServer.builder().shards(shards).records(RECORDS).transport(transport).start());
    }

    private EventLoop clientLoop(Transport transport) {
        return closeLater(new LoopGroup("kv-test", 1, transport)).loops().get(0);
    }

    private LoopClient open(KvDriver driver, EventLoop loop) {
        closeLater(driver);
        return driver.openOn(loop);
    }

    /** Runs {@code sends} as one task on the client's loop. */
    private static void onLoop(LoopClient client, Consumer<LoopClient> sends) {
        client.loop().submit(() -> sends.accept(client)).syncUninterruptibly();
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"AUTO", "NIO"})
    void repliesAreByteIdenticalToRecordsWriteReply(Transport transport) throws Exception {
        KvLeafServer leaf = leaf(3, transport);
        EventLoop loop = clientLoop(transport);
        LoopClient client = open(KvDriver.of(leaf.addresses()), loop);
        List<KvRequest> requests = List.of(
                KvRequest.readField(0, 0),
                KvRequest.readField(42, 9),
                KvRequest.readRecord(RECORDS - 1),
                KvRequest.readRecord(7),
                KvRequest.scan(95, 10),                       // wraps at RECORDS
                KvRequest.scan(3, KvRequest.MAX_SCAN),     // wraps ten times, ~1 MB
                new KvRequest(KvRequest.Op.SCAN, 98, 4, 5)); // one field of each record, wrapping
        Outcomes out = new Outcomes(loop, requests.size());
        onLoop(client, c -> {
            for (int i = 0; i < requests.size(); i++) {
                c.send(i % 3, requests.get(i), out, i);
            }
        });
        out.await();
        for (int i = 0; i < requests.size(); i++) {
            assertArrayEquals(TestShards.expected(requests.get(i), RECORDS), out.reply(i), requests.get(i).toString());
        }
    }

    @Test
    void aSlowShardAnswersLateAndTheAnswerStillMatchesItsCall() throws Exception {
        // every call to shard 0 answered 300 ms late, shard 1 at once (KvLeafServer.Builder#slowCalls)
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(2).records(RECORDS)
                .slowCalls(0, 1.0, Duration.ofMillis(300)).start());
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient client = open(KvDriver.of(leaf.addresses()), loop);
        Outcomes out = new Outcomes(loop, 2);
        long start = System.nanoTime();
        onLoop(client, c -> {
            c.send(0, KvRequest.readRecord(3), out, 0);
            c.send(1, KvRequest.readRecord(4), out, 1);
        });
        out.await();
        assertArrayEquals(TestShards.expected(KvRequest.readRecord(3), RECORDS), out.reply(0));
        assertArrayEquals(TestShards.expected(KvRequest.readRecord(4), RECORDS), out.reply(1));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300), "shard 0 answered late");
        assertThrows(IllegalArgumentException.class, () -> KvLeafServer.builder().shards(2).slowCalls(2, 0.5,
                Duration.ofMillis(1)).start());
        assertThrows(IllegalArgumentException.class, () -> KvLeafServer.builder().slowCalls(0, 1.5, Duration.ZERO));
    }

    @Test
    void thousandPipelinedCallsOnOneConnectionAllCompleteWithTheirOwnReply() throws Exception {
        KvLeafServer leaf = leaf(1, Transport.AUTO);
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient client = open(KvDriver.of(leaf.addresses()), loop);
        int n = 1000;
        Outcomes out = new Outcomes(loop, n);
        onLoop(client, c -> {
            for (int i = 0; i < n; i++) {
                c.send(0, KvRequest.readField(i % RECORDS, i % 10), out, i);
            }
        });
        out.await();
        for (int i = 0; i < n; i++) {
            assertArrayEquals(TestShards.expected(KvRequest.readField(i % RECORDS, i % 10), RECORDS), out.reply(i));
        }
    }

    @Test
    void twentySendsInOneLoopTaskAreFlushedAtTheEndOfTheIterationAndAllAnswered() throws Exception {
        KvLeafServer leaf = leaf(20, Transport.AUTO);
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient client = open(KvDriver.of(leaf.addresses()), loop);
        // warm up: connections exist, so the next sends go through the end-of-iteration flush
        Outcomes warm = new Outcomes(loop, 20);
        onLoop(client, c -> {
            for (int s = 0; s < 20; s++) {
                c.send(s, KvRequest.readRecord(s), warm, s);
            }
        });
        warm.await();
        Outcomes fanout = new Outcomes(loop, 20);
        Outcomes oneShard = new Outcomes(loop, 20);
        onLoop(client, c -> {
            for (int s = 0; s < 20; s++) {
                c.send(s, KvRequest.readField(s, 3), fanout, s);
                c.send(0, KvRequest.readField(s, 4), oneShard, s);
            }
        });
        fanout.await();
        oneShard.await();
        for (int s = 0; s < 20; s++) {
            assertArrayEquals(TestShards.expected(KvRequest.readField(s, 3), RECORDS), fanout.reply(s));
            assertArrayEquals(TestShards.expected(KvRequest.readField(s, 4), RECORDS), oneShard.reply(s));
        }
    }

    @Test
    void keyBeyondTheRecordsFailsWithShardError() throws Exception {
        KvLeafServer leaf = leaf(1, Transport.AUTO);
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient client = open(KvDriver.of(leaf.addresses()), loop);
        Outcomes out = new Outcomes(loop, 3);
        onLoop(client, c -> {
            c.send(0, KvRequest.readRecord(RECORDS), out, 0);
            c.send(0, KvRequest.scan(RECORDS + 5, 2), out, 1);
            c.send(0, KvRequest.readRecord(1), out, 2); // the connection stays usable
        });
        out.await();
        out.assertFailed(0, Kind.SHARD_ERROR);
        assertTrue(out.failure(0).getMessage().contains("NOT_FOUND"), out.failure(0).getMessage());
        out.assertFailed(1, Kind.SHARD_ERROR);
        assertArrayEquals(TestShards.expected(KvRequest.readRecord(1), RECORDS), out.reply(2));
    }

    @Test
    void callsOutstandingWhenTheShardDropsTheConnectionFailUnavailableAndTheNextSendReconnects() throws Exception {
        FakeShard shard = closeLater(FakeShard.silentOnLowPort());
        EventLoop loop = clientLoop(Transport.AUTO);
        KvDriver driver = KvDriver.of(List.of(shard.address()), KvDriver.Options.DEFAULT
                .withCallTimeout(Duration.ofMinutes(5)).withReconnectBackoff(Duration.ZERO));
        LoopClient client = open(driver, loop);
        Outcomes outstanding = new Outcomes(loop, 10);
        onLoop(client, c -> {
            for (int i = 0; i < 10; i++) {
                c.send(0, KvRequest.readRecord(i), outstanding, i);
            }
        });
        awaitAccepted(shard, 1);
        shard.dropConnections();
        outstanding.await();
        for (int i = 0; i < 10; i++) {
            outstanding.assertFailed(i, Kind.UNAVAILABLE);
        }
        // the shard stops listening: sends fail fast, not after a timeout
        int port = shard.port();
        shard.close();
        Outcomes down = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, KvRequest.readRecord(1), down, 0));
        down.await().assertFailed(0, Kind.UNAVAILABLE);
        // the shard comes back on the same port: the client reconnects
        closeLater(KvLeafServer.builder().shards(1).basePort(port).records(RECORDS).start());
        Outcomes back = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, KvRequest.readRecord(5), back, 0));
        assertArrayEquals(TestShards.expected(KvRequest.readRecord(5), RECORDS), back.await().reply(0));
    }

    @Test
    void leafStoppedMidRunEndsEveryCallOnceAndTheClientRecoversWhenItRestarts() throws Exception {
        KvLeafServer leaf = KvLeafServer.builder().shards(1).records(RECORDS).start();
        int port = leaf.port(0);
        EventLoop loop = clientLoop(Transport.AUTO);
        KvDriver driver = KvDriver.of(leaf.addresses(), KvDriver.Options.DEFAULT
                .withCallTimeout(Duration.ofMinutes(5)).withReconnectBackoff(Duration.ZERO));
        LoopClient client = open(driver, loop);
        int n = 2000;
        Outcomes out = new Outcomes(loop, n);
        onLoop(client, c -> {
            for (int i = 0; i < n; i++) {
                c.send(0, KvRequest.scan(i % RECORDS, 50), out, i);
            }
        });
        leaf.close(); // while (some of) the calls are outstanding
        out.await();
        for (int i = 0; i < n; i++) {
            if (out.replied(i)) {
                assertArrayEquals(TestShards.expected(KvRequest.scan(i % RECORDS, 50), RECORDS), out.reply(i));
            } else {
                out.assertFailed(i, Kind.UNAVAILABLE);
            }
        }
        closeLater(KvLeafServer.builder().shards(1).basePort(port).records(RECORDS).start());
        Outcomes back = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, KvRequest.readField(9, 9), back, 0));
        assertArrayEquals(TestShards.expected(KvRequest.readField(9, 9), RECORDS), back.await().reply(0));
    }

    @Test
    void afterAFailedConnectSendsFailAtOnceDuringTheBackoff() throws Exception {
        FakeShard shard = FakeShard.silentOnLowPort();
        InetSocketAddress address = shard.address();
        shard.close(); // nothing listens there now
        EventLoop loop = clientLoop(Transport.AUTO);
        KvDriver driver = KvDriver.of(List.of(address), KvDriver.Options.DEFAULT.withReconnectBackoff(Duration.ofHours(1)));
        LoopClient client = open(driver, loop);
        Outcomes first = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, KvRequest.readRecord(1), first, 0));
        first.await().assertFailed(0, Kind.UNAVAILABLE);
        Outcomes second = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, KvRequest.readRecord(1), second, 0));
        second.await().assertFailed(0, Kind.UNAVAILABLE);
        assertTrue(second.failure(0).getMessage().contains("backoff"), second.failure(0).getMessage());
    }

    @Test
    void shardThatNeverAnswersFailsTheCallWithTimeoutAfterTheCallTimeout() throws Exception {
        FakeShard shard = closeLater(FakeShard.silent());
        EventLoop loop = clientLoop(Transport.AUTO);
        Duration timeout = Duration.ofMillis(200);
        LoopClient client = open(KvDriver.of(List.of(shard.address()), KvDriver.Options.DEFAULT.withCallTimeout(timeout)), loop);
        Outcomes out = new Outcomes(loop, 3);
        long start = System.nanoTime();
        onLoop(client, c -> {
            for (int i = 0; i < 3; i++) {
                c.send(0, KvRequest.readRecord(i), out, i);
            }
        });
        out.await();
        long waited = System.nanoTime() - start;
        for (int i = 0; i < 3; i++) {
            out.assertFailed(i, Kind.TIMEOUT);
        }
        assertTrue(waited >= timeout.toNanos(), "timed out after " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms");
    }

    @Test
    void replyWithAnUnknownIdIsDroppedAndTheCallStillTimesOut() throws Exception {
        // answers every request with a well-formed OK frame for another id
        FakeShard shard = closeLater(new FakeShard(0, (s, in) -> {
            try {
                byte[] req = in.readNBytes(KvProtocol.REQUEST_FRAME_LENGTH);
                OutputStream o = s.getOutputStream();
                byte[] resp = new byte[4 + 5 + 2];
                KvProtocol.putInt(resp, 0, 5 + 2);
                KvProtocol.putInt(resp, 4, KvProtocol.getInt(req, 4) + 12345);
                o.write(resp);
                o.flush();
                TestShards.FakeShard.drain(in);
            } catch (IOException e) {
                // closed
            }
        }));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient client = open(KvDriver.of(List.of(shard.address()),
                KvDriver.Options.DEFAULT.withCallTimeout(Duration.ofMillis(300))), loop);
        Outcomes out = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, KvRequest.readRecord(1), out, 0));
        out.await().assertFailed(0, Kind.TIMEOUT);
    }

    @Test
    void sendsBeyondMaxOutstandingFailOverloadedAndCloseFailsTheRestClosed() throws Exception {
        FakeShard shard = closeLater(FakeShard.silent());
        EventLoop loop = clientLoop(Transport.AUTO);
        KvDriver driver = closeLater(KvDriver.of(List.of(shard.address()),
                KvDriver.Options.DEFAULT.withMaxOutstanding(4).withCallTimeout(Duration.ofMinutes(5))));
        LoopClient client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 6);
        onLoop(client, c -> {
            for (int i = 0; i < 6; i++) {
                c.send(0, KvRequest.readRecord(i), out, i);
            }
        });
        onLoop(client, LoopClient::close);
        out.await();
        for (int i = 0; i < 4; i++) {
            out.assertFailed(i, Kind.CLOSED);
        }
        out.assertFailed(4, Kind.OVERLOADED);
        out.assertFailed(5, Kind.OVERLOADED);
        Outcomes after = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, KvRequest.readRecord(1), after, 0));
        after.await().assertFailed(0, Kind.CLOSED);
    }

    @Test
    void driverCloseFailsOutstandingCallsOfItsLoopClientsWithClosed() throws Exception {
        FakeShard shard = closeLater(FakeShard.silent());
        EventLoop loop = clientLoop(Transport.AUTO);
        KvDriver driver = KvDriver.of(List.of(shard.address()), KvDriver.Options.DEFAULT.withCallTimeout(Duration.ofMinutes(5)));
        LoopClient client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 2);
        onLoop(client, c -> {
            c.send(0, KvRequest.readRecord(1), out, 0);
            c.send(0, KvRequest.readRecord(2), out, 1);
        });
        driver.close();
        out.await();
        out.assertFailed(0, Kind.CLOSED);
        out.assertFailed(1, Kind.CLOSED);
        assertThrows(IllegalStateException.class, () -> driver.openOn(loop));
    }

    @Test
    void failuresFoundInsideSendAreDeliveredOnTheLoopAfterSendReturns() throws Exception {
        FakeShard shard = closeLater(FakeShard.silent());
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient client = open(KvDriver.of(List.of(shard.address()),
                KvDriver.Options.DEFAULT.withMaxOutstanding(1).withCallTimeout(Duration.ofMinutes(5))), loop);
        boolean[] insideSend = new boolean[1];
        boolean[] calledInsideSend = new boolean[1];
        Outcomes out = new Outcomes(loop, 2) {
            @Override
            public void onFailure(int tag, io.doubleface.driver.ShardException cause) {
                calledInsideSend[0] |= insideSend[0];
                super.onFailure(tag, cause);
            }
        };
        onLoop(client, c -> {
            c.send(0, KvRequest.readRecord(1), out, 0);
            insideSend[0] = true;
            c.send(0, KvRequest.readRecord(2), out, 1); // over the limit of 1
            insideSend[0] = false;
        });
        onLoop(client, LoopClient::close);
        out.await();
        out.assertFailed(1, Kind.OVERLOADED);
        out.assertFailed(0, Kind.CLOSED);
        assertTrue(!calledInsideSend[0], "a failure callback ran inside send");
    }

    @Test
    void sendFromAnotherThreadIsRejected() {
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient client = open(KvDriver.of(List.of(new InetSocketAddress("127.0.0.1", 1))), loop);
        Outcomes out = new Outcomes(loop, 1);
        assertThrows(IllegalStateException.class, () -> client.send(0, KvRequest.readRecord(1), out, 0));
    }

    @Test
    void scanProjectsOneFieldOfEveryRecordAndAFieldOutsideTheRangeIsRejectedBeforeSending() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> new KvRequest(KvRequest.Op.SCAN, 1, 77, 2));
        KvLeafServer leaf = leaf(1, Transport.AUTO);
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient client = open(KvDriver.of(leaf.addresses()), loop);
        Outcomes out = new Outcomes(loop, 2);
        KvRequest projected = new KvRequest(KvRequest.Op.SCAN, 1, 7, 2);
        onLoop(client, c -> {
            c.send(0, projected, out, 0);
            c.send(0, KvRequest.scan(1, 2), out, 1);
        });
        out.await();
        assertArrayEquals(TestShards.expected(projected, RECORDS), out.reply(0));
        assertArrayEquals(TestShards.expected(KvRequest.scan(1, 2), RECORDS), out.reply(1));
    }

    private static void awaitAccepted(FakeShard shard, int n) throws InterruptedException {
        long give = System.nanoTime() + TimeUnit.SECONDS.toNanos(Outcomes.HANG_SECONDS);
        while (shard.accepted().size() < n) {
            assertTrue(System.nanoTime() - give < 0, "fake shard accepted nothing: hang");
            Thread.sleep(5);
        }
        assertEquals(n, shard.accepted().size());
    }
}
