package io.doubleface.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDrivers;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Shard list forms of {@link MongoDriver#parse}. */
class MongoDriverParseTest {

    static List<String> hosts(String uri) {
        return MongoDriver.parse(uri).shards().stream().map(cs -> String.join(",", cs.getHosts())).toList();
    }

    @Test
    void portRangeAndCommaListAreOneDirectShardPerAddress() {
        assertEquals(List.of("127.0.0.1:7301", "127.0.0.1:7302", "127.0.0.1:7303"), hosts("mongodb://127.0.0.1:7301-7303"));
        assertEquals(List.of("a:1", "b:2"), hosts("mongodb://a:1,b:2"));
        assertEquals(List.of("[::1]:7301"), hosts("mongodb://[::1]:7301"));
        assertTrue(MongoDriver.parse("mongodb://a:1,b:2").shards().stream().allMatch(cs -> cs.isDirectConnection()));
        try (MongoDriver d = MongoDriver.of("mongodb://127.0.0.1:7301-7320", MongoDriver.Options.DEFAULT)) {
            assertEquals(20, d.shardCount());
            assertEquals("mongodb://127.0.0.1:7301-7320", d.describe());
        }
        // a port range with a database (the form docs/api.md shows): every shard's database
        MongoDriver.ShardList withDb = MongoDriver.parse("mongodb://127.0.0.1:7301-7304/app?transport=aio");
        assertEquals(4, withDb.shards().size());
        assertTrue(withDb.shards().stream().allMatch(cs -> "app".equals(cs.getDatabase()) && cs.isDirectConnection()));
        assertEquals(Map.of("transport", "aio"), withDb.options());
        assertEquals(List.of("127.0.0.1:7301", "127.0.0.1:7302"), hosts("mongodb://127.0.0.1:7301-7302/"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MongoDriver.parse("mongodb://127.0.0.1:7301-7302/a.b"));
        assertTrue(e.getMessage().contains("database 'a.b'"), e.getMessage());
    }

    @Test
    void fullConnectionStringsAreSeparatedBySemicolons() {
        MongoDriver.ShardList l = MongoDriver.parse(
                "mongodb://a:1,b:1/?replicaSet=rs0&df.transport=aio ; mongodb://c:1/mydb?maxPoolSize=5;mongodb://d:1/");
        assertEquals(3, l.shards().size());
        assertEquals(List.of("a:1", "b:1"), l.shards().get(0).getHosts());
        assertEquals("rs0", l.shards().get(0).getRequiredReplicaSetName());
        assertEquals("mydb", l.shards().get(1).getDatabase());
        assertEquals(5, l.shards().get(1).getMaxConnectionPoolSize());
        assertEquals(Map.of("transport", "aio"), l.options());
        // a '/' after the hosts makes one full connection string: one replica-set shard
        assertEquals(1, MongoDriver.parse("mongodb://a:1,b:2/?replicaSet=rs").shards().size());
        try (MongoDriver d = MongoDriver.of("mongodb://a:1/;mongodb://b:2/?df.transport=aio-fixed&df.aioThreads=3",
                MongoDriver.Options.DEFAULT)) {
            assertEquals(MongoDriver.Transport.AIO_FIXED, d.options().transport());
            assertEquals(3, d.options().aioThreads());
            assertEquals(MongoDriver.DEFAULT_DATABASE, d.database(0), "no database in the connection string");
        }
        try (MongoDriver d = MongoDriver.of("mongodb://a:1/;mongodb://c:1/mydb?maxPoolSize=5", MongoDriver.Options.DEFAULT)) {
            assertNull(d.shard(0).getDatabase());
            assertEquals("test", d.database(0));
            assertEquals("mydb", d.shard(1).getDatabase());
            assertEquals("mydb", d.database(1));
            assertEquals(5, d.shard(1).getMaxConnectionPoolSize());
            assertThrows(IndexOutOfBoundsException.class, () -> d.shard(2));
        }
    }

    @Test
    void severalHostsInOneStringAreRefusedUnlessOneShardIsMeant() {
        // the trap: a list of two shards with a database appended reads as one deployment
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MongoDriver.parse("mongodb://127.0.0.1:7301,127.0.0.1:7302/shop"));
        assertTrue(e.getMessage().contains("names 2 hosts in one connection string, which is one shard"), e.getMessage());
        assertTrue(e.getMessage().contains("mongodb://127.0.0.1:7301/shop;mongodb://127.0.0.1:7302/shop"), e.getMessage());
        assertTrue(e.getMessage().contains("replicaSet=NAME") && e.getMessage().contains("df.one-shard=true"),
                e.getMessage());
        // said explicitly: one shard
        MongoDriver.ShardList routers = MongoDriver.parse("mongodb://m1:27017,m2:27017/shop?df.one-shard=true");
        assertEquals(1, routers.shards().size());
        assertEquals(List.of("m1:27017", "m2:27017"), routers.shards().get(0).getHosts());
        assertEquals(Map.of(), routers.options(), "df.one-shard is the parser's, not a driver option");
        // what the message suggests parses as two shards
        assertEquals(2, MongoDriver.parse("mongodb://127.0.0.1:7301/shop;mongodb://127.0.0.1:7302/shop").shards().size());
        e = assertThrows(IllegalArgumentException.class, () -> MongoDriver.parse("mongodb://a:1,b:2/shop?df.one-shard=yes"));
        assertTrue(e.getMessage().contains("df.one-shard: 'yes' (expected: true)"), e.getMessage());
    }

    @Test
    void driverOptionsInTheShortForm() {
        try (MongoDriver d = MongoDriver.of("mongodb://h:1-2?transport=aio&poolSize=7&heartbeatMS=600&csot=true",
                MongoDriver.Options.DEFAULT)) {
            assertEquals(MongoDriver.Transport.AIO, d.options().transport());
            assertEquals(7, d.options().poolSize());
            assertEquals(600, d.options().heartbeat().toMillis());
            assertTrue(d.options().csot());
            assertEquals("mongodb://h:1-2 (aio)", d.describe());
        }
    }

    @Test
    void badListsAreRefusedWithTheFormsInTheMessage() {
        for (String bad : new String[] {"mongo://h:1", "mongodb://", "mongodb://h", "mongodb://h:2-1", "mongodb://h:1?transport=udp",
            "mongodb://h:1?nope=1", "mongodb://h:1?poolSize=x", "mongodb://a:1/;b:2", "mongodb://h:1?heartbeatMS=10",
            // the YCSB face is gone: no OP_MSG loop transport, no scheme of its own, no records option
            "mongodb://h:1?transport=loop", "mongodb://a:1/?df.transport=loop", "mongodb+loop://h:1-3",
            "mongodb://h:1-3?records=50", "mongodb://a:1/?df.records=50"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MongoDriver.of(bad,
                    MongoDriver.Options.DEFAULT), bad);
            assertTrue(e.getMessage().contains("mongodb") || e.getMessage().contains("heartbeat"), e.getMessage());
        }
    }

    @Test
    void transportLoopNamesTheTransportsThereAre() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MongoDriver.parse("mongodb://h:1?transport=loop"));
        assertTrue(e.getMessage().contains("expected: netty, aio or aio-fixed"), e.getMessage());
        assertEquals(List.of(MongoDriver.Transport.NETTY, MongoDriver.Transport.AIO, MongoDriver.Transport.AIO_FIXED),
                List.of(MongoDriver.Transport.values()));
        e = assertThrows(IllegalArgumentException.class, () -> MongoDriver.parse("mongodb://h:1?records=50"));
        assertTrue(e.getMessage().contains("option 'records'"), e.getMessage());
    }

    @Test
    void providerIsFoundByScheme() {
        assertTrue(ShardDrivers.schemes().contains("mongodb"));
        assertFalse(ShardDrivers.schemes().contains("mongodb+loop"), ShardDrivers.schemes().toString());
        DriverSettings s = DriverSettings.DEFAULT.withMaxOutstanding(50).withCallTimeout(Duration.ofMillis(2500))
                .withConnectTimeout(Duration.ofMillis(700));
        try (var d = ShardDrivers.open("mongodb://127.0.0.1:7301-7302?poolSize=3", s)) {
            assertEquals(2, d.shardCount());
            MongoDriver.Options o = assertInstanceOf(MongoDriver.class, d).options();
            assertEquals(50, o.maxOutstanding());
            assertEquals(Duration.ofMillis(2500), o.callTimeout());
            assertEquals(Duration.ofMillis(700), o.connectTimeout());
            assertEquals(3, o.poolSize(), "the URI's options apply too");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ShardDrivers.open("mongodb+loop://127.0.0.1:7301-7302", DriverSettings.DEFAULT));
        assertTrue(e.getMessage().contains("unknown scheme"), e.getMessage());
    }
}
