package io.doubleface.redis;

import io.doubleface.driver.Transport;
import static io.doubleface.redis.TestData.B;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.doubleface.driver.FlushMode;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.LoopFlush;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.Outcomes;
import io.netty.channel.EventLoop;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The downstream flush mode ({@link FlushMode}) with the Redis driver's loop clients that
 * honour it — {@code per-loop} (Lettuce, {@code flushCommands}) and {@code native} (the pipelined
 * loop client) — against real redis-server processes: every policy answers every call with its own
 * value, a batch larger than the load is flushed by its timer, a switch under load loses nothing.
 */
class RedisFlushModeTest {

    static RedisServers servers;

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

    /** Sends {@code GET k:<k % KEYS>} to shard {@code k % 3} for {@code k} in [from, to) in one loop task. */
    private static void sendBurst(LoopClient<RedisCommand<?>> client, Outcomes out, int from, int to) {
        client.loop().execute(() -> {
            for (int k = from; k < to; k++) {
                client.send(k % 3, B.get(TestData.key("", k % TestData.KEYS)), out, k);
            }
        });
    }

    private static void assertValues(Outcomes out, int n, String what) {
        for (int k = 0; k < n; k++) {
            assertArrayEquals(TestData.value(k % 3, k % TestData.KEYS), (byte[]) out.value(k), what + ", call " + k);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"per-loop, per-write", "per-loop, batch:4:50us", "per-loop, batch:1000:300us",
        "native, per-write", "native, batch:4:50us", "native, batch:1000:300us"})
    void everyPolicyAnswersEveryCall(String mode, String policy) throws Exception {
        try (LoopGroup group = new LoopGroup("redis-fl", 1, Transport.AUTO);
                RedisDriver driver = RedisDriver.of(servers.uri() + "?connection=" + mode, RedisDriverTest.SETTINGS)) {
            EventLoop loop = group.loops().get(0);
            LoopFlush.set(loop, FlushMode.parse(policy));
            LoopClient<RedisCommand<?>> client = driver.openOn(loop);
            int n = 200;
            Outcomes out = new Outcomes(loop, n);
            for (int i = 0; i < n; ) { // bursts of 1..7: full batches, partial ones, single calls
                int burst = Math.min(n - i, 1 + i % 7);
                sendBurst(client, out, i, i + burst);
                i += burst;
            }
            out.await();
            assertValues(out, n, mode + " " + policy);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"per-loop", "native"})
    void switchingThePolicyUnderLoadLosesNoCall(String mode) throws Exception {
        try (LoopGroup group = new LoopGroup("redis-fl", 1, Transport.AUTO);
                RedisDriver driver = RedisDriver.of(servers.uri() + "?connection=" + mode, RedisDriverTest.SETTINGS)) {
            EventLoop loop = group.loops().get(0);
            LoopClient<RedisCommand<?>> client = driver.openOn(loop);
            List<FlushMode> policies = List.of(FlushMode.PER_WRITE, FlushMode.batch(8, 100),
                    FlushMode.PER_ITERATION, FlushMode.batch(2000, 1_000), FlushMode.batch(3, 10));
            int n = 3000;
            Outcomes out = new Outcomes(loop, n);
            for (int i = 0, s = 0; i < n; s++) {
                LoopFlush.set(loop, policies.get(s % policies.size()));
                int burst = Math.min(n - i, 1 + i % 9);
                sendBurst(client, out, i, i + burst);
                i += burst;
                if (s % 50 == 0) {
                    Thread.sleep(1); // let replies interleave with sends and switches
                }
            }
            out.await(); // fails on a missing outcome, a second callback or one off the loop
            assertValues(out, n, mode);
        }
    }
}
