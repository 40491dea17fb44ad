package io.doubleface.mongo;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.testing.ReadinessContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Timeout;

/**
 * Warm start and readiness over mongo-java-server shards, under every model
 * ({@link ReadinessContract}): every loop's {@code MongoClient} has a pooled connection to its
 * shard before the first request, which the shard's proxy proves by refusing new ones.
 */
@Timeout(600)
class MongoReadinessTest extends ReadinessContract {

    @Override
    protected LiveShard startShard() {
        MongoLeafServer leaf = MongoLeafServer.builder().shards(1).start();
        return new LiveShard(leaf.addresses().get(0), leaf);
    }

    @Override
    protected ShardDriver<?> driver(List<InetSocketAddress> shards) {
        String uris = shards.stream().map(a -> "mongodb://" + a.getHostString() + ":" + a.getPort() + "/test")
                .collect(Collectors.joining(";"));
        return MongoDriver.of(uris, MongoDriver.Options.DEFAULT
                .withConnectTimeout(Duration.ofSeconds(1)).withCallTimeout(Duration.ofSeconds(10)));
    }

    @Override
    protected Command<?> read(int shard) {
        return Mongo.find("usertable", new Document("_id", 1));
    }
}
