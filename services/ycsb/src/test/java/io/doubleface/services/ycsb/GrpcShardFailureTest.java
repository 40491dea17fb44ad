package io.doubleface.services.ycsb;

import static io.doubleface.services.ycsb.ShardFailureTest.AVOIDING;
import static io.doubleface.services.ycsb.ShardFailureTest.FAULTY;
import static io.doubleface.services.ycsb.ShardFailureTest.SHARDS;
import static io.doubleface.services.ycsb.ShardFailureTest.TOUCHING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * gRPC leaf failures under every model, seen on both upstreams: a stopped leaf gives 503 /
 * {@code UNAVAILABLE} to the requests that need it and the rest succeed, and the driver reconnects
 * when it returns; a leaf that stops answering gives 504 / {@code DEADLINE_EXCEEDED} within the
 * request deadline.
 */
class GrpcShardFailureTest {

    static final List<String> MODELS = Models.ALL;

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void stoppedLeafGives503AndUnavailableAndTheDriverReconnectsWhenItReturns(String model) throws Exception {
        GrpcLeafServer b = GrpcLeafServer.builder().shards(1).records(GrpcTestCluster.RECORDS).start();
        int port = b.port(0);
        try (GrpcTestCluster cluster = GrpcTestCluster.builder(SHARDS).configuration(model)
                .shardAt(FAULTY, new InetSocketAddress("127.0.0.1", port)).start()) {
            assertAllGood(cluster, TOUCHING);
            assertAllGood(cluster, AVOIDING);

            b.close(); // stop the leaf mid-run: its connections end, its port refuses

            long start = System.nanoTime();
            for (YcsbQuery q : TOUCHING) {
                HttpResponse<String> r = cluster.get(q);
                assertEquals(503, r.statusCode(), model + " " + q + ": " + r.body());
                assertTrue(r.body().contains("shard " + FAULTY), "reason should name shard " + FAULTY + ": " + r.body());
                StatusRuntimeException e = grpcFailure(cluster, q);
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), model + " " + q + ": " + e);
                assertTrue(String.valueOf(e.getStatus().getDescription()).contains("shard " + FAULTY), e.toString());
            }
            // fail fast: far from the 30 s call timeout and deadline (a generous guard, not a speed test)
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "failures took too long");
            assertAllGood(cluster, AVOIDING);

            b = GrpcLeafServer.builder().shards(1).basePort(port).records(GrpcTestCluster.RECORDS).start();
            for (YcsbQuery q : TOUCHING) {
                assertEquals(cluster.expected(q), eventually(cluster, q), model + " " + q + " after the leaf came back");
            }
            assertAllGood(cluster, AVOIDING);
        } finally {
            b.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void leafThatStopsAnsweringGives504AndDeadlineExceededWithinTheDeadline(String model) throws Exception {
        Duration deadline = Duration.ofMillis(400);
        try (BlackHole hole = new BlackHole();
                GrpcTestCluster cluster = GrpcTestCluster.builder(SHARDS).configuration(model).deadline(deadline)
                        .shardAt(FAULTY, hole.address()).start()) {
            warmUp(cluster);
            assertAllGood(cluster, AVOIDING);
            for (YcsbQuery q : TOUCHING) {
                long t0 = System.nanoTime();
                HttpResponse<String> r = cluster.get(q);
                assertEquals(504, r.statusCode(), model + " " + q + ": " + r.body());
                StatusRuntimeException e = grpcFailure(cluster, q);
                assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode(), model + " " + q + ": " + e);
                // answered by the server's deadline, not by a client-side timeout (the client allows 30 s)
                assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20), "no answer near the deadline");
            }
            assertAllGood(cluster, AVOIDING);
            assertTrue(hole.accepted() > 0, "the silent leaf was called");
        }
    }

    private static StatusRuntimeException grpcFailure(GrpcTestCluster cluster, YcsbQuery q) {
        try {
            String body = cluster.grpc(q);
            throw new AssertionError(q + " succeeded over gRPC: " + body);
        } catch (StatusRuntimeException e) {
            return e;
        }
    }

    static void assertAllGood(GrpcTestCluster cluster, List<YcsbQuery> qs) throws Exception {
        for (YcsbQuery q : qs) {
            HttpResponse<String> r = cluster.get(q);
            assertEquals(200, r.statusCode(), q + ": " + r.body());
            assertEquals(cluster.expected(q), r.body(), q.toString());
            assertEquals(cluster.expected(q), cluster.grpc(q), q.toString());
        }
    }

    /**
     * Channels are made on first use, per loop: on a busy machine the first requests may spend
     * the short deadline on HTTP/2 handshakes. Retries the avoiding queries until all succeed.
     */
    static void warmUp(GrpcTestCluster cluster) throws Exception {
        for (int attempt = 0; attempt < 50; attempt++) {
            boolean ok = true;
            for (YcsbQuery q : AVOIDING) {
                ok &= cluster.get(q).statusCode() == 200;
                try {
                    cluster.grpc(q);
                } catch (StatusRuntimeException e) {
                    ok = false;
                }
            }
            if (ok) {
                return;
            }
        }
    }

    /** Retries {@code q} over gRPC until it succeeds (the channel may be reconnecting); bounded. */
    static String eventually(GrpcTestCluster cluster, YcsbQuery q) throws Exception {
        StatusRuntimeException last = null;
        for (int attempt = 0; attempt < 200; attempt++) {
            try {
                return cluster.grpc(q);
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), "while the leaf reconnects: " + e);
                last = e;
                Thread.sleep(50);
            }
        }
        throw new AssertionError(q + " still fails after the leaf came back: " + last);
    }
}
