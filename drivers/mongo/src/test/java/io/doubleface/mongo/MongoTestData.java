package io.doubleface.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.ShardException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * The tests' data set, written through the driver itself: in collection {@value #COLL}, records
 * {@code 0 .. n-1}, each {@code {_id: k, field0: .., ..., field9: ..}} with {@value #FIELD_LENGTH}
 * letters per field that are a function of (key, field) alone (about 1 KB a record, as in YCSB).
 * Every shard holds the same records, so a query has the same answer on each. {@link Query}
 * pairs a {@code find} with the documents it must return.
 */
final class MongoTestData {

    /** The collection of the records: {@value}. */
    static final String COLL = "usertable";
    /** Fields per record: {@value}. */
    static final int FIELDS = 10;
    /** Letters per field: {@value}. */
    static final int FIELD_LENGTH = 100;
    /** Records per {@code insert} command when loading: {@value}. */
    static final int BATCH = 250;

    /** JSON with the BSON types spelt out, for messages. */
    private static final JsonWriterSettings EXTENDED = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build();

    private MongoTestData() {}

    /** The name of field {@code f}. */
    static String field(int f) {
        return "field" + f;
    }

    /** The value of field {@code f} of record {@code key}. */
    static String value(int key, int f) {
        char[] c = new char[FIELD_LENGTH];
        for (int i = 0; i < c.length; i++) {
            c[i] = (char) ('a' + Math.floorMod(key * 31 + f * 7 + i, 26));
        }
        return new String(c);
    }

    /** Record {@code key}, whole. */
    static BsonDocument record(int key) {
        BsonDocument d = new BsonDocument("_id", new BsonInt32(key));
        for (int f = 0; f < FIELDS; f++) {
            d.append(field(f), new BsonString(value(key, f)));
        }
        return d;
    }

    /** Record {@code key} projected on field {@code f} (and its {@code _id}). */
    static BsonDocument record(int key, int f) {
        return new BsonDocument("_id", new BsonInt32(key)).append(field(f), new BsonString(value(key, f)));
    }

    /** An {@code insert} command ({@code runCommand}) of records {@code from .. to-1}; the server replies {@code n: to - from}. */
    static MongoCommand<RawBsonDocument> insert(int from, int to) {
        BsonArray docs = new BsonArray();
        for (int k = from; k < to; k++) {
            docs.add(record(k));
        }
        return Mongo.runCommand(new BsonDocument("insert", new BsonString(COLL)).append("documents", docs));
    }

    /** The {@code insert} commands that load records {@code 0 .. records-1}, {@value #BATCH} a command. */
    static List<MongoCommand<RawBsonDocument>> inserts(int records) {
        List<MongoCommand<RawBsonDocument>> out = new ArrayList<>();
        for (int from = 0; from < records; from += BATCH) {
            out.add(insert(from, Math.min(records, from + BATCH)));
        }
        return out;
    }

    /** Checks the reply of an {@link #insert} of {@code count} records. */
    static void assertInserted(int count, Object reply) {
        RawBsonDocument r = assertInstanceOf(RawBsonDocument.class, reply);
        assertEquals(count, r.getNumber("n").intValue(), r.toJson());
    }

    /** Loads records {@code 0 .. records-1} into {@code shard} through a blocking client of the driver. */
    static void load(BlockingClient<MongoCommand<?>> c, int shard, int records) throws ShardException {
        for (int from = 0; from < records; from += BATCH) {
            int to = Math.min(records, from + BATCH);
            assertInserted(to - from, c.call(shard, insert(from, to), TimeUnit.SECONDS.toNanos(30)));
        }
    }

    /**
     * A {@code find} and the documents it must reply.
     *
     * @param name what it reads, for messages
     * @param command the command
     * @param expected the documents, in order
     */
    record Query(String name, MongoCommand<List<RawBsonDocument>> command, List<BsonDocument> expected) {
        /** Checks that {@code reply} is {@link #expected}. */
        void check(Object reply, String where) {
            assertDocuments(expected, reply, name + " " + where);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Record {@code key}, whole ({@code find({_id: key})}); no document if {@code key >= records}. */
    static Query read(int key, int records) {
        return new Query("read(" + key + ")", Mongo.find(COLL, Filters.eq("_id", key)),
                key < records ? List.of(record(key)) : List.of());
    }

    /** Field {@code f} of record {@code key} (a projection); no document if {@code key >= records}. */
    static Query readField(int key, int f, int records) {
        return new Query("readField(" + key + ", " + f + ")",
                Mongo.find(COLL, Filters.eq("_id", key), Projections.include(field(f)), null, 0),
                key < records ? List.of(record(key, f)) : List.of());
    }

    /** Up to {@code count} records from {@code start} in key order (a YCSB scan: {@code _id >= start}, sorted, limited). */
    static Query scan(int start, int count, int records) {
        List<BsonDocument> e = new ArrayList<>();
        for (int k = start; k < Math.min(records, start + count); k++) {
            e.add(record(k));
        }
        return new Query("scan(" + start + ", " + count + ")",
                Mongo.find(COLL, Filters.gte("_id", start), null, Sorts.ascending("_id"), count), e);
    }

    /** {@link #scan} of field {@code f} only. */
    static Query scanField(int start, int count, int f, int records) {
        List<BsonDocument> e = new ArrayList<>();
        for (int k = start; k < Math.min(records, start + count); k++) {
            e.add(record(k, f));
        }
        return new Query("scanField(" + start + ", " + count + ", " + f + ")", Mongo.find(COLL, Filters.gte("_id", start),
                Projections.include(field(f)), Sorts.ascending("_id"), count), e);
    }

    /** The records of {@code keys} ({@code _id $in}), in key order; keys {@code >= records} match nothing. */
    static Query ids(int records, Integer... keys) {
        List<BsonDocument> e = Arrays.stream(keys).filter(k -> k < records).sorted().map(MongoTestData::record).toList();
        return new Query("ids" + Arrays.toString(keys), Mongo.find(COLL, Filters.in("_id", keys), null,
                Sorts.ascending("_id"), 0), e);
    }

    /** Every record, in key order: with 1000 records about 1.1 MB, several batches (getMore). */
    static Query all(int records) {
        List<BsonDocument> e = new ArrayList<>();
        for (int k = 0; k < records; k++) {
            e.add(record(k));
        }
        return new Query("all", Mongo.find(COLL, Filters.empty(), null, Sorts.ascending("_id"), 0), e);
    }

    /** Checks that {@code reply} is the list of {@code expected} documents, in order (field for field). */
    static void assertDocuments(List<BsonDocument> expected, Object reply, String what) {
        List<?> actual = assertInstanceOf(List.class, reply, what);
        assertEquals(expected.size(), actual.size(), () -> what + ": number of documents");
        for (int i = 0; i < expected.size(); i++) {
            RawBsonDocument a = assertInstanceOf(RawBsonDocument.class, actual.get(i), what);
            if (!expected.get(i).equals(a)) {
                fail(what + ": document " + i + " is " + a.toJson(EXTENDED) + ", expected "
                        + expected.get(i).toJson(EXTENDED));
            }
        }
    }
}
