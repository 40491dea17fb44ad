package io.doubleface.services.ycsb;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardException;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.doubleface.mongo.Mongo;
import io.doubleface.mongo.MongoCommand;
import io.doubleface.mongo.MongoDriver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.RawBsonDocument;

/**
 * The records in MongoDB shards ({@code mongodb://}), read with a native {@code find}
 * ({@link Mongo#find}) through a {@link MongoDriver}: one document per record in
 * {@code usertable} of the shard's database (the connection string's, else {@value #DATABASE}),
 * {@code {_id: <key as int64>, field0: <binary>, …, field9: <binary>}} ({@link MongoLayout}). A READ
 * is {@code find({_id: k})} with the field's projection, a SCAN {@code find({_id: {$in: [keys]}})}
 * with the batch size of the whole answer; the reply documents are re-encoded into the canonical
 * bytes from their raw BSON, with no per-field objects. Immutable and thread-safe.
 */
public final class MongoRecords implements RecordStore<MongoCommand<?>> {

    /** Database of the records when the connection string names none: {@value}. */
    public static final String DATABASE = MongoLayout.DATABASE;

    /** Collection of the records: {@value}. */
    public static final String COLLECTION = MongoLayout.COLLECTION;

    /** Records per {@code update} command of {@link #load}: {@value}. */
    static final int LOAD_BATCH = 500;

    private final MongoDriver driver;
    private final long records;
    private final String[] databases;

    /**
     * @param driver the shards, not {@code null}
     * @param records records per shard ({@code --records}), {@code > 0}: SCANs wrap at it
     */
    public MongoRecords(MongoDriver driver, long records) {
        this.driver = Objects.requireNonNull(driver, "driver");
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        this.records = records;
        this.databases = new String[driver.shardCount()];
        for (int s = 0; s < databases.length; s++) {
            databases[s] = database(driver, s);
        }
    }

    /** The database of the records on shard {@code s}: the connection string's, else {@value #DATABASE}. */
    static String database(MongoDriver driver, int s) {
        String db = driver.shard(s).getDatabase();
        return db == null || db.isEmpty() ? DATABASE : db;
    }

    @Override
    public MongoDriver driver() {
        return driver;
    }

    /** {@return records per shard} */
    public long records() {
        return records;
    }

    @Override
    public MongoCommand<List<RawBsonDocument>> command(int shard, KvRequest r) {
        return Mongo.find(COLLECTION, MongoLayout.filter(r, records), MongoLayout.projection(r), null,
                MongoLayout.expectedDocuments(r, records)).inDatabase(databases[shard]);
    }

    @Override
    @SuppressWarnings("unchecked")
    public ByteBuf canonical(KvRequest r, Object reply) {
        // pooled: the caller releases it right after the JSON fragment is written
        ByteBuf out = ByteBufAllocator.DEFAULT.buffer(Records.replySize(r));
        String bad;
        try {
            bad = MongoLayout.writeReply(r, records, (List<RawBsonDocument>) reply, out);
        } catch (RuntimeException e) {
            bad = e.toString();
        }
        if (bad != null) {
            out.release();
            throw new IllegalStateException(bad + " (were the records loaded? doubleface load-data)");
        }
        return out;
    }

    /**
     * Upserts records {@code 0..records-1} into {@code usertable} of every shard of {@code uri},
     * through the driver's blocking client: {@code update} commands of {@value #LOAD_BATCH}
     * replace-with-upsert statements, unordered. Idempotent: loading twice leaves the same data.
     *
     * @param uri the shards ({@code mongodb://})
     * @param records records per shard, {@code > 0}
     * @param progress receives the records written so far over all shards
     * @throws IllegalArgumentException if the URI is malformed
     * @throws IllegalStateException if a shard cannot be reached or refuses the writes
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void load(String uri, long records, LongConsumer progress) {
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        long timeout = TimeUnit.SECONDS.toNanos(60);
        MongoDriver.Options options = MongoDriver.Options.DEFAULT.with(DriverSettings.DEFAULT
                .withConnectTimeout(Duration.ofSeconds(5)).withCallTimeout(Duration.ofSeconds(60)));
        long written = 0;
        try (MongoDriver d = MongoDriver.of(uri, options); BlockingClient client = d.openBlocking()) {
            for (int shard = 0; shard < d.shardCount(); shard++) {
                String db = database(d, shard);
                for (long from = 0; from < records; from += LOAD_BATCH) {
                    long to = Math.min(records, from + LOAD_BATCH);
                    BsonArray updates = new BsonArray();
                    for (long key = from; key < to; key++) {
                        updates.add(new BsonDocument("q", new BsonDocument("_id", new BsonInt64(key)))
                                .append("u", MongoLayout.document(key)).append("upsert", BsonBoolean.TRUE));
                    }
                    BsonDocument cmd = new BsonDocument("update", new BsonString(COLLECTION))
                            .append("updates", updates).append("ordered", BsonBoolean.FALSE);
                    RawBsonDocument reply;
                    try {
                        reply = (RawBsonDocument) client.call(shard, Mongo.runCommand(cmd).inDatabase(db), timeout);
                    } catch (ShardException e) {
                        throw new IllegalStateException("load-data: shard " + shard + " (" + d.shard(shard).getHosts()
                                + "): " + e.getMessage(), e);
                    }
                    if (reply.containsKey("writeErrors")) {
                        throw new IllegalStateException("load-data: shard " + shard + " refused writes: "
                                + reply.get("writeErrors"));
                    }
                    written += to - from;
                    progress.accept(written);
                }
            }
        }
    }
}
