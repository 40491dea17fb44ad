package io.doubleface.testing;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every {@link ShardDriver} keeps, as one test body each driver's module runs against
 * its own real shards: extend it, start the shards, and say how to open a driver over a list of
 * addresses, what command to send and what its reply must be.
 *
 * <ul>
 *   <li>every loop-client send ends in exactly one callback, on the client's loop, never inside
 *       {@code send} (also when the shard is down or the client is closed);
 *   <li>a send off the loop, or to a shard out of range, is refused at once;
 *   <li>a shard nothing listens on fails {@code UNAVAILABLE} well before the call timeout; a shard
 *       that stops answering fails {@code TIMEOUT} at about the call timeout; closing the client
 *       fails what is outstanding with {@code CLOSED};
 *   <li>a blocking {@code callAll} gives every index exactly one outcome, a reply or a failure.
 * </ul>
 *
 * @param <C> the driver's command type
 */
@Timeout(120)
public abstract class DriverContract<C extends Command<?>> {

    /** The call timeout of the drivers the contract opens, unless a test says otherwise. */
    protected static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

    private static LoopGroup loops;

    @BeforeAll
    static void startLoops() {
        loops = new LoopGroup("contract", 1, Transport.AUTO);
    }

    @AfterAll
    static void stopLoops() {
        loops.close();
    }

    /** {@return the addresses of the live shards the subclass started (at least two)} */
    protected abstract List<InetSocketAddress> shards();

    /**
     * Opens a driver over {@code shards} (shard i at index i).
     *
     * @param shards the addresses, live or not
     * @param settings the timeouts and bound to honour
     * @return the driver; the contract closes it
     */
    protected abstract ShardDriver<C> open(List<InetSocketAddress> shards, DriverSettings settings);

    /**
     * A command the live shard {@code shard} answers, the {@code i}-th of a test.
     *
     * @param shard the shard
     * @param i the command's number in the test
     * @return the command
     */
    protected abstract C command(int shard, int i);

    /**
     * Asserts that {@code reply} (as {@link Outcomes} keeps it: the bytes of a {@code ByteBuf}
     * reply, any other reply as it is) is the answer of live shard {@code shard} to
     * {@link #command}{@code (shard, i)}.
     *
     * @param shard the shard
     * @param i the command's number
     * @param reply the reply
     */
    protected abstract void assertReply(int shard, int i, Object reply);

    /** {@return the settings of the contract's drivers} */
    protected DriverSettings settings() {
        return DriverSettings.DEFAULT.withCallTimeout(CALL_TIMEOUT).withConnectTimeout(Duration.ofSeconds(2));
    }

    private static EventLoop loop() {
        return loops.loops().get(0);
    }

