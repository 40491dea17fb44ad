package io.doubleface.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.driver.Command;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.server.FanoutServer;
import io.doubleface.testing.ReadinessContract;
import io.doubleface.testing.StallingProxy;
import java.time.Duration;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Warm start and readiness over KV leaves, under every model ({@link ReadinessContract}). */
@Timeout(600)
class KvReadinessTest extends ReadinessContract {

    @Override
    protected LiveShard startShard() {
        KvLeafServer leaf = KvLeafServer.builder().shards(1).basePort(0).records(100).start();
        return new LiveShard(leaf.addresses().get(0), leaf);
    }

    /**
     * A prepared configuration connects when it is built, not when it is switched to: with one
     * connection per shard per loop client, the shard's proxy sees those of the active
     * configuration (two I/O loops) and of the prepared one (two backend loops); then it refuses
     * new connections, and the first request after the switch is served.
     */
    @Test
    void aPreparedConfigurationIsConnectedBeforeTheSwitch() throws Exception {
        try (StallingProxy shard = new StallingProxy(liveAddress())) {
            FanoutServer.Builder b = FanoutServer.builder();
            Backend<KvRequest> backend = b.backend("b", KvDriver.of(List.of(shard.address())));
            FanoutServer server = readRoute(b, backend, s -> read(s)).port(0).adminPort(0).ioThreads(2)
                    .configuration("doubleface").prepare(List.of("type2a-1f2b")).start();
            try {
                server.awaitReady(Duration.ofSeconds(30));
                assertEquals(4, shard.awaitAccepted(4, Duration.ofSeconds(30)), "2 I/O loops + 2 backend loops");
                shard.stopAccepting();
                server.switchTo("type2a-1f2b");
                assertReadAll(server, 1);
                assertTrue(server.isReady(), "a switch does not make the server unready");
                assertEquals(4, shard.accepted());
            } finally {
                server.close();
            }
        }
    }

    @Override
    protected ShardDriver<?> driver(List<InetSocketAddress> shards) {
        return KvDriver.of(shards);
    }

    @Override
    protected Command<?> read(int shard) {
        return KvRequest.readField(1, 0);
    }
}
