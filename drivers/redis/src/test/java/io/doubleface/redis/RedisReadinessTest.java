package io.doubleface.redis;

import io.doubleface.driver.Command;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardDriver;
import io.doubleface.testing.ReadinessContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Timeout;

/**
 * Warm start and readiness over a real redis-server, one configuration of each model
 * ({@link ReadinessContract}), with Lettuce per-loop connections and with native RESP connections.
 */
@Timeout(600)
class RedisReadinessTest {

    static final DriverSettings SETTINGS = DriverSettings.DEFAULT
            .withCallTimeout(Duration.ofSeconds(10)).withConnectTimeout(Duration.ofSeconds(1));
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
            return RedisDriver.open("redis://" + hosts + "?connection=" + mode(), SETTINGS);
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
