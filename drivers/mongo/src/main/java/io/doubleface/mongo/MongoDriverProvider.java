package io.doubleface.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardDriver;
import io.doubleface.driver.ShardDriverProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import org.bson.RawBsonDocument;

/**
 * The {@code mongodb://} scheme: {@link MongoDriver} over MongoDB deployments or
 * {@link MongoLeafServer} shards, and {@link #loadData} to write the dataset into them.
 */
public final class MongoDriverProvider implements ShardDriverProvider {

    /** Records per bulk write of {@link #loadData}: {@value}. */
    static final int LOAD_BATCH = 500;

    /** Time limit of one bulk write of {@link #loadData}: {@value} s. */
    static final long LOAD_BATCH_TIMEOUT_SECONDS = 60;

    /** Instantiated by {@link java.util.ServiceLoader}. */
    public MongoDriverProvider() {}

    @Override
    public List<String> schemes() {
        return List.of(MongoDriver.SCHEME, MongoDriver.LOOP_SCHEME);
    }

    @Override
    public String usage() {
        return "mongodb://HOST:FIRST-LAST[?transport=netty|aio|aio-fixed|loop&poolSize=N], mongodb://HOST:PORT,HOST:PORT,... "
                + "or full connection strings 'mongodb://HOSTS/[DB][?OPTIONS];mongodb://...' (doubleface leaf mongo); "
                + "mongodb+loop://HOST:FIRST-LAST: the per-loop OP_MSG client";
    }

    @Override
    public ShardDriver<?> open(String uri, DriverSettings s) {
        return MongoDriver.open(uri, MongoDriver.Options.DEFAULT.with(s));
    }

    /**
     * Upserts records {@code 0..records-1} into {@code ycsb.usertable} of every shard, in unordered
     * bulk writes of {@value #LOAD_BATCH} replace-with-upsert operations, with the sync driver.
     * Idempotent: loading twice leaves the same data.
     */
    @Override
    public void loadData(String uri, long records, LongConsumer progress) {
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        MongoDriver.ShardList list = MongoDriver.parse(uri);
        MongoDriver d = new MongoDriver(list.shards(), MongoDriver.Options.DEFAULT.withParameters(list.options())
                .withConnectTimeout(Duration.ofSeconds(5)).withCallTimeout(Duration.ofSeconds(LOAD_BATCH_TIMEOUT_SECONDS)));
        long written = 0;
        try {
            for (int shard = 0; shard < d.shardCount(); shard++) {
                ConnectionString cs = list.shards().get(shard);
                try (MongoClient client = MongoClients.create(d.settings(shard, null, null, 4, true))) {
                    MongoCollection<RawBsonDocument> coll = client.getDatabase(d.database(shard))
                            .getCollection(MongoRecords.COLLECTION, RawBsonDocument.class);
                    List<WriteModel<RawBsonDocument>> batch = new ArrayList<>(LOAD_BATCH);
                    ReplaceOptions upsert = new ReplaceOptions().upsert(true);
                    BulkWriteOptions unordered = new BulkWriteOptions().ordered(false);
                    for (long key = 0; key < records; key++) {
                        batch.add(new ReplaceOneModel<>(Filters.eq("_id", key), MongoRecords.document(key), upsert));
                        if (batch.size() == LOAD_BATCH || key == records - 1) {
                            coll.bulkWrite(batch, unordered);
                            written += batch.size();
                            batch.clear();
                            progress.accept(written);
                        }
                    }
                } catch (RuntimeException e) {
                    throw new IllegalStateException("load-data: shard " + shard + " (" + String.join(",", cs.getHosts())
                            + "): " + e.getMessage(), e);
                }
            }
        } finally {
            d.close();
        }
    }
}
