package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.api.Backend;
import io.doubleface.driver.Command;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.server.FanoutServer;
import io.doubleface.testing.ReadinessContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Warm start and readiness over a real redis-server, one configuration of each model
 * ({@link ReadinessContract}), with Lettuce per-loop connections and with native RESP connections.
 */
@Timeout(600)
class RedisReadinessTest {

    static final DriverSettings SETTINGS = DriverSettings.DEFAULT
            .withCallTimeout(Duration.ofSeconds(10)).withConnectTimeout(Duration.ofSeconds(1));
    /**
     * A Redis Cluster: every master is connected on every loop before {@code awaitReady} returns,
     * under the loop and the thread models (the latter through the cluster client on a driver loop).
     */
    @Test
    void aClusterIsReadyOnceEveryMasterIsConnected() throws Exception {
        try (RedisServers cluster = RedisServers.startCluster(3, 0, 0, "127.0.0.1")) {
            for (String model : List.of("doubleface", "thread-8")) {
                FanoutServer.Builder b = FanoutServer.builder();
                Backend<RedisCommand<?>> backend = b.backend("c", RedisDriver.of(cluster.uri(), SETTINGS));
                FanoutServer server = ReadinessContract.readRoute(b, backend, shard -> Redis.utf8().get("k" + shard))
                        .port(0).adminPort(0).ioThreads(2).configuration(model).start();
                try {
                    server.awaitReady(Duration.ofSeconds(60));
                    ReadinessContract.Answer r = ReadinessContract.get(server, "/ready");
                    assertEquals(200, r.status(), r.toString());
                    ReadinessContract.assertReadAll(server, 3);
                } finally {
                    server.close();
                }
            }
        }
    }

    /** The contract over {@code ?connection=mode}. */
    abstract static class Mode extends ReadinessContract {
        abstract String mode();

        @Override
        protected List<String> models() {
            return ONE_PER_MODEL;
        }

        @Override
        protected LiveShard startShard() {
            RedisServers servers = RedisServers.start(1, 0);
            return new LiveShard(servers.addresses().get(0), servers);
        }

        @Override
        protected ShardDriver<?> driver(List<InetSocketAddress> shards) {
            String hosts = shards.stream().map(a -> a.getHostString() + ":" + a.getPort())
                    .collect(Collectors.joining(","));
            return RedisDriver.of("redis://" + hosts + "?connection=" + mode(), SETTINGS);
        }

        @Override
        protected Command<?> read(int shard) {
            return Redis.utf8().get("k");
        }
    }

    @Nested
    class PerLoop extends Mode {
        @Override
        String mode() {
            return "per-loop";
        }
    }

    @Nested
    class Native extends Mode {
        @Override
        String mode() {
            return "native";
        }
    }
}
