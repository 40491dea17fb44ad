package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import io.doubleface.testing.Outcomes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.doubleface.internal.loop.LoopGroup;
import io.grpc.Status;
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

/** The loop client against gRPC test leaves ({@link TestLeaves}) and a silent shard, on real sockets. */
class GrpcLoopClientTest {

    /** Keys each test leaf serves. */
    static final int RECORDS = 100;
    static final DriverSettings GENEROUS = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(30))
            .withConnectTimeout(Duration.ofSeconds(5));

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

    private TestLeaves leaf(int shards, Transport transport) {
        return closeLater(TestLeaves.start(shards, RECORDS, transport));
    }

    private EventLoop clientLoop(Transport transport) {
        return closeLater(new LoopGroup("grpc-test", 1, transport)).loops().get(0);
    }

    private LoopClient<GrpcCall<?, ?>> open(GrpcDriver driver, EventLoop loop) {
        closeLater(driver);
        return driver.openOn(loop);
    }

    /** Runs {@code sends} as one task on the client's loop. */
    private static void onLoop(LoopClient<GrpcCall<?, ?>> client, Consumer<LoopClient<GrpcCall<?, ?>>> sends) {
        client.loop().submit(() -> sends.accept(client)).syncUninterruptibly();
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"AUTO", "NIO"})
    void repliesAreTheReplyMessagesOfTheRightShardAndArriveOnTheLoop(Transport transport)
            throws Exception {
        TestLeaves leaf = leaf(3, transport);
        EventLoop loop = clientLoop(transport);
        GrpcDriver driver = GrpcDriver.of(leaf.addresses(), GENEROUS);
        LoopClient<GrpcCall<?, ?>> client = open(driver, loop);
        int[][] requests = { // {key, reply size}
            {0, 0},                      // an empty message is a reply too
            {42, 9},                     // shorter than its header
            {RECORDS - 1, 100},
            {7, 1000},
            {95, 70_000},                // more than one 16 KB HTTP/2 frame and the 64 KB initial window
            {3, TestLeaves.MAX_SIZE},    // 1 MiB
            {98, 4096}};
        for (int round = 0; round < 2; round++) { // first round connects, second uses the connections
            Outcomes out = new Outcomes(loop, requests.length);
            onLoop(client, c -> {
                for (int i = 0; i < requests.length; i++) {
                    c.send(i % 3, TestLeaves.get(requests[i][0], requests[i][1]), out, i);
                }
            });
            out.await(); // fails on a callback off the loop or a second callback
            for (int i = 0; i < requests.length; i++) {
                TestLeaves.assertReply(out, i, TestLeaves.reply(i % 3, requests[i][0], requests[i][1]));
            }
            assertTrue(((String) out.value(2)).startsWith("s2:k" + (RECORDS - 1) + ":"), String.valueOf(out.value(2)));
        }
        assertEquals(0, driver.offLoopHops(), "callbacks grpc-java delivered off the client's loop");
    }

    @Test
    void thousandConcurrentCallsOnOneChannelAllCompleteWithTheirOwnReply() throws Exception {
        TestLeaves leaf = leaf(1, Transport.AUTO);
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<GrpcCall<?, ?>> client = open(GrpcDriver.of(leaf.addresses(), GENEROUS), loop);
        int n = 1000;
        Outcomes out = new Outcomes(loop, n);
        onLoop(client, c -> {
            for (int i = 0; i < n; i++) {
                c.send(0, TestLeaves.get(i % RECORDS, 20 + i), out, i);
            }
        });
        out.await();
        for (int i = 0; i < n; i++) {
            TestLeaves.assertReply(out, i, TestLeaves.reply(0, i % RECORDS, 20 + i));
        }
    }

    @Test
    void errorStatusesFailWithTheirKindAndTheChannelStaysUsable() throws Exception {
        TestLeaves leaf = leaf(1, Transport.AUTO);
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<GrpcCall<?, ?>> client = open(GrpcDriver.of(leaf.addresses(), GENEROUS), loop);
        Outcomes out = new Outcomes(loop, 5);
        onLoop(client, c -> {
            c.send(0, TestLeaves.get(RECORDS, 10), out, 0);                 // key beyond the records
            c.send(0, TestLeaves.get(5, TestLeaves.MAX_SIZE + 1), out, 1);  // reply too large
            c.send(0, TestLeaves.fail(Status.Code.INTERNAL, "boom"), out, 2);
            c.send(0, TestLeaves.fail(Status.Code.RESOURCE_EXHAUSTED, "busy"), out, 3);
            c.send(0, TestLeaves.get(1, 64), out, 4);
        });
        out.await();
        out.assertFailed(0, Kind.SHARD_ERROR);
        assertTrue(out.failure(0).getMessage().contains("INVALID_ARGUMENT: key: " + RECORDS),
                out.failure(0).getMessage());
        out.assertFailed(1, Kind.SHARD_ERROR);
        assertTrue(out.failure(1).getMessage().contains("INVALID_ARGUMENT: size"), out.failure(1).getMessage());
        out.assertFailed(2, Kind.SHARD_ERROR);
        assertTrue(out.failure(2).getMessage().contains("INTERNAL: boom"), out.failure(2).getMessage());
        out.assertFailed(3, Kind.OVERLOADED);
        TestLeaves.assertReply(out, 4, TestLeaves.reply(0, 1, 64));
        // after the failures completed, the same channel still answers
        Outcomes after = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, TestLeaves.get(2, 300), after, 0));
        TestLeaves.assertReply(after.await(), 0, TestLeaves.reply(0, 2, 300));
    }

    @Test
    void shardThatNeverAnswersFailsTheCallWithTimeoutAfterTheCallTimeout() throws Exception {
        SilentShard shard = closeLater(new SilentShard());
        EventLoop loop = clientLoop(Transport.AUTO);
        Duration timeout = Duration.ofMillis(300);
        LoopClient<GrpcCall<?, ?>> client = open(
                GrpcDriver.of(List.of(shard.address()), GENEROUS.withCallTimeout(timeout)), loop);
        Outcomes out = new Outcomes(loop, 3);
        long start = System.nanoTime();
        onLoop(client, c -> {
            for (int i = 0; i < 3; i++) {
                c.send(0, TestLeaves.get(i, 10), out, i);
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
        TestLeaves leaf = leaf(1, Transport.AUTO);
        int port = leaf.port(0);
        EventLoop loop = clientLoop(Transport.AUTO);
        GrpcDriver driver = GrpcDriver.of(leaf.addresses(), GENEROUS);
        LoopClient<GrpcCall<?, ?>> client = open(driver, loop);
        Outcomes warm = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(0, TestLeaves.get(3, 100), warm, 0));
        TestLeaves.assertReply(warm.await(), 0, TestLeaves.reply(0, 3, 100));
        int n = 500;
        int size = 50_000;
        Outcomes out = new Outcomes(loop, n);
        onLoop(client, c -> {
            for (int i = 0; i < n; i++) {
                c.send(0, TestLeaves.get(i % RECORDS, size), out, i);
            }
        });
        leaf.stop(); // while (some of) the calls are outstanding
        out.await();
        for (int i = 0; i < n; i++) {
            if (out.replied(i)) {
                TestLeaves.assertReply(out, i, TestLeaves.reply(0, i % RECORDS, size));
            } else {
                out.assertFailed(i, Kind.UNAVAILABLE);
            }
        }
        // nothing listens: calls fail fast with UNAVAILABLE, not after the (30 s) call timeout
        Outcomes down = new Outcomes(loop, 1);
        long sent = System.nanoTime();
        onLoop(client, c -> c.send(0, TestLeaves.get(1, 10), down, 0));
        down.await().assertFailed(0, Kind.UNAVAILABLE);
        assertTrue(System.nanoTime() - sent < TimeUnit.SECONDS.toNanos(10), "UNAVAILABLE took "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent) + " ms");
        // the leaf comes back on the same port: the client reconnects (backoff reset on send)
        leaf.restart();
        assertEquals(port, leaf.port(0));
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            Outcomes back = new Outcomes(loop, 1);
            onLoop(client, c -> c.send(0, TestLeaves.get(5, 200), back, 0));
            back.await();
            if (back.replied(0)) {
                TestLeaves.assertReply(back, 0, TestLeaves.reply(0, 5, 200));
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
        EventLoop loop = clientLoop(Transport.AUTO);
        GrpcDriver driver = closeLater(GrpcDriver.of(List.of(shard.address()),
                GENEROUS.withMaxOutstanding(4).withCallTimeout(Duration.ofMinutes(5))));
        LoopClient<GrpcCall<?, ?>> client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 6);
        onLoop(client, c -> {
            for (int i = 0; i < 6; i++) {
                c.send(0, TestLeaves.get(i, 10), out, i);
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
        onLoop(client, c -> c.send(0, TestLeaves.get(1, 10), after, 0));
        after.await().assertFailed(0, Kind.CLOSED);
    }

    @Test
    void driverCloseFailsOutstandingCallsOfItsLoopClientsWithClosed() throws Exception {
        SilentShard shard = closeLater(new SilentShard());
        EventLoop loop = clientLoop(Transport.AUTO);
        GrpcDriver driver = GrpcDriver.of(List.of(shard.address()), GENEROUS.withCallTimeout(Duration.ofMinutes(5)));
        LoopClient<GrpcCall<?, ?>> client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 2);
        onLoop(client, c -> {
            c.send(0, TestLeaves.get(1, 10), out, 0);
            c.send(0, TestLeaves.get(2, 10), out, 1);
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
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<GrpcCall<?, ?>> client = open(GrpcDriver.of(List.of(nowhere), GENEROUS.withMaxOutstanding(1)),
                loop);
        boolean[] insideSend = new boolean[1];
        boolean[] calledInsideSend = new boolean[1];
        int n = 20;
        Outcomes out = new Outcomes(loop, n);
        ReplyListener spy = new ReplyListener() {
            @Override
            public void onReply(int tag, Object value) {
                calledInsideSend[0] |= insideSend[0];
                out.onReply(tag, value);
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
                c.send(0, TestLeaves.get(tag, 10), spy, tag);
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
        TestLeaves leaf = leaf(1, Transport.AUTO);
        LoopClient<GrpcCall<?, ?>> client = open(GrpcDriver.of(leaf.addresses(), GENEROUS),
                clientLoop(Transport.AUTO));
        assertThrows(IllegalStateException.class, () -> client.send(0, TestLeaves.get(1, 10),
                new Outcomes(client.loop(), 1), 0));
    }

    @Test
    void grpcSchemeOpensThroughTheServiceLoader() throws Exception {
        TestLeaves leaf = leaf(3, Transport.AUTO);
        try (ShardDriver<?> d = ShardDrivers.open(leaf.uri(), GENEROUS)) {
            assertEquals(3, d.shardCount());
            assertEquals(leaf.uri(), d.describe());
            assertTrue(d instanceof GrpcDriver);
        }
        try (GrpcDriver d = GrpcDriver.of(leaf.uri(), GENEROUS)) {
            assertEquals(leaf.addresses(), d.shards());
            assertEquals(TestLeaves.reply(2, 4, 50),
                    d.openBlocking().call(2, TestLeaves.get(4, 50), TimeUnit.SECONDS.toNanos(10)));
        }
        assertEquals(List.of(new InetSocketAddress("127.0.0.1", 7401), new InetSocketAddress("127.0.0.1", 7402)),
                GrpcDriver.parse("grpc://127.0.0.1:7401-7402"));
        assertThrows(IllegalArgumentException.class, () -> GrpcDriver.parse("kv://127.0.0.1:7401"));
    }
}
