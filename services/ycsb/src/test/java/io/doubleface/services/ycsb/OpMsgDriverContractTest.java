package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.kv.KvRequest;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.testing.DriverContract;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The driver contract ({@link DriverContract}) for a driver written outside the framework on its
 * public SPI: our OP_MSG record driver ({@code mongodb+loop://}) over mongo-java-server shards.
 */
class OpMsgDriverContractTest extends DriverContract<KvRequest> {

    static final long RECORDS = RecordStoresTest.RECORDS;
    static MongoLeafServer leaf;

    @BeforeAll
    static void start() {
        leaf = MongoLeafServer.builder().shards(2).start();
        MongoRecords.load(leaf.uri(), RECORDS, n -> { });
    }

    @AfterAll
    static void stop() {
        leaf.close();
    }

    @Override
    protected List<InetSocketAddress> shards() {
        return leaf.addresses();
    }

    @Override
    protected ShardDriver<KvRequest> open(List<InetSocketAddress> shards, DriverSettings settings) {
        return new OpMsgDriver(OpMsgDriver.SCHEME + "://" + shards.stream()
                .map(a -> a.getHostString() + ":" + a.getPort()).collect(Collectors.joining(",")), settings, RECORDS);
    }

    @Override
    protected KvRequest command(int shard, int i) {
        return i % 3 == 2 ? KvRequest.scan(i % RECORDS, 5) : KvRequest.readField(i % RECORDS, i % 10);
    }

    @Override
    protected void assertReply(int shard, int i, Object reply) {
        assertArrayEquals(RecordStoresTest.expected(command(shard, i)), (byte[]) reply, command(shard, i).toString());
    }
}
