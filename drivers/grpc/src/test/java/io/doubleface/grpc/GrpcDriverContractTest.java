package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.testing.DriverContract;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The driver contract ({@link DriverContract}) over real grpc-java leaves ({@link TestLeaves}). */
class GrpcDriverContractTest extends DriverContract<GrpcCall<?, ?>> {

    static final int RECORDS = 100;
    static final int SIZE = 64;
    static TestLeaves leaves;

    @BeforeAll
    static void start() {
        leaves = TestLeaves.start(2, RECORDS, Transport.AUTO);
    }

    @AfterAll
    static void stop() {
        leaves.close();
    }

    @Override
    protected List<InetSocketAddress> shards() {
        return leaves.addresses();
    }

    @Override
    protected ShardDriver<GrpcCall<?, ?>> open(List<InetSocketAddress> shards, DriverSettings settings) {
        return GrpcDriver.of(shards, settings);
    }

    @Override
    protected GrpcCall<?, ?> command(int shard, int i) {
        return TestLeaves.get(i % RECORDS, SIZE);
    }

    @Override
    protected void assertReply(int shard, int i, Object reply) {
        assertEquals(TestLeaves.reply(shard, i % RECORDS, SIZE), reply);
    }
}
