package io.doubleface.kv;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.FlushMode;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.LoopFlush;
import io.doubleface.kv.TestShards.FakeShard;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.Outcomes;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The downstream flush mode ({@link FlushMode}, set per loop with {@link LoopFlush}) of the
 * pipelined loop client, with the KV driver on real sockets: every policy answers every call; when
 * the bytes leave is observed at a shard that counts what it reads; a switch under load loses no
 * call.
 */
class KvFlushModeTest {

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

    private EventLoop clientLoop() {
        return closeLater(new LoopGroup("kv-flush", 1, Transport.AUTO)).loops().get(0);
    }

    private static void onLoop(LoopClient<KvRequest> client, Consumer<LoopClient<KvRequest>> sends) {
        client.loop().submit(() -> sends.accept(client)).syncUninterruptibly();
    }

    @ParameterizedTest
    @ValueSource(strings = {"per-iteration", "per-write", "batch:4:50us", "batch:1000:200us"})
    void everyPolicyAnswersEveryCallWithItsOwnReply(String spec) throws Exception {
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(3).records(RECORDS).start());
        EventLoop loop = clientLoop();
        LoopFlush.set(loop, FlushMode.parse(spec));
        KvDriver driver = closeLater(KvDriver.of(leaf.addresses()));
        LoopClient<KvRequest> client = driver.openOn(loop);
        int n = 300; // 1 to 7 calls per loop task: full batches, partial ones, single calls
        Outcomes out = new Outcomes(loop, n);
        for (int i = 0; i < n; ) {
            int first = i;
            int burst = Math.min(n - i, 1 + i % 7);
            onLoop(client, c -> {
                for (int k = first; k < first + burst; k++) {
                    c.send(k % 3, KvRequest.readField(k % RECORDS, k % 10), out, k);
                }
            });
            i += burst;
        }
        out.await();
        for (int k = 0; k < n; k++) {
            assertArrayEquals(TestShards.expected(KvRequest.readField(k % RECORDS, k % 10), RECORDS), out.reply(k), spec);
        }
    }

    /** A shard that reads and counts the bytes it got, never answering. */
    private FakeShard countingShard(AtomicLong received) throws IOException {
        return closeLater(new FakeShard(0, (s, in) -> count(in, received)));
    }

    private static void count(InputStream in, AtomicLong received) {
        byte[] b = new byte[4096];
        try {
            for (int r; (r = in.read(b)) >= 0; ) {
                received.addAndGet(r);
            }
        } catch (IOException e) {
            // closed
        }
    }

    private static boolean within(long millis, BooleanSupplier condition) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() - end < 0) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.onSpinWait();
        }
        return condition.getAsBoolean();
    }

    /** A connected client to a counting shard (a first call made the connection and was flushed). */
    private LoopClient<KvRequest> connectedTo(FakeShard shard, AtomicLong received, EventLoop loop) {
        KvDriver driver = closeLater(KvDriver.of(List.of(shard.address()),
                KvDriver.Options.DEFAULT.withCallTimeout(Duration.ofMinutes(5))));
        LoopClient<KvRequest> client = driver.openOn(loop);
        onLoop(client, c -> c.send(0, KvRequest.readRecord(0), new Outcomes(loop, 1), 0));
        assertTrue(within(5_000, () -> received.get() > 0), "the first call reached the shard");
        return client;
    }

    @Test
    void whenTheBytesLeaveFollowsThePolicy() throws Exception {
        AtomicLong received = new AtomicLong();
        FakeShard shard = countingShard(received);
        EventLoop loop = clientLoop();
        LoopClient<KvRequest> client = connectedTo(shard, received, loop);
        Outcomes never = new Outcomes(loop, 16); // the shard never answers; closed with the driver

        // per iteration: nothing leaves while the loop task runs; all of it after
        long before = received.get();
        onLoop(client, c -> {
            c.send(0, KvRequest.readRecord(1), never, 0);
            c.send(0, KvRequest.readRecord(2), never, 1);
            assertTrue(!within(50, () -> received.get() > before), "per-iteration: held until the iteration ends");
        });
        assertTrue(within(5_000, () -> received.get() > before), "per-iteration: flushed at the end");

        // per write: each call leaves inside the task that sent it
        LoopFlush.set(loop, FlushMode.PER_WRITE);
        onLoop(client, c -> {
            long b0 = received.get();
            c.send(0, KvRequest.readRecord(3), never, 2);
            assertTrue(within(5_000, () -> received.get() > b0), "per-write: the first call left at once");
            long b1 = received.get();
            c.send(0, KvRequest.readRecord(4), never, 3);
            assertTrue(within(5_000, () -> received.get() > b1), "per-write: the second too");
        });

        // batch of 3 (long delay): two wait, the third sends all three
        LoopFlush.set(loop, FlushMode.batch(3, 1_000_000));
        onLoop(client, c -> {
            long b0 = received.get();
            c.send(0, KvRequest.readRecord(5), never, 4);
            c.send(0, KvRequest.readRecord(6), never, 5);
            assertTrue(!within(50, () -> received.get() > b0), "batch:3: two calls wait");
            c.send(0, KvRequest.readRecord(7), never, 6);
            assertTrue(within(5_000, () -> received.get() > b0), "batch:3: the third call flushed the batch");
        });
    }

    @Test
    void aBatchLargerThanTheLoadIsFlushedByItsTimer() throws Exception {
        AtomicLong received = new AtomicLong();
        FakeShard shard = countingShard(received);
        EventLoop loop = clientLoop();
        LoopClient<KvRequest> client = connectedTo(shard, received, loop);
        Outcomes never = new Outcomes(loop, 1);
        LoopFlush.set(loop, FlushMode.batch(1000, 20_000)); // 20 ms
        long before = received.get();
        long[] sentAt = new long[1];
        onLoop(client, c -> {
            sentAt[0] = System.nanoTime();
            c.send(0, KvRequest.readRecord(1), never, 0);
        });
        assertTrue(within(5_000, () -> received.get() > before), "the partial batch was flushed");
        long waited = System.nanoTime() - sentAt[0];
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(19), "flushed by the 20 ms timer, not the iteration's end: after "
                + TimeUnit.NANOSECONDS.toMicros(waited) + " µs");

        // and against a real leaf: one call, a batch of 1000, answered
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(1).records(RECORDS).start());
        LoopClient<KvRequest> real = closeLater(KvDriver.of(leaf.addresses())).openOn(loop);
        Outcomes warm = new Outcomes(loop, 1);
        onLoop(real, c -> c.send(0, KvRequest.readRecord(1), warm, 0)); // connects (flushed on connect)
        warm.await();
        Outcomes out = new Outcomes(loop, 1);
        onLoop(real, c -> c.send(0, KvRequest.readRecord(2), out, 0));
        out.await();
        assertArrayEquals(TestShards.expected(KvRequest.readRecord(2), RECORDS), out.reply(0));
    }

    @Test
    void switchingThePolicyUnderLoadLosesNoCallAndAnswersEachOnce() throws Exception {
        KvLeafServer leaf = closeLater(KvLeafServer.builder().shards(4).records(RECORDS).start());
        EventLoop loop = clientLoop();
        KvDriver driver = closeLater(KvDriver.of(leaf.addresses(), KvDriver.Options.DEFAULT
                .withMaxOutstanding(1 << 20).withCallTimeout(Duration.ofSeconds(30))));
        LoopClient<KvRequest> client = driver.openOn(loop);
        int n = 20_000;
        Outcomes out = new Outcomes(loop, n);
        List<FlushMode> policies = List.of(FlushMode.PER_ITERATION, FlushMode.batch(8, 100),
                FlushMode.PER_WRITE, FlushMode.batch(5000, 2_000), FlushMode.batch(3, 10));
        Thread switcher = new Thread(() -> {
            for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
                LoopFlush.set(loop, policies.get(i % policies.size()));
                try {
                    Thread.sleep(0, 200_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        switcher.start();
        try {
            // sends from loop tasks in bursts of 1..9, not waiting for the tasks: calls from
            // different tasks meet switches at every point of their life
            for (int i = 0; i < n; ) {
                int first = i;
                int burst = Math.min(n - i, 1 + i % 9);
                loop.execute(() -> {
                    for (int k = first; k < first + burst; k++) {
                        client.send(k % 4, KvRequest.readField(k % RECORDS, k % 10), out, k);
                    }
                });
                i += burst;
                if (i % 2000 < burst) {
                    Thread.sleep(1); // let replies and switches interleave with the sends
                }
            }
            out.await();
        } finally {
            switcher.interrupt();
            switcher.join();
        }
        for (int k = 0; k < n; k++) {
            assertArrayEquals(TestShards.expected(KvRequest.readField(k % RECORDS, k % 10), RECORDS), out.reply(k));
        }
    }
}
