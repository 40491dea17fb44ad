package io.doubleface.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.testing.DriverContract;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The driver contract ({@link DriverContract}) over real KV leaf shards. */
class KvDriverContractTest extends DriverContract<KvRequest> {

    static final int RECORDS = 100;
    static KvLeafServer leaf;

    @BeforeAll
    static void start() {
        leaf = KvLeafServer.builder().shards(2).records(RECORDS).start();
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
    protected ShardDriver<KvRequest> open(List<InetSocketAddress> shards, DriverSettings s) {
        return KvDriver.of(shards, KvDriver.Options.DEFAULT.withConnectTimeout(s.connectTimeout())
                .withCallTimeout(s.callTimeout()).withMaxOutstanding(s.maxOutstanding()));
    }

    @Override
    protected KvRequest command(int shard, int i) {
        return KvRequest.readField(i % RECORDS, i % Records.FIELD_COUNT);
    }

    @Override
    protected void assertReply(int shard, int i, Object reply) {
        KvRequest r = command(shard, i);
        ByteBuf expected = Unpooled.buffer(Records.replySize(r));
        Records.writeReply(r, RECORDS, expected);
        assertArrayEquals(ByteBufUtil.getBytes(expected), (byte[]) reply, r.toString());
    }
}
