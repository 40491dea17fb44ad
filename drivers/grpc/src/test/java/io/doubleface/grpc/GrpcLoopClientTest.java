package io.doubleface.grpc;

import io.doubleface.testing.Outcomes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.ShardRequest;
import io.doubleface.data.Records;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ReplyListener;
import io.doubleface.driver.ShardDriver;
import io.doubleface.driver.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.doubleface.loop.LoopGroup;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
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

/** The gRPC leaf and the loop client against it and against a silent shard, on real sockets. */
class GrpcLoopClientTest {

    static final int RECORDS = 100;
    static final DriverSettings GENEROUS = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(30))
            .withConnectTimeout(Duration.ofSeconds(5)).withRecords(RECORDS);

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

    private GrpcLeafServer leaf(int shards, LoopGroup.Transport transport) {
        return closeLater(GrpcLeafServer.builder().shards(shards).records(RECORDS).transport(transport).start());
    }

    private EventLoop clientLoop(LoopGroup.Transport transport) {
        return closeLater(new LoopGroup("grpc-test", 1, transport)).loops().get(0);
    }

    private LoopClient open(GrpcDriver driver, EventLoop loop) {
        closeLater(driver);
        return driver.openOn(loop);
    }

    /** Runs {@code sends} as one task on the client's loop. */
    private static void onLoop(LoopClient client, Consumer<LoopClient> sends) {
        client.loop().submit(() -> sends.accept(client)).syncUninterruptibly();
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

    @ParameterizedTest
    @EnumSource(value = LoopGroup.Transport.class, names = {"AUTO", "NIO"})
    void repliesAreByteIdenticalToRecordsWriteReplyAndArriveOnTheLoop(LoopGroup.Transport transport) throws Exception {
        GrpcLeafServer leaf = leaf(3, transport);
        EventLoop loop = clientLoop(transport);
        GrpcDriver driver = new GrpcDriver(leaf.addresses(), GENEROUS);
        LoopClient client = open(driver, loop);
        List<ShardRequest> requests = List.of(
                ShardRequest.readField(0, 0),
                ShardRequest.readField(42, 9),
                ShardRequest.readRecord(RECORDS - 1),
                ShardRequest.readRecord(7),
                ShardRequest.scan(95, 10),                       // wraps at RECORDS
                ShardRequest.scan(3, ShardRequest.MAX_SCAN),     // wraps ten times, ~1 MB
                new ShardRequest(ShardRequest.Op.SCAN, 98, 4, 5)); // one field of each record, wrapping
        for (int round = 0; round < 2; round++) { // first round connects, second uses the connections
            Outcomes out = new Outcomes(loop, requests.size());
            onLoop(client, c -> {
                for (int i = 0; i < requests.size(); i++) {
                    c.send(i % 3, requests.get(i), out, i);
                }
            });
            out.await(); // fails on a callback off the loop or a second callback
            for (int i = 0; i < requests.size(); i++) {
                assertArrayEquals(expected(requests.get(i)), out.reply(i), requests.get(i).toString());
            }
        }
        assertEquals(0, driver.offLoopHops(), "callbacks grpc-java delivered off the client's loop");
    }

    @Test
    void thousandConcurrentCallsOnOneChannelAllCompleteWithTheirOwnReply() throws Exception {
        GrpcLeafServer leaf = leaf(1, LoopGroup.Transport.AUTO);
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = open(new GrpcDriver(leaf.addresses(), GENEROUS), loop);
        int n = 1000;
        Outcomes out = new Outcomes(loop, n);
        onLoop(client, c -> {
            for (int i = 0; i < n; i++) {
                c.send(0, ShardRequest.readField(i % RECORDS, i % 10), out, i);
            }
        });
        out.await();
        for (int i = 0; i < n; i++) {
            assertArrayEquals(expected(ShardRequest.readField(i % RECORDS, i % 10)), out.reply(i));
        }
    }

    @Test
    void keyBeyondTheRecordsFailsWithShardErrorAndTheChannelStaysUsable() throws Exception {
        GrpcLeafServer leaf = leaf(1, LoopGroup.Transport.AUTO);
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = open(new GrpcDriver(leaf.addresses(), GENEROUS), loop);
        Outcomes out = new Outcomes(loop, 3);
        onLoop(client, c -> {
            c.send(0, ShardRequest.readRecord(RECORDS), out, 0);
            c.send(0, ShardRequest.scan(RECORDS + 5, 2), out, 1);
            c.send(0, ShardRequest.readRecord(1), out, 2);
        });
        out.await();
        out.assertFailed(0, Kind.SHARD_ERROR);
        assertTrue(out.failure(0).getMessage().contains("INVALID_ARGUMENT"), out.failure(0).getMessage());
        out.assertFailed(1, Kind.SHARD_ERROR);
        assertArrayEquals(expected(ShardRequest.readRecord(1)), out.reply(2));
    }

    @Test
    void shardThatNeverAnswersFailsTheCallWithTimeoutAfterTheCallTimeout() throws Exception {
        SilentShard shard = closeLater(new SilentShard());
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        Duration timeout = Duration.ofMillis(300);
        LoopClient client = open(new GrpcDriver(List.of(shard.address()), GENEROUS.withCallTimeout(timeout)), loop);
        Outcomes out = new Outcomes(loop, 3);
        long start = System.nanoTime();
        onLoop(client, c -> {
            for (int i = 0; i < 3; i++) {
                c.send(0, ShardRequest.readRecord(i), out, i);
            }
        });
        out.await();
        long waited = System.nanoTime() - start;
        for (int i = 0; i < 3; i++) {
            out.assertFailed(i, Kind.TIMEOUT);
        }
        assertTrue(waited >= timeout.toNanos() - TimeUnit.MILLISECONDS.toNanos(20),
                "timed out after " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms");
    }

    @Test
    void stoppedLeafFailsCallsUnavailableAndTheClientReconnectsWhenItReturns() throws Exception {
        GrpcLeafServer leaf = GrpcLeafServer.builder().shards(1).records(RECORDS).start();
        int port = leaf.port(0);
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        GrpcDriver driver = new GrpcDriver(leaf.addresses(), GENEROUS);
        LoopClient client = open(driver, loop);
        Outcomes warm = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, ShardRequest.readRecord(3), warm, 0));
        assertArrayEquals(expected(ShardRequest.readRecord(3)), warm.await().reply(0));
        int n = 500;
        Outcomes out = new Outcomes(loop, n);
        onLoop(client, c -> {
            for (int i = 0; i < n; i++) {
                c.send(0, ShardRequest.scan(i % RECORDS, 50), out, i);
            }
        });
        leaf.close(); // while (some of) the calls are outstanding
        out.await();
        for (int i = 0; i < n; i++) {
            if (out.replied(i)) {
                assertArrayEquals(expected(ShardRequest.scan(i % RECORDS, 50)), out.reply(i));
            } else {
                out.assertFailed(i, Kind.UNAVAILABLE);
            }
        }
        // nothing listens: calls fail fast with UNAVAILABLE, not after the (30 s) call timeout
        Outcomes down = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, ShardRequest.readRecord(1), down, 0));
        down.await().assertFailed(0, Kind.UNAVAILABLE);
        // the leaf comes back on the same port: the client reconnects (backoff reset on send)
        closeLater(GrpcLeafServer.builder().shards(1).basePort(port).records(RECORDS).start());
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            Outcomes back = new Outcomes(loop, 1);
            onLoop(client, c -> c.send(0, ShardRequest.readRecord(5), back, 0));
            back.await();
            if (back.replied(0)) {
                assertArrayEquals(expected(ShardRequest.readRecord(5)), back.reply(0));
                break;
            }
            back.assertFailed(0, Kind.UNAVAILABLE);
            assertTrue(System.nanoTime() - giveUp < 0, "no reconnect within 20 s: " + back.failure(0));
            Thread.sleep(50);
        }
    }

    @Test
    void sendsBeyondMaxOutstandingFailOverloadedAndCloseFailsTheRestClosed() throws Exception {
        SilentShard shard = closeLater(new SilentShard());
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        GrpcDriver driver = closeLater(new GrpcDriver(List.of(shard.address()),
                GENEROUS.withMaxOutstanding(4).withCallTimeout(Duration.ofMinutes(5))));
        LoopClient client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 6);
        onLoop(client, c -> {
            for (int i = 0; i < 6; i++) {
                c.send(0, ShardRequest.readRecord(i), out, i);
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
        onLoop(client, c -> c.send(0, ShardRequest.readRecord(1), after, 0));
        after.await().assertFailed(0, Kind.CLOSED);
    }

    @Test
    void driverCloseFailsOutstandingCallsOfItsLoopClientsWithClosed() throws Exception {
        SilentShard shard = closeLater(new SilentShard());
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        GrpcDriver driver = new GrpcDriver(List.of(shard.address()), GENEROUS.withCallTimeout(Duration.ofMinutes(5)));
        LoopClient client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 2);
        onLoop(client, c -> {
            c.send(0, ShardRequest.readRecord(1), out, 0);
            c.send(0, ShardRequest.readRecord(2), out, 1);
        });
        driver.close();
        out.await();
        out.assertFailed(0, Kind.CLOSED);
        out.assertFailed(1, Kind.CLOSED);
        assertThrows(IllegalStateException.class, () -> driver.openOn(loop));
    }

    @Test
    void failuresFoundInsideSendAreDeliveredOnTheLoopAfterSendReturns() throws Exception {
        // nothing listens on the address: with fail-fast calls grpc-java may close the call while
        // it starts, i.e. inside send; the client must defer that callback
        InetSocketAddress nowhere;
        try (SilentShard s = new SilentShard()) {
            nowhere = s.address();
        }
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = open(new GrpcDriver(List.of(nowhere), GENEROUS.withMaxOutstanding(1)), loop);
        boolean[] insideSend = new boolean[1];
        boolean[] calledInsideSend = new boolean[1];
        int n = 20;
        Outcomes out = new Outcomes(loop, n);
        ReplyListener spy = new ReplyListener() {
            @Override
            public void onReply(int tag, Object value) {
                ByteBuf reply = (ByteBuf) value;
                calledInsideSend[0] |= insideSend[0];
                out.onReply(tag, reply);
            }

            @Override
            public void onFailure(int tag, ShardException cause) {
                calledInsideSend[0] |= insideSend[0];
                out.onFailure(tag, cause);
            }
        };
        for (int i = 0; i < n; i++) {
            int tag = i;
            onLoop(client, c -> {
                insideSend[0] = true;
                c.send(0, ShardRequest.readRecord(tag), spy, tag);
                insideSend[0] = false;
            });
            Thread.sleep(5);
        }
        out.await();
        assertFalse(calledInsideSend[0], "a callback ran inside send");
        for (int i = 0; i < n; i++) {
            Kind k = out.kind(i);
            assertTrue(k == Kind.UNAVAILABLE || k == Kind.OVERLOADED, "tag " + i + ": " + k);
        }
    }

    @Test
    void sendFromAnotherThreadIsRejected() {
        GrpcLeafServer leaf = leaf(1, LoopGroup.Transport.AUTO);
        LoopClient client = open(new GrpcDriver(leaf.addresses(), GENEROUS), clientLoop(LoopGroup.Transport.AUTO));
        assertThrows(IllegalStateException.class, () -> client.send(0, ShardRequest.readRecord(1), new Outcomes(
                client.loop(), 1), 0));
    }

    @Test
    void grpcSchemeOpensThroughTheServiceLoader() {
        GrpcLeafServer leaf = leaf(3, LoopGroup.Transport.AUTO);
        try (ShardDriver d = ShardDrivers.open(leaf.uri(), GENEROUS)) {
            assertEquals(3, d.shardCount());
            assertEquals(leaf.uri(), d.describe());
            assertTrue(d instanceof GrpcDriver);
        }
        assertEquals(List.of(new InetSocketAddress("127.0.0.1", 7401), new InetSocketAddress("127.0.0.1", 7402)),
                GrpcDriver.parse("grpc://127.0.0.1:7401-7402"));
        assertThrows(IllegalArgumentException.class, () -> GrpcDriver.parse("kv://127.0.0.1:7401"));
    }
}
