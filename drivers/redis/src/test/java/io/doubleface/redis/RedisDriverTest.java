package io.doubleface.redis;

import io.doubleface.testing.Outcomes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.ShardRequest;
import io.doubleface.data.Records;
import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.LoopClient;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The Redis driver against real redis-server processes on loopback. */
class RedisDriverTest {

    static final int RECORDS = 100;
    static final DriverSettings SETTINGS = DriverSettings.DEFAULT.withRecords(RECORDS)
            .withCallTimeout(Duration.ofSeconds(20)).withConnectTimeout(Duration.ofSeconds(5));

    static RedisServers servers;

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    static void startServers() {
        servers = RedisServers.start(3, 0);
        servers.load(RECORDS);
    }

    @AfterAll
    static void stopServers() {
        if (servers != null) {
            servers.close();
        }
    }

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

    private EventLoop clientLoop(LoopGroup.Transport transport) {
        return closeLater(new LoopGroup("redis-test", 1, transport)).loops().get(0);
    }

    private static void onLoop(LoopClient client, Consumer<LoopClient> sends) {
        client.loop().submit(() -> sends.accept(client)).syncUninterruptibly();
    }

    static byte[] expected(ShardRequest r) {
        ByteBuf b = Unpooled.buffer();
        try {
            Records.writeReply(r, RECORDS, b);
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    static final List<ShardRequest> REQUESTS = List.of(
            ShardRequest.readField(0, 0),
            ShardRequest.readField(42, 9),
            ShardRequest.readRecord(RECORDS - 1),
            ShardRequest.readRecord(7),
            ShardRequest.scan(95, 10),                          // wraps at RECORDS
            ShardRequest.scan(3, 20),                           // the "large" 20 kB reply
            ShardRequest.scan(3, ShardRequest.MAX_SCAN),        // wraps ten times, ~1 MB
            new ShardRequest(ShardRequest.Op.SCAN, 98, 4, 5));  // one field of each record, wrapping

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"AUTO, per-loop", "NIO, per-loop", "AUTO, shared", "NIO, shared"})
    void loopRepliesAreByteIdenticalToRecordsWriteReply(LoopGroup.Transport transport, String mode) throws Exception {
        EventLoop loop = clientLoop(transport);
        RedisDriver driver = closeLater(RedisDriver.open(servers.uri() + "?connection=" + mode, SETTINGS));
        LoopClient client = driver.openOn(loop);
        int n = REQUESTS.size() * 3;
        Outcomes out = new Outcomes(loop, n);
        onLoop(client, c -> {
            for (int i = 0; i < n; i++) {
                c.send(i % 3, REQUESTS.get(i / 3), out, i);
            }
        });
        out.await();
        for (int i = 0; i < n; i++) {
            assertArrayEquals(expected(REQUESTS.get(i / 3)), out.reply(i), REQUESTS.get(i / 3).toString());
        }
        // a second round on the now-open connections
        Outcomes again = new Outcomes(loop, n);
        onLoop(client, c -> {
            for (int i = 0; i < n; i++) {
                c.send(i % 3, REQUESTS.get(i / 3), again, i);
            }
        });
        again.await();
        for (int i = 0; i < n; i++) {
            assertArrayEquals(expected(REQUESTS.get(i / 3)), again.reply(i));
        }
        assertEquals(0, driver.offLoopCompletions(), "per-loop completions that arrived off the loop");
    }

