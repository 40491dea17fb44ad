package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import io.doubleface.driver.Command;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.testing.ReadinessContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Timeout;

/**
 * Warm start and readiness over gRPC leaves, one configuration of each model
 * ({@link ReadinessContract}): every channel is {@code READY} before the first request.
 */
@Timeout(600)
class GrpcReadinessTest extends ReadinessContract {

    @Override
    protected List<String> models() {
        return ONE_PER_MODEL;
    }

    @Override
    protected LiveShard startShard() {
        TestLeaves leaf = TestLeaves.start(1, 10, Transport.AUTO);
        return new LiveShard(leaf.addresses().get(0), leaf);
    }

    @Override
    protected ShardDriver<?> driver(List<InetSocketAddress> shards) {
        return GrpcDriver.of(shards, DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(10))
                .withConnectTimeout(Duration.ofSeconds(1)));
    }

    @Override
    protected Command<?> read(int shard) {
        return TestLeaves.get(1, 8);
    }
}
