package io.doubleface.services.ycsb;

import io.doubleface.driver.Command;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.kv.KvRequest;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.testing.ReadinessContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;

/**
 * Warm start and readiness of a driver written outside the framework on its public SPI — the
 * OP_MSG record driver ({@code mongodb+loop://}): its loop face is a {@code PipelinedLoopClient},
 * its blocking face the MongoDB driver's; one configuration of each model ({@link ReadinessContract}).
 */
@Timeout(600)
class OpMsgReadinessTest extends ReadinessContract {

    @Override
    protected List<String> models() {
        return ONE_PER_MODEL;
    }

    @Override
    protected LiveShard startShard() {
        MongoLeafServer leaf = MongoLeafServer.builder().shards(1).start();
        MongoRecords.load(leaf.uri(), RecordStoresTest.RECORDS, n -> { });
        return new LiveShard(leaf.addresses().get(0), leaf);
    }

    @Override
    protected ShardDriver<?> driver(List<InetSocketAddress> shards) {
        return new OpMsgDriver(OpMsgDriver.SCHEME + "://" + shards.stream()
                .map(a -> a.getHostString() + ":" + a.getPort()).collect(Collectors.joining(",")),
                DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(10)).withConnectTimeout(Duration.ofSeconds(1)),
                RecordStoresTest.RECORDS);
    }

    @Override
    protected Command<?> read(int shard) {
        return KvRequest.readField(1, 0);
    }
}
