package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.redis.TestData.Probe;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The redis-server launcher: binaries, signals, and no orphan processes (and a launched server serving {@link TestData}). */
class RedisServersTest {

    @Test
    void embeddedBinaryServesTheDataset() throws Exception {
        Path bin = RedisServers.embeddedBinary();
        assertTrue(Files.isExecutable(bin), bin.toString());
        try (RedisServers s = RedisServers.start(bin, 2, 0, "127.0.0.1");
                RedisDriver d = RedisDriver.of(s.uri(), RedisDriverTest.SETTINGS)) {
            assertEquals(bin, s.binary());
            TestData.load(s);
            BlockingClient<RedisCommand<?>> c = d.openBlocking();
            for (Probe p : TestData.PROBES) {
                for (int shard = 0; shard < 2; shard++) {
                    Object reply = c.call(shard, p.command(""), TimeUnit.SECONDS.toNanos(20));
                    assertEquals(p.expected("", shard), TestData.canon(reply), "shard " + shard + ": " + p);
                }
            }
        }
    }

    @Test
    void binaryLookupNamesAPlatformBinary() {
        assertEquals("redis-server-6.2.6-v5-linux-amd64", RedisServers.embeddedResource("Linux", "amd64"));
        assertEquals("redis-server-6.2.7-linux-arm64", RedisServers.embeddedResource("Linux", "aarch64"));
        assertEquals("redis-server-6.2.6-v5-darwin-arm64", RedisServers.embeddedResource("Mac OS X", "aarch64"));
        assertEquals(null, RedisServers.embeddedResource("Windows 11", "amd64"));
        assertNotNull(RedisServers.findBinary());
    }

    @Test
    void closeStopsEveryServerIncludingAPausedOne() {
        RedisServers s = RedisServers.start(3, 0);
        long[] pids = {s.pid(0), s.pid(1), s.pid(2)};
        s.pause(1);
        s.kill(2);
        assertFalse(alive(pids[2]));
        s.close();
        for (long pid : pids) {
            assertFalse(alive(pid), "redis-server " + pid + " still runs after close");
        }
    }

    @Test
    void serversOfAKilledJvmAreStoppedByTheWatchdog() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), OrphanProbe.class.getName())
                .redirectErrorStream(true).start();
        long pid;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            do {
                line = r.readLine();
                assertNotNull(line, "the probe JVM ended without starting redis-server");
            } while (!line.startsWith("pid "));
            pid = Long.parseLong(line.substring(4).trim());
            assertTrue(alive(pid));
            child.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertTrue(child.waitFor(20, TimeUnit.SECONDS));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (alive(pid) && System.nanoTime() - deadline < 0) {
                Thread.sleep(100);
            }
            assertFalse(alive(pid), "redis-server " + pid + " outlived its SIGKILLed JVM");
        } finally {
            child.destroyForcibly();
        }
    }

    private static boolean alive(long pid) {
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        return h.isPresent() && h.get().isAlive();
    }
}
