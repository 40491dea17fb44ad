package io.doubleface.services.ycsb;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.kv.KvRequest;
import io.netty.buffer.ByteBuf;

/**
 * Where the YCSB records live, and how a READ or SCAN ({@link KvRequest}) is said in that
 * store's own language through its driver's public API: the KV protocol as it is
 * ({@link KvRecords}), Redis {@code HGET/HMGET/MGET} ({@link RedisRecords}), a MongoDB
 * {@code find} ({@link MongoRecords}), the gRPC {@code doubleface.kv.v1.KvService}
 * ({@link GrpcRecords}). Each store turns its reply back into the canonical encoding of
 * {@link io.doubleface.kv.Records#writeReply}, so a query's response is byte-identical whatever
 * store served it.
 *
 * <p>Implementations are immutable and thread-safe: {@link #command} runs while a request is
 * planned, {@link #canonical} where the threading model runs reply handlers.
 *
 * @param <C> the driver's command type
 */
public interface RecordStore<C extends Command<?>> {

    /** {@return the driver of the store's shards (added to the server as the backend {@code "records"})} */
    ShardDriver<C> driver();

    /**
     * The store's command for {@code read} on shard {@code shard}.
     *
     * @param shard the shard, {@code 0 .. driver().shardCount()-1}
     * @param read the READ or SCAN
     * @return the command; its reply goes to {@link #canonical}
     */
    C command(int shard, KvRequest read);

    /**
     * The canonical encoding of {@code reply}, the answer to {@code read}.
     *
     * @param read the READ or SCAN the command was made for
     * @param reply the store's reply to {@link #command}{@code (shard, read)}
     * @return a buffer the caller releases (for a store whose reply is already canonical, the
     *     reply itself, retained)
     * @throws IllegalStateException if the reply is not the record asked for (missing, malformed:
     *     the records were not loaded, see {@code doubleface load-data})
     */
    ByteBuf canonical(KvRequest read, Object reply);

    /**
     * {@return whether replies are already in the canonical encoding (the KV store): then the
     * service reads them as they are, with no call to {@link #canonical} and no copy}
     */
    default boolean repliesAreCanonical() {
        return false;
    }

    /**
     * {@return whether the store places records itself (a Redis Cluster): then every read is planned
     * routed by its key ({@code plan.call(backend, command, onReply)}), the record store's
     * {@link #command} ignores the shard, and a query may read more records than there are shards}
     */
    default boolean routedByKey() {
        return false;
    }
}
