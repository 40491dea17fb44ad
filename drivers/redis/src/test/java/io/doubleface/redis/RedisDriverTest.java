package io.doubleface.redis;

import io.doubleface.driver.Transport;
import io.doubleface.testing.Outcomes;
import static io.doubleface.redis.TestData.B;
import static io.doubleface.redis.TestData.PROBES;
import static io.doubleface.redis.TestData.canon;
import static io.doubleface.redis.TestData.str;
import static io.doubleface.redis.TestData.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.redis.TestData.Probe;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
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

/** The Redis driver against real redis-server processes on loopback, with native commands over {@link TestData}. */
class RedisDriverTest {

    static final DriverSettings SETTINGS = DriverSettings.DEFAULT
            .withCallTimeout(Duration.ofSeconds(20)).withConnectTimeout(Duration.ofSeconds(5));

    /** A command no Redis knows. */
    static final ProtocolKeyword NO_SUCH_COMMAND = new ProtocolKeyword() {
        @Override
        public byte[] getBytes() {
            return "NOSUCHCOMMAND".getBytes(StandardCharsets.US_ASCII);
        }

        @Override
        public String toString() {
            return "NOSUCHCOMMAND";
        }
    };

    static RedisServers servers;

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    static void startServers() {
        servers = RedisServers.start(3, 0);
        TestData.load(servers);
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

    private EventLoop clientLoop(Transport transport) {
        return closeLater(new LoopGroup("redis-test", 1, transport)).loops().get(0);
    }

    private static void onLoop(LoopClient<RedisCommand<?>> client, Consumer<LoopClient<RedisCommand<?>>> sends) {
        client.loop().submit(() -> sends.accept(client)).syncUninterruptibly();
    }

    /** {@code GET k:<i>} of the standalone dataset. */
    private static RedisCommand<byte[]> get(int i) {
        return B.get(TestData.key("", i));
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"AUTO, per-loop", "NIO, per-loop", "AUTO, shared", "NIO, shared", "AUTO, native", "NIO, native"})
    void loopRepliesAreWhatWasSet(Transport transport, String mode) throws Exception {
        EventLoop loop = clientLoop(transport);
        RedisDriver driver = closeLater(RedisDriver.of(servers.uri() + "?connection=" + mode, SETTINGS));
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        int n = PROBES.size() * 3;
        for (int round = 0; round < 2; round++) { // the second on the now-open connections
            Outcomes out = new Outcomes(loop, n);
            onLoop(client, c -> {
                for (int i = 0; i < n; i++) {
                    c.send(i % 3, PROBES.get(i / 3).command(""), out, i);
                }
            });
            out.await();
            for (int i = 0; i < n; i++) {
                Probe p = PROBES.get(i / 3);
                assertEquals(p.expected("", i % 3), TestData.canon(out.value(i)), "round " + round + ", shard " + i % 3 + ": " + p);
            }
        }
        assertEquals(0, driver.offLoopCompletions(), "per-loop completions that arrived off the loop");
    }