    /** An address nothing listens on (a port bound and released). */
    protected static InetSocketAddress deadAddress() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return new InetSocketAddress("127.0.0.1", s.getLocalPort());
        }
    }

    /** A listener that notes a callback made from inside {@code send}. */
    private static final class InSend implements ReplyListener {
        final Outcomes outcomes;
        volatile boolean sending;
        final AtomicInteger insideSend = new AtomicInteger();

        InSend(Outcomes outcomes) {
            this.outcomes = outcomes;
        }

        @Override
        public void onReply(int tag, Object value) {
            if (sending) {
                insideSend.incrementAndGet();
            }
            outcomes.onReply(tag, value);
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            if (sending) {
                insideSend.incrementAndGet();
            }
            outcomes.onFailure(tag, cause);
        }
    }

    /** Sends {@code commands[i]} to {@code shardOf[i]} from the loop, noting callbacks inside send. */
    private Outcomes sendAll(LoopClient<C> client, int[] shardOf, List<C> commands) throws Exception {
        Outcomes out = new Outcomes(loop(), commands.size());
        InSend listener = new InSend(out);
        loop().submit(() -> {
            for (int i = 0; i < commands.size(); i++) {
                listener.sending = true;
                try {
                    client.send(shardOf[i], commands.get(i), listener, i);
                } finally {
                    listener.sending = false;
                }
            }
        }).sync();
        out.await();
        assertEquals(0, listener.insideSend.get(), "callbacks made inside send");
        return out;
    }

    @Test
    void everySendEndsInExactlyOneCallbackOnTheLoopNeverInsideSend() throws Exception {
        List<InetSocketAddress> live = shards();
        try (ShardDriver<C> driver = open(live, settings())) {
            LoopClient<C> client = driver.openOn(loop());
            int n = 50;
            int[] shardOf = new int[n];
            List<C> commands = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                shardOf[i] = i % live.size();
                commands.add(command(shardOf[i], i));
            }
            for (int round = 0; round < 2; round++) { // the first round connects, the second reuses
                Outcomes out = sendAll(client, shardOf, commands);
                for (int i = 0; i < n; i++) {
                    assertReply(shardOf[i], i, out.value(i));
                }
            }
            loop().submit(client::close).sync();
        }
    }

    @Test
    void aSendOffTheLoopOrToAShardOutOfRangeIsRefused() throws Exception {
        List<InetSocketAddress> live = shards();
        try (ShardDriver<C> driver = open(live, settings())) {
            LoopClient<C> client = driver.openOn(loop());
            Outcomes never = new Outcomes(loop(), 1);
            assertThrows(IllegalStateException.class, () -> client.send(0, command(0, 0), never, 0));
            Throwable[] thrown = new Throwable[1];
            loop().submit(() -> {
                try {
                    client.send(live.size(), command(0, 0), never, 0);
                } catch (Throwable t) {
                    thrown[0] = t;
                }
            }).sync();
            assertTrue(thrown[0] instanceof IndexOutOfBoundsException, "shard out of range: " + thrown[0]);
            assertFalse(never.replied(0));
            loop().submit(client::close).sync();
        }
    }

    @Test
    void aShardNothingListensOnFailsUnavailableBeforeTheCallTimeout() throws Exception {
        List<InetSocketAddress> shards = new ArrayList<>(shards());
        shards.set(1, deadAddress());
        try (ShardDriver<C> driver = open(shards, settings())) {
            LoopClient<C> client = driver.openOn(loop());
            long t0 = System.nanoTime();
            Outcomes out = sendAll(client, new int[] {0, 1, 1}, List.of(command(0, 0), command(1, 1), command(1, 2)));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertReply(0, 0, out.value(0));
            out.assertFailed(1, ShardException.Kind.UNAVAILABLE);
            out.assertFailed(2, ShardException.Kind.UNAVAILABLE);
            assertTrue(tookMillis < CALL_TIMEOUT.toMillis() / 2, "UNAVAILABLE after " + tookMillis + " ms");
            loop().submit(client::close).sync();
        }
    }

    @Test
    void aShardThatStopsAnsweringTimesOutAndClosingFailsWhatIsOutstanding() throws Exception {
        List<InetSocketAddress> live = shards();
        try (StallingProxy proxy = new StallingProxy(live.get(0))) {
            List<InetSocketAddress> shards = new ArrayList<>(live);
            shards.set(0, proxy.address());
            Duration timeout = Duration.ofMillis(500);
            try (ShardDriver<C> driver = open(shards, settings().withCallTimeout(timeout))) {
                LoopClient<C> client = driver.openOn(loop());
                assertReply(0, 0, sendAll(client, new int[] {0}, List.of(command(0, 0))).value(0)); // connected
                proxy.stall(true);
                long t0 = System.nanoTime();
                Outcomes out = sendAll(client, new int[] {0, 1}, List.of(command(0, 1), command(1, 2)));
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                out.assertFailed(0, ShardException.Kind.TIMEOUT);
                assertReply(1, 2, out.value(1));
                assertTrue(tookMillis >= timeout.toMillis() - 50 && tookMillis < timeout.toMillis() + 5_000,
                        "TIMEOUT after " + tookMillis + " ms (call timeout " + timeout.toMillis() + " ms)");

                Outcomes closing = new Outcomes(loop(), 1);
                loop().submit(() -> client.send(0, command(0, 3), closing, 0)).sync();
                loop().submit(client::close).sync();
                closing.await().assertFailed(0, ShardException.Kind.CLOSED);
            }
        }
    }

    @Test
    void aBlockingCallAllGivesEveryIndexExactlyOneOutcome() throws Exception {
        List<InetSocketAddress> shards = new ArrayList<>(shards());
        shards.set(1, deadAddress());
        try (ShardDriver<C> driver = open(shards, settings()); BlockingClient<C> client = driver.openBlocking()) {
            int[] shardOf = {0, 1, 0, 1, 0};
            List<C> commands = new ArrayList<>();
            for (int i = 0; i < shardOf.length; i++) {
                commands.add(command(shardOf[i], i));
            }
            int[] outcomes = new int[shardOf.length];
            Object[] replies = new Object[shardOf.length];
            ShardException[] failures = new ShardException[shardOf.length];
            CountDownLatch done = new CountDownLatch(shardOf.length);
            client.callAll(shardOf, commands, TimeUnit.SECONDS.toNanos(20), new BlockingClient.Sink() {
                @Override
                public void onReply(int index, Object reply) {
                    replies[index] = reply instanceof io.netty.buffer.ByteBuf b ? bytes(b) : reply;
                    outcomes[index]++;
                    done.countDown();
                }

                @Override
                public void onFailure(int index, ShardException cause) {
                    failures[index] = cause;
                    outcomes[index]++;
                    done.countDown();
                }
            });
            assertTrue(done.await(1, TimeUnit.SECONDS), "callAll returned before every outcome");
            for (int i = 0; i < shardOf.length; i++) {
                assertEquals(1, outcomes[i], "outcomes of index " + i);
                if (shardOf[i] == 0) {
                    assertTrue(failures[i] == null, () -> "live shard failed: " + failures[0]);
                    assertReply(0, i, replies[i]);
                } else {
                    assertEquals(ShardException.Kind.UNAVAILABLE, failures[i] == null ? null : failures[i].kind(),
                            "index " + i + " to the dead shard");
                }
            }
        }
    }

    private static byte[] bytes(io.netty.buffer.ByteBuf b) {
        try {
            return io.netty.buffer.ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }
}
