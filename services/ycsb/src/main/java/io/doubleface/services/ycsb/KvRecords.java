package io.doubleface.services.ycsb;

import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.kv.KvRequest;
import io.netty.buffer.ByteBuf;
import java.util.Objects;

/**
 * The records on the built-in KV shards ({@code kv://}, {@code doubleface leaf kv}): the KV
 * protocol is the record read itself and its replies are canonical, so the command is the
 * {@link KvRequest} and the reply is read as it is. Also the store of any other driver of
 * {@link KvRequest}s with canonical replies, e.g. {@link OpMsgDriver} ({@code mongodb+loop://}).
 *
 * @param driver the KV driver (or another driver of record reads)
 */
public record KvRecords(ShardDriver<KvRequest> driver) implements RecordStore<KvRequest> {

    /** @param driver the KV driver, not {@code null} */
    public KvRecords {
        Objects.requireNonNull(driver, "driver");
    }

    @Override
    public KvRequest command(int shard, KvRequest read) {
        return read;
    }

    @Override
    public ByteBuf canonical(KvRequest read, Object reply) {
        return ((ByteBuf) reply).retain();
    }

    @Override
    public boolean repliesAreCanonical() {
        return true;
    }
}
