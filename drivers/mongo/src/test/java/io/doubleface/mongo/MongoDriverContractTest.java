package io.doubleface.mongo;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.testing.DriverContract;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The driver contract ({@link DriverContract}) over embedded mongo-java-server shards. */
class MongoDriverContractTest extends DriverContract<MongoCommand<?>> {

    static final int RECORDS = 100;
    static MongoLeafServer leaf;

    @BeforeAll
    static void start() throws Exception {
        leaf = MongoLeafServer.builder().shards(2).start();
        try (MongoDriver d = MongoDriver.of(leaf.uri()); BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
            for (int s = 0; s < 2; s++) {
                MongoTestData.load(c, s, RECORDS);
            }
        }
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
    protected ShardDriver<MongoCommand<?>> open(List<InetSocketAddress> shards, DriverSettings settings) {
        String uri = "mongodb://" + shards.stream().map(a -> a.getHostString() + ":" + a.getPort())
                .collect(Collectors.joining(","));
        return MongoDriver.of(uri, MongoDriver.Options.DEFAULT.with(settings));
    }

    @Override
    protected MongoCommand<?> command(int shard, int i) {
        return MongoTestData.read(i % RECORDS, RECORDS).command();
    }

    @Override
    protected void assertReply(int shard, int i, Object reply) {
        MongoTestData.read(i % RECORDS, RECORDS).check(reply, "shard " + shard + ", command " + i);
    }
}
