package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.LeafServerBuilder;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.mongo.MongoLeafServer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The three leaf servers (KV, MongoDB test leaf, gRPC) share one builder base ({@link
 * LeafServerBuilder}): the same options, defaults and error messages, and a started leaf listens on
 * the shards it was given.
 */
class LeafServerBuildersTest {

    /** A leaf kind: a new builder, its most shards, and how to start one and read its addresses. */
    record Leaf<B extends LeafServerBuilder<B>>(String name, Supplier<B> builder, int maxShards,
            Function<B, AutoCloseable> start, Function<AutoCloseable, List<InetSocketAddress>> addresses) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> leaves() {
        return Stream.of(
                Arguments.of(new Leaf<>("kv", KvLeafServer::builder, KvLeafServer.MAX_SHARDS, KvLeafServer.Builder::start,
                        s -> ((KvLeafServer) s).addresses())),
                Arguments.of(new Leaf<>("mongo", MongoLeafServer::builder, MongoLeafServer.MAX_SHARDS,
                        MongoLeafServer.Builder::start, s -> ((MongoLeafServer) s).addresses())),
                Arguments.of(new Leaf<>("grpc", GrpcLeafServer::builder, GrpcLeafServer.MAX_SHARDS,
                        GrpcLeafServer.Builder::start, s -> ((GrpcLeafServer) s).addresses())));
    }

    @ParameterizedTest
    @MethodSource("leaves")
    <B extends LeafServerBuilder<B>> void badOptionsAreRefusedWithTheSameMessages(Leaf<B> leaf) {
        B b = leaf.builder().get();
        assertEquals(1, b.shards());
        assertEquals(0, b.basePort());
        assertEquals(LeafServerBuilder.DEFAULT_HOST, b.host());
        assertEquals("shards: 0 (expected: 1.." + leaf.maxShards() + ")",
                assertThrows(IllegalArgumentException.class, () -> b.shards(0)).getMessage());
        assertEquals("shards: " + (leaf.maxShards() + 1) + " (expected: 1.." + leaf.maxShards() + ")",
                assertThrows(IllegalArgumentException.class, () -> b.shards(leaf.maxShards() + 1)).getMessage());
        assertEquals("basePort: 65536 (expected: 0..65535)",
                assertThrows(IllegalArgumentException.class, () -> b.basePort(65536)).getMessage());
        assertEquals("basePort: -1 (expected: 0..65535)",
                assertThrows(IllegalArgumentException.class, () -> b.basePort(-1)).getMessage());
        assertEquals("host: '' (expected: a host name or address)",
                assertThrows(IllegalArgumentException.class, () -> b.host("")).getMessage());
        B tooHigh = leaf.builder().get().shards(3).basePort(65534);
        assertEquals("basePort: 65534 with 3 shards (expected: basePort + shards - 1 <= 65535)",
                assertThrows(IllegalArgumentException.class, () -> leaf.start().apply(tooHigh)).getMessage());
    }

    @ParameterizedTest
    @MethodSource("leaves")
    <B extends LeafServerBuilder<B>> void aStartedLeafListensOnEachShard(Leaf<B> leaf) throws Exception {
        try (AutoCloseable s = leaf.start().apply(leaf.builder().get().shards(3).host("127.0.0.1").basePort(0))) {
            List<InetSocketAddress> a = leaf.addresses().apply(s);
            assertEquals(3, a.size(), a.toString());
            assertEquals(3, a.stream().map(InetSocketAddress::getPort).distinct().count(), a.toString());
            for (InetSocketAddress x : a) {
                assertEquals("127.0.0.1", x.getHostString());
                assertNotEquals(0, x.getPort());
                try (Socket c = new Socket()) {
                    c.connect(x, 2000);
                    assertTrue(c.isConnected(), x.toString());
                }
            }
        }
    }
}
