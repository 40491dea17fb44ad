package io.doubleface.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.ShardException;
import io.doubleface.mongo.MongoTestData.Query;
import io.doubleface.testing.StallingProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The blocking (sync driver) client against real mongo-java-server shards, with data written through the driver. */
class MongoBlockingClientTest {

    static final int RECORDS = MongoLoopClientTest.RECORDS;
    static final long LONG = TimeUnit.SECONDS.toNanos(10);
    static MongoLeafServer leaf;

    @BeforeAll
    static void start() throws Exception {
        leaf = MongoLeafServer.builder().shards(3).start();
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), MongoLoopClientTest.options());
                BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
            for (int shard = 0; shard < 3; shard++) {
                MongoTestData.load(c, shard, RECORDS);
            }
        }
    }

    @AfterAll
    static void stop() {
        leaf.close();
    }

    @Test
    void callReturnsTheStoredDocuments() throws Exception {
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), MongoLoopClientTest.options());
                BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
            for (Query q : MongoLoopClientTest.QUERIES) {
                for (int shard = 0; shard < 3; shard++) {
                    q.check(c.call(shard, q.command(), LONG), "on shard " + shard);
                }
            }
            // writes, and their typed replies: the inserted _id, the counts modified and deleted
            assertEquals(new BsonString("b"), assertInstanceOf(BsonValue.class,
                    c.call(1, Mongo.insertOne("scratch", new Document("_id", "b").append("v", 1)), LONG)));
            assertEquals(1L, c.call(1, Mongo.updateMany("scratch", Filters.eq("_id", "b"), Updates.inc("v", 1)), LONG));
            MongoTestData.assertDocuments(List.of(new BsonDocument("_id", new BsonString("b")).append("v", new BsonInt32(2))),
                    c.call(1, Mongo.find("scratch", Filters.empty()), LONG), "written document");
            assertEquals(0L, c.call(0, Mongo.deleteMany("scratch", Filters.empty()), LONG), "shard 0 holds none");
            assertEquals(1L, c.call(1, Mongo.deleteMany("scratch", Filters.empty()), LONG));
        }
    }

    /** A record that is not there is no document, not an error; a command the server refuses is a SHARD_ERROR. */
    @Test
    void missingRecordIsNoDocumentAndAServerErrorIsAShardError() throws Exception {
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), MongoLoopClientTest.options());
                BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
            Query missing = MongoTestData.read(RECORDS, RECORDS);
            missing.check(c.call(0, missing.command(), LONG), "on shard 0");
            ShardException e = assertThrows(ShardException.class,
                    () -> c.call(0, Mongo.runCommand(new Document("noSuchCommand", 1)), LONG));
            assertEquals(ShardException.Kind.SHARD_ERROR, e.kind(), e.toString());
            assertEquals(0, e.shard());
            assertTrue(e.getMessage().contains("noSuchCommand"), e.getMessage());
            // a write the server refuses: record 3 is there (duplicate key)
            e = assertThrows(ShardException.class, () -> c.call(2, Mongo.insertOne(MongoTestData.COLL, MongoTestData.record(3)), LONG));
            assertEquals(ShardException.Kind.SHARD_ERROR, e.kind(), e.toString());
            assertEquals(2, e.shard());
            assertTrue(e.getMessage().contains("duplicate key"), e.getMessage());
            // the shards that refused the commands answer the next ones, record 3 unchanged
            MongoTestData.read(3, RECORDS).check(c.call(0, MongoTestData.read(3, RECORDS).command(), LONG), "after the errors");
            MongoTestData.read(3, RECORDS).check(c.call(2, MongoTestData.read(3, RECORDS).command(), LONG), "after the errors");
        }
    }

    @Test
    void callAllGivesEveryIndexOneOutcomeOnTheCallingThread() throws Exception {
        int records = 200;
        try (MongoLeafServer own = MongoLeafServer.builder().shards(3).start();
                MongoDriver d = MongoDriver.of(MongoDriver.parse(own.uri()).shards(),
                        MongoLoopClientTest.options().withConnectTimeout(Duration.ofMillis(500)));
                BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
            for (int shard = 0; shard < 3; shard++) {
                MongoTestData.load(c, shard, records);
            }
            int n = 9;
            int[] shards = new int[n];
            Query[] queries = new Query[n];
            List<MongoCommand<?>> commands = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                shards[i] = i % 3;
                queries[i] = i % 2 == 0 ? MongoTestData.scan(i * 20, 20, records) : MongoTestData.readField(i, i, records);
                commands.add(queries[i].command());
            }
            Object[] replies = new Object[n];
            ShardException[] failures = new ShardException[n];
            Thread caller = Thread.currentThread();
            BlockingClient.Sink sink = new BlockingClient.Sink() {
                @Override
                public void onReply(int index, Object value) {
                    assertSame(caller, Thread.currentThread());
                    assertNull(replies[index]);
                    assertNull(failures[index]);
                    replies[index] = value;
                }

                @Override
                public void onFailure(int index, ShardException cause) {
                    assertSame(caller, Thread.currentThread());
                    assertNull(replies[index]);
                    assertNull(failures[index]);
                    failures[index] = cause;
                }
            };
            c.callAll(shards, commands, LONG, sink);
            for (int i = 0; i < n; i++) {
                assertNull(failures[i], () -> Arrays.toString(failures));
                queries[i].check(replies[i], "index " + i + " on shard " + shards[i]);
            }

            own.stop(2);
            Arrays.fill(replies, null);
            c.callAll(shards, commands, LONG, sink);
            for (int i = 0; i < n; i++) {
                if (shards[i] == 2) {
                    assertNotNull(failures[i], "index " + i);
                    assertEquals(ShardException.Kind.UNAVAILABLE, failures[i].kind(), failures[i].toString());
                    assertEquals(2, failures[i].shard());
                } else {
                    assertNull(failures[i], "index " + i);
                    queries[i].check(replies[i], "index " + i + " on shard " + shards[i]);
                }
            }

            // a server error is the failure of its index only
            Arrays.fill(replies, null);
            Arrays.fill(failures, null);
            c.callAll(new int[] {0, 1}, List.of(Mongo.runCommand(new Document("noSuchCommand", 1)), queries[1].command()),
                    LONG, sink);
            assertEquals(ShardException.Kind.SHARD_ERROR, failures[0].kind(), failures[0].toString());
            queries[1].check(replies[1], "beside a server error");
        }
    }

    @Test
    void shardThatStopsAnsweringTimesOut() throws Exception {
        try (StallingProxy proxy = new StallingProxy(leaf.addresses().get(0));
                MongoDriver d = MongoDriver.of(MongoDriver.parse("mongodb://127.0.0.1:" + proxy.port()).shards(),
                        MongoLoopClientTest.options());
                BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
            MongoTestData.read(1, RECORDS).check(c.call(0, MongoTestData.read(1, RECORDS).command(), LONG), "through the proxy");
            proxy.stall(true);
            ShardException e = assertThrows(ShardException.class,
                    () -> c.call(0, MongoTestData.read(2, RECORDS).command(), TimeUnit.MILLISECONDS.toNanos(300)));
            assertEquals(ShardException.Kind.TIMEOUT, e.kind(), e.toString());
        }
    }

    @Test
    void closedClientFailsWithClosed() throws Exception {
        MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), MongoLoopClientTest.options());
        BlockingClient<MongoCommand<?>> c = d.openBlocking();
        MongoTestData.read(1, RECORDS).check(c.call(0, MongoTestData.read(1, RECORDS).command(), LONG), "before close");
        d.close();
        ShardException e = assertThrows(ShardException.class, () -> c.call(0, MongoTestData.read(2, RECORDS).command(), LONG));
        assertEquals(ShardException.Kind.CLOSED, e.kind());
        assertThrows(IllegalStateException.class, d::openBlocking);
    }
}
