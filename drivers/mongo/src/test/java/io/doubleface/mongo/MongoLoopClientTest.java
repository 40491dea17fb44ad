package io.doubleface.mongo;

import io.doubleface.testing.Outcomes;
import static io.doubleface.mongo.MongoTestData.COLL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.mongo.MongoTestData.Query;
import io.doubleface.testing.StallingProxy;
import io.doubleface.testing.TestRead;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The loop client against real mongo-java-server shards over loopback, with data written through the driver. */
class MongoLoopClientTest {

    /** Records on every shard of {@link #leaf} (about 1.1 MB a shard). */
    static final int RECORDS = 1000;
    static MongoLeafServer leaf;
    static LoopGroup loops;

    @BeforeAll
    static void start() throws Exception {
        leaf = MongoLeafServer.builder().shards(3).start();
        loops = new LoopGroup("mt", 1, io.doubleface.driver.Transport.AUTO);
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), options())) {
            LoopClient<MongoCommand<?>> c = d.openOn(loop());
            for (int shard = 0; shard < 3; shard++) {
                load(c, shard, RECORDS);
            }
        }
    }

    @AfterAll
    static void stop() {
        loops.close();
        leaf.close();
    }

    static MongoDriver.Options options() {
        return MongoDriver.Options.DEFAULT.withCallTimeout(Duration.ofSeconds(10)).withConnectTimeout(Duration.ofSeconds(5));
    }

    static EventLoop loop() {
        return loops.loops().get(0);
    }

    /** Runs {@code sends} on the loop, then waits for every outcome. */
    static Outcomes run(LoopClient<MongoCommand<?>> c, int n, Consumer<Outcomes> sends) throws Exception {
        Outcomes o = new Outcomes(c.loop(), n);
        c.loop().submit(() -> sends.accept(o)).sync();
        return o.await();
    }

    /** Loads records {@code 0 .. records-1} into {@code shard} through the loop client ({@code insert} commands). */
    static void load(LoopClient<MongoCommand<?>> c, int shard, int records) throws Exception {
        List<MongoCommand<org.bson.RawBsonDocument>> inserts = MongoTestData.inserts(records);
        Outcomes o = run(c, inserts.size(), out -> {
            for (int i = 0; i < inserts.size(); i++) {
                c.send(shard, inserts.get(i), out, i);
            }
        });
        for (int i = 0; i < inserts.size(); i++) {
            MongoTestData.assertInserted(Math.min(MongoTestData.BATCH, records - i * MongoTestData.BATCH), o.value(i));
        }
    }

    /** One document, a projection, several documents, the end of the key space, none, and large replies (~1 MB). */
    static final List<Query> QUERIES = List.of(
            MongoTestData.readField(7, 3, RECORDS), MongoTestData.read(0, RECORDS), MongoTestData.read(RECORDS - 1, RECORDS),
            MongoTestData.scan(RECORDS - 5, 10, RECORDS), MongoTestData.scan(3, 20, RECORDS),
            MongoTestData.scan(150, 1000, RECORDS), MongoTestData.scanField(11, 9, 4, RECORDS),
            MongoTestData.ids(RECORDS, 500, 5, 17, RECORDS + 3), MongoTestData.read(RECORDS + 5, RECORDS),
            MongoTestData.all(RECORDS));

    @ParameterizedTest
    @EnumSource(MongoDriver.Transport.class)
    void repliesAreTheStoredDocumentsOverEveryTransport(MongoDriver.Transport transport) throws Exception {
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), options().withTransport(transport))) {
            LoopClient<MongoCommand<?>> c = d.openOn(loop());
            int n = QUERIES.size() * 3;
            Outcomes o = run(c, n, out -> {
                for (int i = 0; i < n; i++) {
                    c.send(i % 3, QUERIES.get(i / 3).command(), out, i);
                }
            });
            for (int i = 0; i < n; i++) {
                QUERIES.get(i / 3).check(o.value(i), "on shard " + i % 3 + " over " + transport);
            }
            MongoLoopClient.Stats s = stats(c);
            assertEquals(n, s.onLoop() + s.hopped() + s.inSend(), "every completion counted once: " + s);
            if (transport != MongoDriver.Transport.NETTY) {
                assertEquals(n, s.hopped(), "AIO completes on its own threads: " + s);
            }

            // writes, and their typed replies: the inserted _id, the counts modified and deleted
            String coll = "scratch";
            String id = "w-" + transport.name().toLowerCase(Locale.ROOT);
            Outcomes inserted = run(c, 3, out -> {
                for (int shard = 0; shard < 3; shard++) {
                    c.send(shard, Mongo.insertOne(coll, new Document("_id", id).append("shard", shard)), out, shard);
                }
            });
            Outcomes updated = run(c, 3, out -> {
                for (int shard = 0; shard < 3; shard++) {
                    c.send(shard, Mongo.updateOne(coll, Filters.eq("_id", id), Updates.set("v", shard * 10)), out, shard);
                }
            });
            Outcomes found = run(c, 3, out -> {
                for (int shard = 0; shard < 3; shard++) {
                    c.send(shard, Mongo.find(coll, Filters.eq("_id", id)), out, shard);
                }
            });
            Outcomes deleted = run(c, 3, out -> {
                for (int shard = 0; shard < 3; shard++) {
                    c.send(shard, Mongo.deleteMany(coll, Filters.empty()), out, shard);
                }
            });
            for (int shard = 0; shard < 3; shard++) {
                assertEquals(new BsonString(id), assertInstanceOf(BsonValue.class, inserted.value(shard)));
                assertEquals(1L, updated.value(shard));
                MongoTestData.assertDocuments(List.of(new BsonDocument("_id", new BsonString(id))
                        .append("shard", new BsonInt32(shard)).append("v", new BsonInt32(shard * 10))),
                        found.value(shard), "written document on shard " + shard);
                assertEquals(1L, deleted.value(shard));
            }
            s = stats(c);
            assertEquals(n + 12, s.onLoop() + s.hopped() + s.inSend(), "every completion counted once: " + s);
        }
    }

    /**
     * Records where the driver's work happens on the request path. With Netty on our loop, the
     * replies are read on the loop; but every command is written from the pool's AsyncGetter
     * thread (connection checkout), which docs/mongo.md documents as the driver's hop.
     */
    @Test
    void recordsOnWhichThreadsTheDriverCompletesAndSends() throws Exception {
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), options())) {
            LoopClient<MongoCommand<?>> c = d.openOn(loop());
            int n = 60;
            Outcomes o = run(c, n, out -> {
                for (int i = 0; i < n; i++) {
                    c.send(i % 3, MongoTestData.readField(i, i % 10, RECORDS).command(), out, i);
                }
            });
            for (int i = 0; i < n; i++) {
                MongoTestData.readField(i, i % 10, RECORDS).check(o.value(i), "on shard " + i % 3);
            }
            MongoLoopClient.Stats s = stats(c);
            System.out.println("mongo netty-on-loop stats: " + s);
            assertEquals(n, s.onLoop() + s.hopped() + s.inSend(), s.toString());
            assertEquals(n, s.sentOnLoop() + s.sentOffLoop(), "one find command a call: " + s);
            assertTrue(s.onLoop() > 0, "with Netty on the loop, replies complete on the loop: " + s);
            assertTrue(s.sentOffLoop() > 0 && s.offLoopThreads().keySet().stream().anyMatch(t -> t.startsWith("AsyncGetter")),
                    "commands are written from the pool's AsyncGetter thread: " + s);
            assertEquals(List.of(s), d.stats());
        }
    }

    /** A record that is not there is no document, not an error; a command the server refuses is a SHARD_ERROR. */
    @Test
    void missingRecordIsNoDocumentAndAServerErrorIsAShardError() throws Exception {
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), options())) {
            LoopClient<MongoCommand<?>> c = d.openOn(loop());
            Query missing = MongoTestData.read(RECORDS + 5, RECORDS);
            Outcomes o = run(c, 4, out -> {
                c.send(0, missing.command(), out, 0);
                c.send(0, Mongo.runCommand(new Document("noSuchCommand", 1)), out, 1);
                c.send(0, Mongo.insertOne(COLL, MongoTestData.record(7)), out, 2); // record 7 is there: duplicate key
                c.send(1, MongoTestData.readField(5, 0, RECORDS).command(), out, 3);
            });
            missing.check(o.value(0), "on shard 0");
            o.assertFailed(1, ShardException.Kind.SHARD_ERROR);
            assertEquals(0, o.failure(1).shard());
            assertTrue(o.failure(1).getMessage().contains("noSuchCommand"), o.failure(1).getMessage());
            o.assertFailed(2, ShardException.Kind.SHARD_ERROR);
            assertTrue(o.failure(2).getMessage().contains("duplicate key"), o.failure(2).getMessage());
            MongoTestData.readField(5, 0, RECORDS).check(o.value(3), "on shard 1");
            // the shard that refused the commands answers the next one, its record 7 unchanged
            MongoTestData.read(7, RECORDS).check(run(c, 1, out -> c.send(0, MongoTestData.read(7, RECORDS).command(), out, 0))
                    .value(0), "after the errors");
            MongoTestData.read(1, RECORDS).check(run(c, 1, out -> c.send(0, MongoTestData.read(1, RECORDS).command(), out, 0))
                    .value(0), "after the errors");
        }
    }

    @Test
    void callsBeyondMaxOutstandingAreOverloaded() throws Exception {
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), options().withMaxOutstanding(2))) {
            LoopClient<MongoCommand<?>> c = d.openOn(loop());
            Outcomes o = run(c, 6, out -> {
                for (int i = 0; i < 5; i++) {
                    c.send(0, MongoTestData.read(i, RECORDS).command(), out, i);
                }
                c.send(1, MongoTestData.read(9, RECORDS).command(), out, 5); // another shard has its own bound
            });
            MongoTestData.read(0, RECORDS).check(o.value(0), "");
            MongoTestData.read(1, RECORDS).check(o.value(1), "");
            for (int i = 2; i < 5; i++) {
                o.assertFailed(i, ShardException.Kind.OVERLOADED);
            }
            MongoTestData.read(9, RECORDS).check(o.value(5), "on shard 1");
            // the bound frees as calls complete
            MongoTestData.read(4, RECORDS).check(run(c, 1, out -> c.send(0, MongoTestData.read(4, RECORDS).command(), out, 0))
                    .value(0), "after the overload");
        }
    }

    @Test
    void shardThatStopsAnsweringTimesOutAndCloseFailsTheRest() throws Exception {
        try (StallingProxy proxy = new StallingProxy(leaf.addresses().get(0));
                MongoDriver d = MongoDriver.of(MongoDriver.parse("mongodb://127.0.0.1:" + proxy.port()).shards(),
                        options().withCallTimeout(Duration.ofMillis(300)))) {
            LoopClient<MongoCommand<?>> c = d.openOn(loop());
            warmUp(c, 0);
            proxy.stall(true);
            Outcomes o = run(c, 3, out -> {
                c.send(0, MongoTestData.read(2, RECORDS).command(), out, 0);
                c.send(0, MongoTestData.scan(2, 20, RECORDS).command(), out, 1);
                c.send(0, Mongo.insertOne("stalled", new Document("_id", 1)), out, 2);
            });
            o.assertFailed(0, ShardException.Kind.TIMEOUT);
            o.assertFailed(1, ShardException.Kind.TIMEOUT);
            o.assertFailed(2, ShardException.Kind.TIMEOUT);

            // calls outstanding at close fail with CLOSED
            MongoDriver d2 = MongoDriver.of(MongoDriver.parse("mongodb://127.0.0.1:" + proxy.port()).shards(),
                    options().withCallTimeout(Duration.ofSeconds(30)));
            LoopClient<MongoCommand<?>> c2 = d2.openOn(loop());
            Outcomes closing = new Outcomes(loop(), 3);
            loop().submit(() -> {
                for (int i = 0; i < 3; i++) {
                    c2.send(0, MongoTestData.read(i, RECORDS).command(), closing, i);
                }
            }).sync();
            Thread.sleep(100);
            d2.close();
            closing.await();
            for (int i = 0; i < 3; i++) {
                closing.assertFailed(i, ShardException.Kind.CLOSED);
            }
            Outcomes after = run(c2, 1, out -> c2.send(0, MongoTestData.read(1, RECORDS).command(), out, 0));
            after.assertFailed(0, ShardException.Kind.CLOSED);
        }
    }

    @Test
    void stoppedShardIsUnavailableAndUsedAgainWhenItReturns() throws Exception {
        int records = 50;
        try (MongoLeafServer own = MongoLeafServer.builder().shards(2).start();
                MongoDriver d = MongoDriver.of(MongoDriver.parse(own.uri()).shards(),
                        options().withConnectTimeout(Duration.ofMillis(500)).withHeartbeat(Duration.ofMillis(500)))) {
            LoopClient<MongoCommand<?>> c = d.openOn(loop());
            load(c, 0, records);
            load(c, 1, records);
            Outcomes first = run(c, 2, out -> {
                c.send(0, MongoTestData.read(1, records).command(), out, 0);
                c.send(1, MongoTestData.read(1, records).command(), out, 1);
            });
            MongoTestData.read(1, records).check(first.value(0), "on shard 0");
            MongoTestData.read(1, records).check(first.value(1), "on shard 1");
            own.stop(1);
            for (int round = 0; round < 5; round++) {
                Outcomes o = run(c, 3, out -> {
                    c.send(0, MongoTestData.read(2, records).command(), out, 0);
                    c.send(1, MongoTestData.read(2, records).command(), out, 1);
                    c.send(1, Mongo.insertOne(COLL, new Document("_id", -1)), out, 2);
                });
                MongoTestData.read(2, records).check(o.value(0), "on shard 0, round " + round);
                o.assertFailed(1, ShardException.Kind.UNAVAILABLE);
                o.assertFailed(2, ShardException.Kind.UNAVAILABLE);
            }
            own.restart(1);
            Query scan = MongoTestData.scan(3, 5, records);
            boolean ok = false;
            for (int attempt = 0; attempt < 100 && !ok; attempt++) {
                Outcomes o = run(c, 1, out -> c.send(1, scan.command(), out, 0));
                if (o.replied(0)) {
                    MongoTestData.assertDocuments(List.of(), o.value(0), "the restarted shard comes back empty");
                    ok = true;
                } else {
                    o.assertFailed(0, ShardException.Kind.UNAVAILABLE);
                    Thread.sleep(100);
                }
            }
            assertTrue(ok, "the shard was not used again after it came back");
            load(c, 1, records);
            scan.check(run(c, 1, out -> c.send(1, scan.command(), out, 0)).value(0), "on shard 1 reloaded");
        }
    }

    @Test
    void closingTheDriverStopsItsThreads() throws Exception {
        long before = driverThreads();
        MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), options());
        LoopClient<MongoCommand<?>> c = d.openOn(loop());
        Outcomes o = run(c, 3, out -> {
            for (int i = 0; i < 3; i++) {
                c.send(i, MongoTestData.read(i, RECORDS).command(), out, i);
            }
        });
        for (int i = 0; i < 3; i++) {
            MongoTestData.read(i, RECORDS).check(o.value(i), "on shard " + i);
        }
        assertTrue(driverThreads() > before, "the driver started threads");
        d.close();
        long guard = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (driverThreads() > before && System.nanoTime() - guard < 0) {
            Thread.sleep(20);
        }
        assertEquals(before, driverThreads(), "threads left: " + threadNames());
    }

    /** Calls {@code shard} until it answers (the first calls also connect, and may take longer than a short timeout). */
    static void warmUp(LoopClient<MongoCommand<?>> c, int shard) throws Exception {
        for (int attempt = 0; attempt < 50; attempt++) {
            Outcomes o = run(c, 1, out -> c.send(shard, MongoTestData.read(1, RECORDS).command(), out, 0));
            if (o.replied(0)) {
                MongoTestData.read(1, RECORDS).check(o.value(0), "warm-up");
                return;
            }
        }
        throw new AssertionError("shard " + shard + " never answered");
    }

    /** The counters of {@code c}, a {@link MongoLoopClient} (typed as a client of {@link MongoCommand}s). */
    static MongoLoopClient.Stats stats(LoopClient<?> c) {
        return assertInstanceOf(MongoLoopClient.class, c).stats();
    }

    static long driverThreads() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith("AsyncGetter") || n.startsWith("cluster-")).count();
    }

    static List<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).sorted().toList();
    }

    @Test
    void sendFromAnotherThreadIsRefused() throws Exception {
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), options())) {
            LoopClient<MongoCommand<?>> c = d.openOn(loop());
            connected(c);
            assertThrows(IllegalStateException.class,
                    () -> c.send(0, MongoTestData.read(0, RECORDS).command(), new Outcomes(loop(), 1), 0));
        }
    }

    /** The YCSB record read is no command of this driver any more: a command of another family is refused on the loop. */
    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void commandOfAnotherFamilyIsRefused() throws Exception {
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), options())) {
            LoopClient raw = d.openOn(loop());
            connected(raw);
            Outcomes never = new Outcomes(loop(), 1);
            IllegalArgumentException e = loop().submit(() -> assertThrows(IllegalArgumentException.class,
                    () -> raw.send(0, TestRead.readRecord(0), never, 0))).get();
            assertTrue(e.getMessage().contains("MongoCommand"), e.getMessage());
            assertEquals(List.of(0L), d.stats().stream().map(MongoLoopClient.Stats::sentOffLoop).toList(),
                    "nothing was sent off the loop");
        }
    }

    /**
     * Waits until {@code c}'s shard 0 has answered a read: its server monitor has finished its
     * first handshake. Closing a client during that handshake can leak one buffer inside the
     * MongoDB driver (NettyStream.writeAsync builds the message before adding a write-timeout
     * handler to a pipeline that may be gone), which paranoid leak detection then reports.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static void connected(LoopClient c) throws Exception {
        Outcomes o = run(c, 1, out -> c.send(0, MongoTestData.read(0, RECORDS).command(), out, 0));
        MongoTestData.read(0, RECORDS).check(o.value(0), "first read");
    }
}