    @Test
    void blockingCallAndCallAllAreByteIdentical() throws Exception {
        RedisDriver driver = closeLater(RedisDriver.open(servers.uri(), SETTINGS));
        BlockingClient client = driver.openBlocking();
        for (ShardRequest r : REQUESTS) {
            ByteBuf b = (ByteBuf) client.call(1, r, TimeUnit.SECONDS.toNanos(20));
            try {
                assertArrayEquals(expected(r), ByteBufUtil.getBytes(b), r.toString());
            } finally {
                b.release();
            }
        }
        int n = REQUESTS.size();
        int[] shards = new int[n];
        for (int i = 0; i < n; i++) {
            shards[i] = i % 3;
        }
        byte[][] got = new byte[n][];
        int[] calls = new int[n];
        client.callAll(shards, REQUESTS, TimeUnit.SECONDS.toNanos(20), new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object value) {
                ByteBuf reply = (ByteBuf) value;
                calls[index]++;
                got[index] = ByteBufUtil.getBytes(reply);
                reply.release();
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                calls[index]++;
                throw new AssertionError("index " + index + ": " + cause);
            }
        });
        for (int i = 0; i < n; i++) {
            assertEquals(1, calls[i]);
            assertArrayEquals(expected(REQUESTS.get(i)), got[i]);
        }
    }

    @Test
    void missingRecordIsAShardError() throws Exception {
        RedisDriver driver = closeLater(RedisDriver.open(servers.uri(), SETTINGS.withRecords(RECORDS * 2)));
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 3);
        onLoop(client, c -> {
            c.send(0, ShardRequest.readField(RECORDS + 1, 0), out, 0);
            c.send(0, ShardRequest.readRecord(RECORDS + 1), out, 1);
            c.send(0, ShardRequest.scan(RECORDS - 1, 3), out, 2);
        });
        out.await();
        for (int i = 0; i < 3; i++) {
            out.assertFailed(i, Kind.SHARD_ERROR);
        }
        ShardException e = assertThrows(ShardException.class,
                () -> driver.openBlocking().call(0, ShardRequest.readField(RECORDS + 1, 0), TimeUnit.SECONDS.toNanos(5)));
        assertEquals(Kind.SHARD_ERROR, e.kind());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"per-loop", "shared"})
    void noServerIsUnavailable(String mode) throws Exception {
        int port;
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0)) {
            port = ss.getLocalPort();
        }
        RedisDriver driver = closeLater(RedisDriver.open("redis://127.0.0.1:" + port + "?connection=" + mode, SETTINGS));
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 2);
        onLoop(client, c -> {
            c.send(0, ShardRequest.readField(1, 0), out, 0);
            c.send(0, ShardRequest.readField(2, 0), out, 1);
        });
        out.await();
        out.assertFailed(0, Kind.UNAVAILABLE);
        out.assertFailed(1, Kind.UNAVAILABLE);
        ShardException e = assertThrows(ShardException.class,
                () -> driver.openBlocking().call(0, ShardRequest.readField(1, 0), TimeUnit.SECONDS.toNanos(5)));
        assertEquals(Kind.UNAVAILABLE, e.kind());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"per-loop", "shared"})
    void stoppedShardTimesOutAndOthersAnswer(String mode) throws Exception {
        RedisServers own = closeLater(RedisServers.start(2, 0));
        own.load(RECORDS);
        RedisDriver driver = closeLater(RedisDriver.open(own.uri() + "?connection=" + mode,
                SETTINGS.withCallTimeout(Duration.ofMillis(300))));
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = driver.openOn(loop);
        warmUp(client, loop, 2);
        own.pause(1);
        try {
            Outcomes out = new Outcomes(loop, 2);
            onLoop(client, c -> {
                c.send(1, ShardRequest.readField(1, 0), out, 0);
                c.send(0, ShardRequest.readField(1, 0), out, 1);
            });
            out.await();
            out.assertFailed(0, Kind.TIMEOUT);
            assertArrayEquals(expected(ShardRequest.readField(1, 0)), out.reply(1));
            BlockingClient blocking = driver.openBlocking();
            ShardException e = assertThrows(ShardException.class,
                    () -> blocking.call(1, ShardRequest.readField(1, 0), TimeUnit.MILLISECONDS.toNanos(300)));
            assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
        } finally {
            own.resume(1);
        }
        // the late replies are dropped; the connection serves again
        Outcomes after = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(1, ShardRequest.readField(3, 2), after, 0));
        after.await();
        assertArrayEquals(expected(ShardRequest.readField(3, 2)), after.reply(0));
    }

    private static void warmUp(LoopClient client, EventLoop loop, int shards) throws Exception {
        Outcomes warm = new Outcomes(loop, shards);
        onLoop(client, c -> {
            for (int s = 0; s < shards; s++) {
                c.send(s, ShardRequest.readField(s, 0), warm, s);
            }
        });
        warm.await();
        for (int s = 0; s < shards; s++) {
            warm.reply(s);
        }
    }

    @Test
    void boundedQueueGivesOverloaded() throws Exception {
        RedisServers own = closeLater(RedisServers.start(1, 0));
        own.load(RECORDS);
        RedisDriver driver = closeLater(RedisDriver.open(own.uri(),
                SETTINGS.withCallTimeout(Duration.ofMillis(500)).withMaxOutstanding(4)));
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = driver.openOn(loop);
        warmUp(client, loop, 1);
        own.pause(0);
        try {
            Outcomes out = new Outcomes(loop, 10);
            onLoop(client, c -> {
                for (int i = 0; i < 10; i++) {
                    c.send(0, ShardRequest.readField(i, 0), out, i);
                }
            });
            out.await();
            int timeouts = 0;
            int overloaded = 0;
            for (int i = 0; i < 10; i++) {
                if (out.kind(i) == Kind.TIMEOUT) {
                    timeouts++;
                } else {
                    out.assertFailed(i, Kind.OVERLOADED);
                    overloaded++;
                }
            }
            assertEquals(4, timeouts, "calls within the bound time out");
            assertEquals(6, overloaded, "calls beyond the bound are refused");
        } finally {
            own.resume(0);
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"per-loop", "shared"})
    void killedShardIsUnavailableThenReconnects(String mode) throws Exception {
        RedisServers own = closeLater(RedisServers.start(2, 0));
        own.load(RECORDS);
        RedisDriver driver = closeLater(RedisDriver.open(own.uri() + "?connection=" + mode, SETTINGS));
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = driver.openOn(loop);
        BlockingClient blocking = driver.openBlocking();
        warmUp(client, loop, 2);
        ((ByteBuf) blocking.call(1, ShardRequest.readField(1, 0), TimeUnit.SECONDS.toNanos(5))).release();
        own.kill(1);
        // REJECT while disconnected: failures come at once, as UNAVAILABLE, not after the 20 s call timeout
        Outcomes out = new Outcomes(loop, 2);
        onLoop(client, c -> {
            c.send(1, ShardRequest.readField(1, 0), out, 0);
            c.send(0, ShardRequest.readField(1, 0), out, 1);
        });
        out.await();
        out.assertFailed(0, Kind.UNAVAILABLE);
        assertArrayEquals(expected(ShardRequest.readField(1, 0)), out.reply(1));
        ShardException e = assertThrows(ShardException.class,
                () -> blocking.call(1, ShardRequest.readField(1, 0), TimeUnit.SECONDS.toNanos(5)));
        assertEquals(Kind.UNAVAILABLE, e.kind(), e.toString());

        own.restart(1);
        own.load(RECORDS, 1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            Outcomes again = new Outcomes(loop, 1);
            onLoop(client, c -> c.send(1, ShardRequest.readRecord(5), again, 0));
            again.await();
            if (again.replied(0)) {
                assertArrayEquals(expected(ShardRequest.readRecord(5)), again.reply(0));
                break;
            }
            assertTrue(System.nanoTime() < deadline, "no reconnect within 20 s: " + again.failure(0));
            Thread.sleep(50);
        }
        while (true) {
            try {
                ByteBuf b = (ByteBuf) blocking.call(1, ShardRequest.readRecord(5), TimeUnit.SECONDS.toNanos(5));
                assertArrayEquals(expected(ShardRequest.readRecord(5)), ByteBufUtil.getBytes(b));
                b.release();
                break;
            } catch (ShardException x) {
                assertTrue(System.nanoTime() < deadline, "blocking client did not reconnect within 20 s: " + x);
                Thread.sleep(50);
            }
        }
    }

    @Test
    void closeFailsOutstandingCallsWithClosed() throws Exception {
        RedisServers own = closeLater(RedisServers.start(1, 0));
        own.load(RECORDS);
        RedisDriver driver = closeLater(RedisDriver.open(own.uri(), SETTINGS));
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        LoopClient client = driver.openOn(loop);
        warmUp(client, loop, 1);
        own.pause(0);
        try {
            Outcomes out = new Outcomes(loop, 4);
            onLoop(client, c -> {
                for (int i = 0; i < 3; i++) {
                    c.send(0, ShardRequest.readField(i, 0), out, i);
                }
                c.close();
                c.send(0, ShardRequest.readField(9, 0), out, 3); // after close: CLOSED, later
            });
            out.await();
            for (int i = 0; i < 4; i++) {
                out.assertFailed(i, Kind.CLOSED);
            }
        } finally {
            own.resume(0);
        }
    }

    @Test
    void closingTheDriverClosesEveryConnection() throws Exception {
        RedisServers own = closeLater(RedisServers.start(2, 0));
        own.load(RECORDS);
        EventLoop loop = clientLoop(LoopGroup.Transport.AUTO);
        for (String mode : List.of("per-loop", "shared")) {
            RedisDriver driver = RedisDriver.open(own.uri() + "?connection=" + mode, SETTINGS);
            LoopClient client = driver.openOn(loop);
            warmUp(client, loop, 2);
            BlockingClient blocking = driver.openBlocking();
            ((ByteBuf) blocking.call(0, ShardRequest.readField(0, 0), TimeUnit.SECONDS.toNanos(5))).release();
            assertTrue(connectedClients(own, 0) >= 3, "loop + blocking connections + this probe");
            driver.close();
            driver.close(); // idempotent
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (int s = 0; s < 2; s++) {
                while (connectedClients(own, s) > 1) {
                    assertTrue(System.nanoTime() < deadline, mode + ": shard " + s + " still has "
                            + (connectedClients(own, s) - 1) + " connections of a closed driver");
                    Thread.sleep(20);
                }
            }
            assertThrows(IllegalStateException.class, () -> driver.openOn(loop));
        }
    }

    /** {@code connected_clients} of shard {@code s}, counting the probe's own connection. */
    private static long connectedClients(RedisServers servers, int s) {
        InetSocketAddress a = servers.addresses().get(s);
        io.lettuce.core.RedisClient probe = io.lettuce.core.RedisClient.create();
        try (io.lettuce.core.api.StatefulRedisConnection<String, String> c = probe.connect(
                io.lettuce.core.RedisURI.create(a.getHostString(), a.getPort()))) {
            for (String line : c.sync().info("clients").split("\r?\n")) {
                if (line.startsWith("connected_clients:")) {
                    return Long.parseLong(line.substring("connected_clients:".length()).trim());
                }
            }
            throw new AssertionError("no connected_clients in INFO clients");
        } finally {
            probe.shutdown(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void sendOffTheLoopIsRefused() {
        RedisDriver driver = closeLater(RedisDriver.open(servers.uri(), SETTINGS));
        LoopClient client = driver.openOn(clientLoop(LoopGroup.Transport.AUTO));
        assertThrows(IllegalStateException.class, () -> client.send(0, ShardRequest.readField(0, 0), new Outcomes(
                client.loop(), 1), 0));
    }

    @Test
    void urisAndOptions() {
        assertEquals(List.of("redis", "redis-cluster"), new RedisDriverProvider().schemes());
        try (ShardDriver d = ShardDrivers.open("redis://127.0.0.1:7201-7203", SETTINGS)) {
            assertEquals(3, d.shardCount());
            assertEquals("redis://127.0.0.1:7201-7203", d.describe());
        }
        try (RedisDriver d = RedisDriver.open("redis://127.0.0.1:7201,127.0.0.1:7205?connection=shared", SETTINGS)) {
            assertEquals(RedisDriver.ConnectionMode.SHARED, d.connectionMode());
            assertEquals(List.of(new InetSocketAddress("127.0.0.1", 7201), new InetSocketAddress("127.0.0.1", 7205)),
                    d.shards());
        }
        assertThrows(IllegalArgumentException.class, () -> RedisDriver.open("redis://127.0.0.1:7201?connection=x", SETTINGS));
        assertThrows(IllegalArgumentException.class, () -> RedisDriver.open("redis://127.0.0.1:7201?pool=3", SETTINGS));
        assertThrows(IllegalArgumentException.class, () -> RedisDriver.open("redis://127.0.0.1", SETTINGS));
    }

    @Test
    void clusterNodesParsing() {
        String nodes = """
                07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
                67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
                292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383
                e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460
                """;
        RedisClusterShards cs = RedisClusterShards.parse(nodes, "127.0.0.1");
        assertEquals(List.of(30001, 30002, 30003), cs.masters().stream().map(InetSocketAddress::getPort).toList());
        int[][] ranges = {{0, 5460}, {5461, 10922}, {10923, 16383}};
        for (int i = 0; i < 3; i++) {
            int slot = io.lettuce.core.cluster.SlotHash.getSlot(cs.layouts().get(i).hashKey(42));
            assertTrue(slot >= ranges[i][0] && slot <= ranges[i][1], "shard " + i + " slot " + slot);
            assertEquals(slot, io.lettuce.core.cluster.SlotHash.getSlot(cs.layouts().get(i).recordKey(999)));
        }
    }
}