    @Test
    void blockingCallAndCallAllReplyWhatWasSet() throws Exception {
        RedisDriver driver = closeLater(RedisDriver.of(servers.uri(), SETTINGS));
        BlockingClient<RedisCommand<?>> client = driver.openBlocking();
        for (Probe p : PROBES) {
            assertEquals(p.expected("", 1), canon(client.call(1, p.command(""), TimeUnit.SECONDS.toNanos(20))), p.name());
        }
        int n = PROBES.size();
        int[] shards = new int[n];
        List<RedisCommand<?>> commands = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            shards[i] = i % 3;
            commands.add(PROBES.get(i).command(""));
        }
        Object[] got = new Object[n];
        int[] calls = new int[n];
        client.callAll(shards, commands, TimeUnit.SECONDS.toNanos(20), new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object value) {
                calls[index]++;
                got[index] = canon(value);
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                calls[index]++;
                throw new AssertionError("index " + index + ": " + cause);
            }
        });
        for (int i = 0; i < n; i++) {
            assertEquals(1, calls[i]);
            assertEquals(PROBES.get(i).expected("", i % 3), got[i], PROBES.get(i).name());
        }
    }

    /**
     * A missing key is a normal (null) reply; an error reply of Redis (WRONGTYPE, an unknown
     * command) fails the call with SHARD_ERROR, on the loop and the blocking client, and leaves the
     * connection usable.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"per-loop", "native"})
    void errorRepliesAreShardErrorsAndAMissingKeyIsNot(String mode) throws Exception {
        RedisDriver driver = closeLater(RedisDriver.of(servers.uri() + "?connection=" + mode, SETTINGS));
        RedisCommand<byte[]> wrongType = B.get(TestData.rec("", 0)); // a hash
        RedisCommand<String> unknown = B.raw(NO_SUCH_COMMAND, StatusOutput::new, a -> a.add("x"));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        Outcomes out = new Outcomes(loop, 4);
        onLoop(client, c -> {
            c.send(0, wrongType, out, 0);
            c.send(0, unknown, out, 1);
            c.send(0, get(TestData.KEYS + 1), out, 2);
            c.send(0, get(1), out, 3);
        });
        out.await();
        out.assertFailed(0, Kind.SHARD_ERROR);
        assertTrue(out.failure(0).getMessage().contains("WRONGTYPE"), out.failure(0).getMessage());
        out.assertFailed(1, Kind.SHARD_ERROR);
        assertTrue(out.failure(1).getMessage().contains("unknown command"), out.failure(1).getMessage());
        assertNull(out.value(2));
        assertEquals(str(value(0, 1)), TestData.canon(out.value(3)), "the connection is still usable");

        BlockingClient<RedisCommand<?>> blocking = driver.openBlocking();
        long t = TimeUnit.SECONDS.toNanos(5);
        ShardException e = assertThrows(ShardException.class, () -> blocking.call(0, wrongType, t));
        assertEquals(Kind.SHARD_ERROR, e.kind(), e.toString());
        assertTrue(e.getMessage().contains("WRONGTYPE"), e.getMessage());
        e = assertThrows(ShardException.class, () -> blocking.call(2, unknown, t));
        assertEquals(Kind.SHARD_ERROR, e.kind(), e.toString());
        assertTrue(e.getMessage().contains("unknown command"), e.getMessage());
        assertNull(blocking.call(0, get(TestData.KEYS + 1), t));
        assertEquals(str(value(0, 2)), canon(blocking.call(0, get(2), t)), "the connection is still usable");
        Object[] got = new Object[3];
        blocking.callAll(new int[] {1, 2, 1}, List.of(wrongType, get(3), unknown), t, new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object reply) {
                got[index] = canon(reply);
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                got[index] = cause.kind();
            }
        });
        assertEquals(java.util.Arrays.asList(Kind.SHARD_ERROR, str(value(2, 3)), Kind.SHARD_ERROR), java.util.Arrays.asList(got));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"per-loop", "shared", "native"})
    void noServerIsUnavailable(String mode) throws Exception {
        // bound but never listening, and held for the whole test: a connection there is refused, and no
        // server started meanwhile can be given the port (closing a probe socket first allowed both)
        try (java.net.Socket held = new java.net.Socket()) {
            held.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = held.getLocalPort();
            RedisDriver driver = closeLater(RedisDriver.of("redis://127.0.0.1:" + port + "?connection=" + mode, SETTINGS));
            EventLoop loop = clientLoop(Transport.AUTO);
            LoopClient<RedisCommand<?>> client = driver.openOn(loop);
            Outcomes out = new Outcomes(loop, 2);
            onLoop(client, c -> {
                c.send(0, get(1), out, 0);
                c.send(0, get(2), out, 1);
            });
            out.await();
            out.assertFailed(0, Kind.UNAVAILABLE);
            out.assertFailed(1, Kind.UNAVAILABLE);
            ShardException e = assertThrows(ShardException.class,
                    () -> driver.openBlocking().call(0, get(1), TimeUnit.SECONDS.toNanos(5)));
            assertEquals(Kind.UNAVAILABLE, e.kind());
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"per-loop", "shared", "native"})
    void stoppedShardTimesOutAndOthersAnswer(String mode) throws Exception {
        RedisServers own = closeLater(RedisServers.start(2, 0));
        TestData.load(own);
        RedisDriver driver = closeLater(RedisDriver.of(own.uri() + "?connection=" + mode,
                SETTINGS.withCallTimeout(Duration.ofMillis(300))));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        warmUp(client, loop, 2);
        own.pause(1);
        try {
            Outcomes out = new Outcomes(loop, 2);
            onLoop(client, c -> {
                c.send(1, get(1), out, 0);
                c.send(0, get(1), out, 1);
            });
            out.await();
            out.assertFailed(0, Kind.TIMEOUT);
            assertEquals(str(value(0, 1)), TestData.canon(out.value(1)));
            BlockingClient<RedisCommand<?>> blocking = driver.openBlocking();
            ShardException e = assertThrows(ShardException.class,
                    () -> blocking.call(1, get(1), TimeUnit.MILLISECONDS.toNanos(300)));
            assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
        } finally {
            own.resume(1);
        }
        // the late replies are dropped; the connection serves again (another key: a late reply would not pass)
        Outcomes after = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(1, get(3), after, 0));
        after.await();
        assertEquals(str(value(1, 3)), TestData.canon(after.value(0)));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"per-loop", "shared", "native"})
    void eachCallTimesOutAtItsOwnDeadlineAndNotBefore(String mode) throws Exception {
        // calls sent 150 ms apart to a stopped shard, 400 ms timeout: one sweep per client times them
        // out in order, each no earlier than its own deadline, and a call answered meanwhile is not
        // timed out
        RedisServers own = closeLater(RedisServers.start(2, 0));
        TestData.load(own);
        RedisDriver driver = closeLater(RedisDriver.of(own.uri() + "?connection=" + mode,
                SETTINGS.withCallTimeout(Duration.ofMillis(400))));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        warmUp(client, loop, 2);
        own.pause(1);
        try {
            int n = 3;
            long[] sentAt = new long[n + 1];
            long[] endedAt = new long[n + 1];
            Kind[] kinds = new Kind[n + 1];
            java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(n + 1);
            io.doubleface.driver.spi.ReplyListener timed = new io.doubleface.driver.spi.ReplyListener() {
                @Override
                public void onReply(int tag, Object reply) {
                    endedAt[tag] = System.nanoTime();
                    done.countDown();
                }

                @Override
                public void onFailure(int tag, ShardException cause) {
                    endedAt[tag] = System.nanoTime();
                    kinds[tag] = cause.kind();
                    done.countDown();
                }
            };
            for (int i = 0; i < n; i++) {
                int tag = i;
                loop.submit(() -> {
                    sentAt[tag] = System.nanoTime();
                    client.send(1, get(tag), timed, tag);
                    if (tag == 1) {
                        sentAt[n] = System.nanoTime();
                        client.send(0, get(0), timed, n); // a live shard, between the stopped shard's calls
                    }
                }).get(5, TimeUnit.SECONDS);
                Thread.sleep(150);
            }
            assertTrue(done.await(10, TimeUnit.SECONDS), "every call ended");
            assertNull(kinds[n], "the live shard's call answered");
            for (int i = 0; i < n; i++) {
                assertEquals(Kind.TIMEOUT, kinds[i], "call " + i);
                assertTrue(endedAt[i] - sentAt[i] >= TimeUnit.MILLISECONDS.toNanos(400),
                        "call " + i + " timed out after " + (endedAt[i] - sentAt[i]) / 1_000_000 + " ms");
                if (i > 0) {
                    assertTrue(endedAt[i] >= endedAt[i - 1], "in send order");
                }
            }
            if ((Object) client instanceof RedisLoopClient rlc) {
                assertEquals(0, loop.submit(rlc::outstanding).get(5, TimeUnit.SECONDS));
            }
        } finally {
            own.resume(1);
        }
    }

    @Test
    void aNativeOnlyDriverNeverCreatesLettucesResources() throws Exception {
        RedisDriver driver = closeLater(RedisDriver.of(servers.uri() + "?connection=native", SETTINGS));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        warmUp(client, loop, 1);
        assertFalse(driver.lettuceResourcesCreated(), "native calls answered without Lettuce's resources");
        RedisDriver lettuce = closeLater(RedisDriver.of(servers.uri(), SETTINGS));
        LoopClient<RedisCommand<?>> viaLettuce = lettuce.openOn(loop);
        warmUp(viaLettuce, loop, 1);
        assertTrue(lettuce.lettuceResourcesCreated(), "a per-loop Lettuce driver creates them");
    }

    @Test
    void theNativeClientReadsRepliesLargerThanItsHeapCopyLimit() throws Exception {
        // replies over RespReplyDecoder.COPY_LIMIT are framed on the received (direct) buffer itself,
        // also when they arrive over many reads; small ones pipelined behind them still answer
        RedisDriver driver = closeLater(RedisDriver.of(servers.uri() + "?connection=native", SETTINGS));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        byte[] big = new byte[5 * RespReplyDecoder.COPY_LIMIT + 17];
        new java.util.Random(7).nextBytes(big);
        byte[] key = "native:big".getBytes(StandardCharsets.UTF_8);
        Outcomes set = new Outcomes(loop, 1);
        onLoop(client, c -> c.send(2, B.set(key, big), set, 0));
        set.await();
        assertEquals("OK", set.value(0));
        Outcomes out = new Outcomes(loop, 6);
        onLoop(client, c -> {
            for (int i = 0; i < 3; i++) {
                c.send(2, B.get(key), out, 2 * i);
                c.send(2, get(i), out, 2 * i + 1);
            }
        });
        out.await();
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(big, (byte[]) out.value(2 * i), "large reply " + i);
            assertEquals(str(value(2, i)), TestData.canon(out.value(2 * i + 1)), "small reply " + i);
        }
    }

    /** Sends {@code GET k:<s>} to every shard {@code s} and checks the replies. */
    private static void warmUp(LoopClient<RedisCommand<?>> client, EventLoop loop, int shards) throws Exception {
        Outcomes warm = new Outcomes(loop, shards);
        onLoop(client, c -> {
            for (int s = 0; s < shards; s++) {
                c.send(s, get(s), warm, s);
            }
        });
        warm.await();
        for (int s = 0; s < shards; s++) {
            assertEquals(str(value(s, s)), TestData.canon(warm.value(s)), "warm-up of shard " + s);
        }
    }

    @Test
    void boundedQueueGivesOverloaded() throws Exception {
        RedisServers own = closeLater(RedisServers.start(1, 0));
        TestData.load(own);
        RedisDriver driver = closeLater(RedisDriver.of(own.uri(),
                SETTINGS.withCallTimeout(Duration.ofMillis(500)).withMaxOutstanding(4)));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        warmUp(client, loop, 1);
        own.pause(0);
        try {
            Outcomes out = new Outcomes(loop, 10);
            onLoop(client, c -> {
                for (int i = 0; i < 10; i++) {
                    c.send(0, get(i), out, i);
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
    @CsvSource({"per-loop", "shared", "native"})
    void killedShardIsUnavailableThenReconnects(String mode) throws Exception {
        RedisServers own = closeLater(RedisServers.start(2, 0));
        TestData.load(own);
        RedisDriver driver = closeLater(RedisDriver.of(own.uri() + "?connection=" + mode, SETTINGS));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        BlockingClient<RedisCommand<?>> blocking = driver.openBlocking();
        warmUp(client, loop, 2);
        assertEquals(str(value(1, 1)), canon(blocking.call(1, get(1), TimeUnit.SECONDS.toNanos(5))));
        own.kill(1);
        if (mode.equals("shared")) {
            // Lettuce's shared connection must have seen the kill: a command written before it did is
            // kept for re-delivery after the reconnect and times out instead (a race of the test, seen once)
            StatefulRedisConnection<byte[], byte[]> conn = driver.sharedConnection(1).get(5, TimeUnit.SECONDS);
            long seen = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (conn.isOpen()) {
                assertTrue(System.nanoTime() < seen, "the shared connection did not notice the kill within 10 s");
                Thread.sleep(10);
            }
        }
        // REJECT while disconnected: failures come at once, as UNAVAILABLE, not after the 20 s call timeout
        Outcomes out = new Outcomes(loop, 2);
        onLoop(client, c -> {
            c.send(1, get(1), out, 0);
            c.send(0, get(1), out, 1);
        });
        out.await();
        out.assertFailed(0, Kind.UNAVAILABLE);
        assertEquals(str(value(0, 1)), TestData.canon(out.value(1)));
        ShardException e = assertThrows(ShardException.class,
                () -> blocking.call(1, get(1), TimeUnit.SECONDS.toNanos(5)));
        assertEquals(Kind.UNAVAILABLE, e.kind(), e.toString());

        own.restart(1);
        TestData.load(own, 1);
        Probe record = TestData.hmget(5);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            Outcomes again = new Outcomes(loop, 1);
            onLoop(client, c -> c.send(1, record.command(""), again, 0));
            again.await();
            if (again.replied(0)) {
                assertEquals(record.expected("", 1), TestData.canon(again.value(0)));
                break;
            }
            assertTrue(System.nanoTime() < deadline, "no reconnect within 20 s: " + again.failure(0));
            Thread.sleep(50);
        }
        while (true) {
            try {
                Object reply = blocking.call(1, record.command(""), TimeUnit.SECONDS.toNanos(5));
                assertEquals(record.expected("", 1), canon(reply));
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
        TestData.load(own);
        RedisDriver driver = closeLater(RedisDriver.of(own.uri(), SETTINGS));
        EventLoop loop = clientLoop(Transport.AUTO);
        LoopClient<RedisCommand<?>> client = driver.openOn(loop);
        warmUp(client, loop, 1);
        own.pause(0);
        try {
            Outcomes out = new Outcomes(loop, 4);
            onLoop(client, c -> {
                for (int i = 0; i < 3; i++) {
                    c.send(0, get(i), out, i);
                }
                c.close();
                c.send(0, get(9), out, 3); // after close: CLOSED, later
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
        TestData.load(own);
        EventLoop loop = clientLoop(Transport.AUTO);
        for (String mode : List.of("per-loop", "shared", "native")) {
            RedisDriver driver = RedisDriver.of(own.uri() + "?connection=" + mode, SETTINGS);
            LoopClient<RedisCommand<?>> client = driver.openOn(loop);
            warmUp(client, loop, 2);
            BlockingClient<RedisCommand<?>> blocking = driver.openBlocking();
            assertEquals(str(value(0, 0)), canon(blocking.call(0, get(0), TimeUnit.SECONDS.toNanos(5))));
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
        RedisDriver driver = closeLater(RedisDriver.of(servers.uri(), SETTINGS));
        LoopClient<RedisCommand<?>> client = driver.openOn(clientLoop(Transport.AUTO));
        assertThrows(IllegalStateException.class, () -> client.send(0, get(0), new Outcomes(
                client.loop(), 1), 0));
    }

    @Test
    void urisAndOptions() {
        assertEquals(List.of("redis", "rediss", "redis-cluster"), new RedisDriverProvider().schemes());
        try (ShardDriver<?> d = ShardDrivers.open("redis://127.0.0.1:7201-7203", SETTINGS)) {
            assertEquals(3, d.shardCount());
            assertEquals("redis://127.0.0.1:7201-7203", d.describe());
            RedisDriver rd = (RedisDriver) d;
            assertFalse(rd.isCluster());
            UnsupportedOperationException byKey = assertThrows(UnsupportedOperationException.class,
                    () -> rd.shardFor(B.get(TestData.key("", 1))));
            assertTrue(byKey.getMessage().contains("by index only"), byKey.getMessage());
        }
        try (RedisDriver d = RedisDriver.of("redis://127.0.0.1:7201,127.0.0.1:7205?connection=shared", SETTINGS)) {
            assertEquals(RedisDriver.ConnectionMode.SHARED, d.connectionMode());
            assertEquals(List.of(new InetSocketAddress("127.0.0.1", 7201), new InetSocketAddress("127.0.0.1", 7205)),
                    d.shards());
        }
        try (RedisDriver d = RedisDriver.of("redis://127.0.0.1:7201-7202")) {
            assertEquals(DriverSettings.DEFAULT, d.settings());
            assertEquals(RedisDriver.ConnectionMode.PER_LOOP, d.connectionMode());
            assertEquals(2, d.shardCount());
        }
        try (RedisDriver d = RedisDriver.of("redis://127.0.0.1:7201-7202?connection=native", SETTINGS)) {
            assertEquals(RedisDriver.ConnectionMode.NATIVE, d.connectionMode());
            assertEquals("redis://127.0.0.1:7201-7202?connection=native", d.describe());
        }
        IllegalArgumentException tlsNative = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("rediss://127.0.0.1:7201?connection=native", SETTINGS));
        assertTrue(tlsNative.getMessage().contains("connection=native speaks plain TCP"), tlsNative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RedisDriver.of("redis://127.0.0.1:7201?connection=x", SETTINGS));
        assertThrows(IllegalArgumentException.class, () -> RedisDriver.of("redis://127.0.0.1:7201?pool=3", SETTINGS));
        assertThrows(IllegalArgumentException.class, () -> RedisDriver.of("redis://127.0.0.1", SETTINGS));
        IllegalArgumentException clusterOnly = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("redis://127.0.0.1:7201?read-from=replica", SETTINGS));
        assertTrue(clusterOnly.getMessage().contains("read-from needs redis-cluster://"), clusterOnly.getMessage());
        IllegalArgumentException sharedCluster = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("redis-cluster://127.0.0.1:7201?connection=shared", SETTINGS));
        assertTrue(sharedCluster.getMessage().contains("not shared"), sharedCluster.getMessage());
        IllegalArgumentException lettuceReplicas = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("redis-cluster://127.0.0.1:7201?connection=per-loop&read-from=replica", SETTINGS));
        assertTrue(lettuceReplicas.getMessage().contains("needs connection=native"), lettuceReplicas.getMessage());
        IllegalArgumentException badRefresh = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("redis-cluster://127.0.0.1:7201?refresh=soon", SETTINGS));
        assertTrue(badRefresh.getMessage().contains("refresh=soon (expected: a duration"), badRefresh.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("redis-cluster://127.0.0.1:7201?read-from=primary", SETTINGS));
    }

    @Test
    void clusterShardsAndSlotsReplies() {
        // CLUSTER SHARDS (Redis 7): flat maps; a replica that failed is not read from; an empty endpoint means the asked host
        List<Object> node1 = List.of("id", "a1", "port", 30001L, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role",
                "master", "replication-offset", 72L, "health", "online");
        List<Object> node4 = List.of("id", "b4", "port", 30004L, "ip", "", "endpoint", "", "role", "replica",
                "replication-offset", 72L, "health", "online");
        List<Object> node5 = List.of("id", "c5", "port", 30005L, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role",
                "replica", "replication-offset", 0L, "health", "failed");
        List<Object> node2 = List.of("id", "d2", "port", 30002L, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role",
                "master", "replication-offset", 9L, "health", "online");
        List<Object> shards = List.of(
                List.of("slots", List.of(5461L, 16383L), "nodes", List.of(node2)),
                List.of("slots", List.of(0L, 5000L, 5001L, 5460L), "nodes", List.of(node1, node4, node5)));
        RedisClusterMap m = RedisClusterMap.of(1, RedisClusterTopology.parseShards(shards, "10.0.0.9"));
        assertEquals(List.of(30001, 30002), m.masters().stream().map(n -> n.address().getPort()).toList(),
                "shard i = the master of the i-th lowest slot");
        assertEquals(List.of(new InetSocketAddress("10.0.0.9", 30004)),
                m.replicasOf(0).stream().map(RedisClusterMap.Node::address).toList());
        assertEquals(30001, m.owner(5460).address().getPort());
        assertEquals(30002, m.owner(5461).address().getPort());
        assertEquals(16384, m.servedSlots());
        assertEquals(List.of(0, 5460), List.of(m.rangesOf(0).get(0)[0], m.rangesOf(0).get(0)[1]));

        // CLUSTER SLOTS (Redis < 7): [start, end, master, replicas...]
        List<Object> slots = List.of(
                List.of(0L, 8191L, List.of("127.0.0.1", 30001L, "a1"), List.of("127.0.0.1", 30004L, "b4")),
                List.of(8192L, 16383L, List.of("", 30002L, "d2")));
        RedisClusterMap s2 = RedisClusterMap.of(1, RedisClusterTopology.parseSlots(slots, "127.0.0.9"));
        assertEquals(new InetSocketAddress("127.0.0.9", 30002), s2.owner(16383).address());
        assertEquals(1, s2.replicasOf(0).size());

        // a MOVED patches one slot, leaves the original alone
        RedisClusterMap moved = s2.moved(100, new InetSocketAddress("127.0.0.1", 30002));
        assertEquals(30002, moved.owner(100).address().getPort());
        assertEquals(30001, moved.owner(101).address().getPort());
        assertEquals(30001, s2.owner(100).address().getPort());
        assertTrue(s2.moved(101, new InetSocketAddress("127.0.0.1", 30001)) == s2, "no change, no copy");
        assertFalse(moved.sameRouting(s2));
        assertTrue(s2.sameRouting(RedisClusterMap.of(7, RedisClusterTopology.parseSlots(slots, "127.0.0.9"))));
        IllegalStateException none = assertThrows(IllegalStateException.class, () -> RedisClusterMap.of(1, List.of()));
        assertTrue(none.getMessage().contains("no master serving slots"), none.getMessage());
    }
}
