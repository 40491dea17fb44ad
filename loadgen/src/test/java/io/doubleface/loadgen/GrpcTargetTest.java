package io.doubleface.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code grpc://} targets against a real grpc-java server of {@code doubleface.ycsb.v1.FanoutService/Query}
 * that decodes what it is sent: fields on the wire, one call at a time per user, outcomes recorded
 * like HTTP.
 */
class GrpcTargetTest {

    private Server server;
    /** Decoded requests: "fanout/size/key" → count; key -1 when absent. */
    private final Map<String, AtomicLong> seen = new ConcurrentHashMap<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        ServerCallHandler<byte[], byte[]> handler = (call, headers) -> {
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(byte[] m) {
                    maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                    long[] f = decode(m);
                    String size = f[3] < 0 ? "" : new String(m, (int) f[3], (int) f[4], java.nio.charset.StandardCharsets.UTF_8);
                    seen.computeIfAbsent(f[0] + "/" + size + "/" + f[1], k -> new AtomicLong()).incrementAndGet();
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    inFlight.decrementAndGet();
                    if (f[0] == 99) {
                        call.close(Status.INVALID_ARGUMENT.withDescription("fanout: 99"), new Metadata());
                    } else if (f[0] == 98) {
                        call.close(Status.UNAVAILABLE.withDescription("shard 3 unavailable"), new Metadata());
                    } else {
                        call.sendHeaders(new Metadata());
                        call.sendMessage(new byte[] {10, 3, 'a', 'b', '\n'});
                        call.close(Status.OK, new Metadata());
                    }
                }
            };
        };
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerServiceDefinition.builder("doubleface.ycsb.v1.FanoutService")
                        .addMethod(GrpcQueries.METHOD, handler).build())
                .build().start();
    }

    @AfterEach
    void stop() throws Exception {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** fanout, key, (unused), size offset, size length; -1 when absent. */
    private static long[] decode(byte[] m) {
        long[] out = {-1, -1, -1, -1, -1};
        int i = 0;
        while (i < m.length) {
            long[] tag = varint(m, i);
            i = (int) tag[1];
            int field = (int) (tag[0] >>> 3);
            if (field == 2) {
                long[] len = varint(m, i);
                out[3] = len[1];
                out[4] = len[0];
                i = (int) (len[1] + len[0]);
            } else {
                long[] v = varint(m, i);
                out[field == 1 ? 0 : 1] = v[0];
                i = (int) v[1];
            }
        }
        return out;
    }

    private static long[] varint(byte[] m, int i) {
        long v = 0;
        int shift = 0;
        while (true) {
            byte b = m[i++];
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return new long[] {v, i};
            }
            shift += 7;
        }
    }

    private URI target() {
        return URI.create("grpc://127.0.0.1:" + server.getPort());
    }

    @Test
    void closedLoopSendsTheMixAsQueryMessagesOneCallAtATimePerUser() throws Exception {
        LoadResult r = LoadGenerator.builder(target())
                .mix(RequestMix.parse("3:/query?fanout=5&size=small&key={key},1:/query?fanout=300&size=large&key=123456"))
                .users(3).keys(50).warmup(Duration.ZERO).duration(Duration.ofSeconds(10)).maxRequests(400).seed(7)
                .build().run();
        assertEquals(400, r.requests(), r.toText());
        assertEquals(0, r.errors(), r.toText());
        assertTrue(maxInFlight.get() <= 3, "server saw " + maxInFlight.get() + " calls at once");
        long small = 0;
        long large = 0;
        for (var e : seen.entrySet()) {
            String[] f = e.getKey().split("/");
            if (f[0].equals("5")) {
                assertEquals("small", f[1]);
                assertTrue(Long.parseLong(f[2]) >= 0 && Long.parseLong(f[2]) < 50, e.getKey());
                small += e.getValue().get();
            } else {
                assertEquals("300/large/123456", e.getKey());
                large += e.getValue().get();
            }
        }
        assertTrue(small > large && large > 0, seen.toString());
        assertEquals(small, r.classes().get(0).requests(), "the first class holds the fanout-5 calls");
        assertEquals(large, r.classes().get(1).requests(), "the second class holds the fanout-300 calls");
        assertTrue(r.toText().contains("grpc://127.0.0.1:" + server.getPort()), r.toText());
    }

    @Test
    void openLoopRecordsLatencyAndStatusesLikeHttp() throws Exception {
        LoadResult r = LoadGenerator.builder(target())
                .mix(RequestMix.parse("2:/query?key={key},1:/query?fanout=99,1:/query?fanout=98"))
                .rate(200).warmup(Duration.ofMillis(200)).duration(Duration.ofSeconds(1)).seed(3).build().run();
        assertTrue(r.requests() > 50, r.toText());
        long e4 = r.errorsByKind().get(ErrorKind.STATUS_4XX);
        long e5 = r.errorsByKind().get(ErrorKind.STATUS_5XX);
        assertTrue(e4 > 0 && e5 > 0, r.toText());
        assertEquals(e4 + e5, r.errors(), r.toText());
        assertEquals("open", r.mode());
        assertTrue(seen.keySet().stream().anyMatch(k -> k.startsWith("-1//")), "absent fields stay absent: " + seen);
    }

    @Test
    void unreachableTargetFailsWithAClearMessageAndBadMixesFailFast() throws Exception {
        // bound but never listening, and held for the whole test: a connection there is refused, and no
        // server started meanwhile can be given the port (closing a probe socket first allowed both)
        try (java.net.Socket held = new java.net.Socket()) {
            held.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = held.getLocalPort();
            URI nowhere = URI.create("grpc://127.0.0.1:" + port);
            LoadException e = assertThrows(LoadException.class, () -> LoadGenerator.builder(nowhere)
                    .mix(RequestMix.single("/query?key={key}")).rate(100).warmup(Duration.ZERO)
                    .duration(Duration.ofSeconds(30)).build().run());
            assertTrue(e.getMessage().startsWith("cannot connect to 127.0.0.1:" + port + ": "), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> LoadGenerator.builder(target())
                    .mix(RequestMix.single("/other?key=1")).rate(1).build());
            assertThrows(IllegalArgumentException.class, () -> LoadGenerator.builder(target())
                    .mix(RequestMix.single("/query?fanout=x")).rate(1).build());
            assertThrows(IllegalArgumentException.class, () -> LoadGenerator.builder(URI.create("grpc://127.0.0.1")));
        }
    }
}
