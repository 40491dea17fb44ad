package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code doubleface leaf redis} with real {@code redis-server} processes: the peers' keys
 * ({@code --peers-data}) written into every standalone shard, and once into a cluster where Redis
 * places them, read back through the driver (routed by key on the cluster).
 */
class LeafRedisCommandTest {

    private static final Redis<String, String> U = Redis.utf8();
    private static final long TIMEOUT = TimeUnit.SECONDS.toNanos(10);

    /** Waits for the leaf's listening line and returns the shard URI it names. */
    private static String awaitUri(CliRun r, CompletableFuture<Integer> exit) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        Pattern uri = Pattern.compile("(redis(-cluster)?://[0-9.:,\\-]+)\\)?\\s*$", Pattern.MULTILINE);
        while (System.nanoTime() < deadline) {
            assertTrue(!exit.isDone(), () -> "leaf redis ended: " + r.err());
            Matcher m = uri.matcher(r.out());
            if (r.out().contains("listening on") && m.find()) {
                return m.group(1);
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no listening line: " + r.out() + r.err());
    }

    private static void assertPeerKeys(String uri) throws Exception {
        try (RedisDriver d = RedisDriver.of(uri, DriverSettings.DEFAULT);
                BlockingClient<RedisCommand<?>> c = d.openBlocking()) {
            for (int i : new int[] {0, 7, 999}) {
                RedisCommand<String> small = U.get("s:" + i);
                RedisCommand<String> large = U.get("l:" + i);
                if (d.isCluster()) {
                    assertEquals(LeafRedisCommand.peerValue(i, 100), c.call(d.shardFor(small), small, TIMEOUT), "s:" + i);
                    assertEquals(LeafRedisCommand.peerValue(i, 20_000), c.call(d.shardFor(large), large, TIMEOUT), "l:" + i);
                } else {
                    for (int s = 0; s < d.shardCount(); s++) {
                        assertEquals(LeafRedisCommand.peerValue(i, 100), c.call(s, small, TIMEOUT), "s:" + i + " on " + s);
                        assertEquals(LeafRedisCommand.peerValue(i, 20_000), c.call(s, large, TIMEOUT), "l:" + i + " on " + s);
                    }
                }
            }
            RedisCommand<String> missing = U.get("s:1000");
            assertEquals(null, c.call(d.isCluster() ? d.shardFor(missing) : 0, missing, TIMEOUT), "only 1,000 keys");
        }
    }

    @Test
    void peersDataGoesIntoEveryStandaloneShard() throws Exception {
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start("leaf", "redis", "--shards", "2", "--base-port", "0", "--records", "5",
                "--peers-data");
        try {
            assertPeerKeys(awaitUri(r, exit));
            assertTrue(r.err().contains("loaded the peers' keys"), r.err());
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
    }

    @Test
    void peersDataGoesOnceIntoAClusterWhereRedisPlacesIt() throws Exception {
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start("leaf", "redis", "--cluster", "--masters", "3", "--base-port", "0",
                "--records", "5", "--peers-data");
        try {
            String uri = awaitUri(r, exit);
            assertTrue(uri.startsWith("redis-cluster://"), uri);
            assertPeerKeys(uri);
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
    }

    @Test
    void peerValuesAreThePeersBytes() {
        assertEquals("ahov", LeafRedisCommand.peerValue(0, 4).substring(0, 1) + LeafRedisCommand.peerValue(1, 4).substring(0, 1)
                + LeafRedisCommand.peerValue(2, 4).substring(0, 1) + LeafRedisCommand.peerValue(3, 4).substring(0, 1));
        assertEquals("hijk", LeafRedisCommand.peerValue(1, 4));
    }
}
