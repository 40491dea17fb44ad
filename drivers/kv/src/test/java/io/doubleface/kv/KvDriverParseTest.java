package io.doubleface.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Shard lists: {@link KvDriver#parse} and {@link KvDriver#describe}. */
class KvDriverParseTest {

    @Test
    void portRangeGivesOneShardPerPort() {
        List<InetSocketAddress> a = KvDriver.parse("kv://127.0.0.1:7101-7120");
        assertEquals(20, a.size());
        assertEquals(new InetSocketAddress("127.0.0.1", 7101), a.get(0));
        assertEquals(new InetSocketAddress("127.0.0.1", 7120), a.get(19));
    }

    @Test
    void commaListKeepsItsOrderAndMayMixHostsAndRanges() {
        List<InetSocketAddress> a = KvDriver.parse("kv://127.0.0.1:9000,localhost:7101,127.0.0.1:8000-8001,[::1]:7");
        assertEquals(5, a.size());
        assertEquals(9000, a.get(0).getPort());
        assertEquals("localhost", a.get(1).getHostString());
        assertEquals(8001, a.get(3).getPort());
        assertEquals(7, a.get(4).getPort());
        assertEquals(new InetSocketAddress("::1", 7), a.get(4));
    }

    @Test
    void singlePortIsOneShard() {
        assertEquals(List.of(new InetSocketAddress("127.0.0.1", 7101)), KvDriver.parse("kv://127.0.0.1:7101"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"kv://x", "kv://", "kv:/h:1", "redis://h:1", "h:1", "kv://h:", "kv://:7101",
        "kv://h:0", "kv://h:65536", "kv://h:7120-7101", "kv://h:7101-", "kv://h:-7101", "kv://h:71a",
        "kv://h:1,", "kv://h:1,,h:2", "kv://h:1-2-3", "kv://[::1]", "kv://h/x:1"})
    void malformedListsAreRejectedWithTheExpectedForm(String uri) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvDriver.parse(uri));
        assertTrue(e.getMessage().startsWith("kv shard list: '" + uri
                + "' (expected: kv://host:port-port or kv://host:port,host:port,...)"), e.getMessage());
    }

    @Test
    void theMessageForAMissingPortIsTheDocumentedOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvDriver.parse("kv://x"));
        assertTrue(e.getMessage().startsWith(
                "kv shard list: 'kv://x' (expected: kv://host:port-port or kv://host:port,host:port,...)"));
    }

    @Test
    void describeFoldsContiguousPortsIntoRangesAndRoundTrips() {
        for (String uri : List.of("kv://127.0.0.1:7101-7120", "kv://127.0.0.1:1,127.0.0.1:3-4,localhost:5",
                "kv://[::1]:7-8")) {
            assertEquals(uri, KvDriver.describe(KvDriver.parse(uri)));
            assertEquals(uri, KvDriver.of(uri).describe());
        }
    }

    @Test
    void nullIsRejectedToo() {
        assertThrows(IllegalArgumentException.class, () -> KvDriver.parse(null));
    }

    @Test
    void theKvSchemeIsFoundThroughTheServiceLoader() {
        assertTrue(io.doubleface.driver.spi.ShardDrivers.schemes().contains("kv"));
        try (io.doubleface.driver.spi.ShardDriver d = io.doubleface.driver.spi.ShardDrivers.open("kv://127.0.0.1:7101-7103",
                io.doubleface.driver.DriverSettings.DEFAULT)) {
            assertEquals(3, d.shardCount());
            assertEquals("kv://127.0.0.1:7101-7103", d.describe());
        }
    }

    @Test
    void anUnknownSchemeNamesTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> io.doubleface.driver.spi.ShardDrivers.open("memcache://h:1", io.doubleface.driver.DriverSettings.DEFAULT));
        assertTrue(e.getMessage().contains("unknown scheme memcache://") && e.getMessage().contains("kv"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> io.doubleface.driver.spi.ShardDrivers.open("127.0.0.1:7101", io.doubleface.driver.DriverSettings.DEFAULT));
    }
}
