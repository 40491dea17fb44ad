package io.doubleface.kv;

import io.doubleface.driver.Command;
import io.doubleface.driver.ShardDriver;
import io.doubleface.testing.ReadinessContract;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Timeout;

/** Warm start and readiness over KV leaves, under every model ({@link ReadinessContract}). */
@Timeout(600)
class KvReadinessTest extends ReadinessContract {

    @Override
    protected LiveShard startShard() {
        KvLeafServer leaf = KvLeafServer.builder().shards(1).basePort(0).records(100).start();
        return new LiveShard(leaf.addresses().get(0), leaf);
    }

    @Override
    protected ShardDriver<?> driver(List<InetSocketAddress> shards) {
        return new KvDriver(shards);
    }

    @Override
    protected Command<?> read(int shard) {
        return KvRequest.readField(1, 0);
    }
}
