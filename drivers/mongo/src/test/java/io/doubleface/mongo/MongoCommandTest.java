package io.doubleface.mongo;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import io.doubleface.driver.Command;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Native MongoDB commands ({@link Mongo}) through the loop and blocking clients, against mongo-java-server shards. */
@Timeout(120)
class MongoCommandTest {

    static final long T = TimeUnit.SECONDS.toNanos(10);

    static MongoLeafServer leaf;
    static LoopGroup loops;
    static ShardDriver<MongoCommand<?>> driver;

    @BeforeAll
    static void start() {
        leaf = MongoLeafServer.builder().shards(2).start();
        loops = new LoopGroup("mongo-cmd", 1, Transport.AUTO);
        driver = MongoDriver.of(leaf.uri(), MongoLoopClientTest.options());
    }

    @AfterAll
    static void stop() {
        if (driver != null) {
            driver.close();
        }
        if (loops != null) {
            loops.close();
        }
        if (leaf != null) {
            leaf.close();
        }
    }

    static Object onLoop(LoopClient<MongoCommand<?>> client, int shard, MongoCommand<?> command) throws Exception {
        CompletableFuture<Object> out = new CompletableFuture<>();
        EventLoop loop = client.loop();
        loop.execute(() -> client.send(shard, command, new ReplyListener() {
            @Override
            public void onReply(int tag, Object reply) {
                if (!loop.inEventLoop()) {
                    out.completeExceptionally(new AssertionError("reply off the loop"));
                }
                out.complete(reply);
            }

            @Override
            public void onFailure(int tag, ShardException cause) {
                out.completeExceptionally(cause);
            }
        }, 1));
        try {
            return out.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    @Test
    void insertFindSortLimitUpdateDeleteAggregateThroughTheLoopClient() throws Exception {
        LoopClient<MongoCommand<?>> c = driver.openOn(loops.loops().get(0));
        try {
            for (int i = 0; i < 5; i++) {
                Object id = onLoop(c, 1, Mongo.insertOne("posts", new Document("_id", i).append("author", i % 2)
                        .append("ts", 100 + i).append("text", "post " + i)));
                assertEquals(i, ((BsonValue) id).asInt32().getValue());
            }
            @SuppressWarnings("unchecked")
            List<RawBsonDocument> newest = (List<RawBsonDocument>) onLoop(c, 1, Mongo.find("posts",
                    Filters.eq("author", 0), Projections.include("ts", "text"), Sorts.descending("ts"), 2));
            assertEquals(List.of(104, 102), newest.stream().map(d -> d.getInt32("ts").getValue()).toList());
            assertEquals("post 4", newest.get(0).getString("text").getValue());
            assertTrue(!newest.get(0).containsKey("author"), "projection applied");
            assertEquals(0, ((List<?>) onLoop(c, 0, Mongo.find("posts", Filters.eq("author", 0)))).size(),
                    "shard 0 holds no posts");
            assertEquals(3L, onLoop(c, 1, Mongo.updateMany("posts", Filters.eq("author", 0), Updates.set("seen", true))));
            @SuppressWarnings("unchecked")
            List<Document> seen = (List<Document>) onLoop(c, 1, Mongo.find("posts", Filters.eq("seen", true), null,
                    Sorts.ascending("_id"), 0, Document.class));
            assertEquals(List.of(0, 2, 4), seen.stream().map(d -> d.getInteger("_id")).toList());
            @SuppressWarnings("unchecked")
            List<RawBsonDocument> perAuthor = (List<RawBsonDocument>) onLoop(c, 1, Mongo.aggregate("posts", List.of(
                    Aggregates.group("$author", Accumulators.sum("n", 1)), Aggregates.sort(Sorts.ascending("_id")))));
            assertEquals(2, perAuthor.size());
            assertEquals(3, perAuthor.get(0).getInt32("n").getValue());
            assertEquals(2L, onLoop(c, 1, Mongo.deleteMany("posts", Filters.eq("author", 1))));
            RawBsonDocument count = (RawBsonDocument) onLoop(c, 1, Mongo.runCommand(new Document("count", "posts")));
            assertEquals(3, count.getNumber("n").intValue());
            assertEquals(0, ((List<?>) onLoop(c, 1, Mongo.find("posts", Filters.empty()).inDatabase("other"))).size(),
                    "another database of the same shard");
        } finally {
            c.close();
        }
    }

    @Test
    void serverErrorFailsTheCallWithMongosMessage() throws Exception {
        LoopClient<MongoCommand<?>> c = driver.openOn(loops.loops().get(0));
        try {
            onLoop(c, 0, Mongo.insertOne("dup", new Document("_id", "x")));
            ShardException e = assertThrows(ShardException.class,
                    () -> onLoop(c, 0, Mongo.insertOne("dup", new Document("_id", "x"))));
            assertEquals(ShardException.Kind.SHARD_ERROR, e.kind(), e.getMessage());
            assertTrue(e.getMessage().contains("duplicate key"), e.getMessage());
        } finally {
            c.close();
        }
    }

    @Test
    void blockingClientRunsTheSameCommands() throws Exception {
        try (BlockingClient<MongoCommand<?>> b = driver.openBlocking()) {
            b.call(0, Mongo.insertOne("b", new Document("_id", 1).append("v", "one")), T);
            b.call(1, Mongo.insertOne("b", new Document("_id", 2).append("v", "two")), T);
            @SuppressWarnings("unchecked")
            List<RawBsonDocument> one = (List<RawBsonDocument>) b.call(0, Mongo.find("b", Filters.eq("_id", 1)), T);
            assertEquals("one", one.get(0).getString("v").getValue());
            List<Object> replies = new ArrayList<>(List.of("-", "-"));
            List<MongoCommand<?>> both = List.of(Mongo.find("b", Filters.empty()), Mongo.find("b", Filters.empty()));
            b.callAll(new int[] {0, 1}, both, T, new BlockingClient.Sink() {
                @Override
                public void onReply(int index, Object reply) {
                    replies.set(index, ((List<?>) reply).size());
                }

                @Override
                public void onFailure(int index, ShardException cause) {
                    replies.set(index, cause);
                }
            });
            assertEquals(List.of(1, 1), replies);
        }
    }

    /**
     * Commands run in the database of the shard's connection string, else in
     * {@value MongoDriver#DEFAULT_DATABASE}, unless they name one ({@link MongoCommand#inDatabase}).
     */
    @Test
    void commandsRunInTheConnectionStringsDatabaseElseTest() throws Exception {
        assertEquals("test", MongoDriver.DEFAULT_DATABASE);
        try (MongoDriver app = MongoDriver.of("mongodb://127.0.0.1:" + leaf.port(0) + "/app;mongodb://127.0.0.1:"
                + leaf.port(1) + "/", MongoLoopClientTest.options());
                BlockingClient<MongoCommand<?>> b = app.openBlocking()) {
            assertEquals("app", app.shard(0).getDatabase());
            assertEquals("app", app.database(0));
            assertEquals(MongoDriver.DEFAULT_DATABASE, app.database(1));
            b.call(0, Mongo.insertOne("where", new Document("_id", "in-app")), T);
            b.call(1, Mongo.insertOne("where", new Document("_id", "in-test")), T);
            LoopClient<MongoCommand<?>> c = driver.openOn(loops.loops().get(0)); // no database in its URI: "test"
            try {
                assertEquals(List.of(), ids(onLoop(c, 0, Mongo.find("where", Filters.empty()))));
                assertEquals(List.of("in-app"), ids(onLoop(c, 0, Mongo.find("where", Filters.empty()).inDatabase("app"))));
                assertEquals(List.of("in-test"), ids(onLoop(c, 1, Mongo.find("where", Filters.empty()))));
                assertEquals(List.of("in-test"), ids(b.call(1, Mongo.find("where", Filters.empty()).inDatabase("test"), T)));
                assertEquals(List.of(), ids(b.call(0, Mongo.find("where", Filters.empty()).inDatabase("test"), T)));
            } finally {
                c.close();
            }
        }
        Command<?> named = Mongo.find("x", Filters.empty()).inDatabase("db");
        assertTrue(named.toString().startsWith("db.x.find("), named.toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MongoDriver.of("mongodb+loop://127.0.0.1:" + leaf.port(0)));
        assertTrue(e.getMessage().contains("expected mongodb://"), e.getMessage());
    }

    static List<String> ids(Object reply) {
        return ((List<?>) reply).stream().map(d -> ((RawBsonDocument) d).getString("_id").getValue()).toList();
    }
}
