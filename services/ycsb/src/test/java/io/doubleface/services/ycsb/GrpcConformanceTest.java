package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.services.ycsb.v1.FanoutServiceGrpc;
import io.doubleface.services.ycsb.v1.QueryReply;
import io.doubleface.services.ycsb.v1.QueryRequest;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.FieldSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every threading model over gRPC leaves answers byte-identically to {@link YcsbAnswer}, over
 * the HTTP upstream and the gRPC upstream alike; bad gRPC queries get {@code INVALID_ARGUMENT};
 * switching the configuration while gRPC requests run loses none.
 */
class GrpcConformanceTest {

    static final int SHARDS = 20;
    static GrpcTestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = GrpcTestCluster.builder(SHARDS).start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    static Stream<Arguments> cases() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (String model : Models.ALL) {
            for (int fanout : new int[] {1, 5, 20}) {
                for (Size size : Size.values()) {
                    b.add(Arguments.of(model, fanout, size));
                }
            }
        }
        return b.build();
    }

    @ParameterizedTest(name = "{0} fanout={1} {2}")
    @MethodSource("cases")
    void everyModelGivesTheSameBytesOverGrpcLeavesOnBothUpstreams(String model, int fanout, Size size)
            throws Exception {
        cluster.server.switchTo(model);
        for (long key : new long[] {0, 7, GrpcTestCluster.RECORDS - 3}) {
            YcsbQuery q = new YcsbQuery(fanout, size, key);
            HttpResponse<String> r = cluster.get(q);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(cluster.expected(q), r.body(), model + " http " + q);
            assertEquals(cluster.expected(q), cluster.grpc(q), model + " grpc " + q);
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.ycsb.Models#ALL")
    void everyModelGivesTheSameBytesOverGrpcUnderConcurrentLoad(String model) throws Exception {
        cluster.server.switchTo(model);
        List<YcsbQuery> qs = queries(120);
        List<String> bodies = grpcAll(qs, 16);
        for (int i = 0; i < qs.size(); i++) {
            assertEquals(cluster.expected(qs.get(i)), bodies.get(i), model + " " + qs.get(i));
        }
    }

    @Test
    void badQueriesGetInvalidArgumentAndDefaultsMatchHttp() throws Exception {
        cluster.server.switchTo("doubleface");
        List<QueryRequest> bad = List.of(
                QueryRequest.newBuilder().setFanout(0).build(),
                QueryRequest.newBuilder().setFanout(SHARDS + 1).build(),
                QueryRequest.newBuilder().setSize("huge").build(),
                QueryRequest.newBuilder().setKey(-1).build(),
                QueryRequest.newBuilder().setKey(GrpcTestCluster.RECORDS).build());
        for (QueryRequest r : bad) {
            try {
                cluster.grpc(r);
                throw new AssertionError("accepted " + r);
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), r.toString());
                assertTrue(e.getStatus().getDescription() != null && !e.getStatus().getDescription().isEmpty());
            }
        }
        // absent fields take the HTTP defaults: fanout 5, small
        String body = cluster.grpc(QueryRequest.newBuilder().setKey(11).build());
        assertEquals(cluster.expected(new YcsbQuery(5, Size.SMALL, 11)), body);
        HttpResponse<String> http = cluster.http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                "http://127.0.0.1:" + cluster.server.port() + "/query?key=11")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(http.body(), body);
    }

    /** Bytes that are no QueryRequest: INVALID_ARGUMENT with the reason, counted as a bad request, never logged. */
    @Test
    void aMalformedRequestMessageGetsInvalidArgumentNotUnknown() throws Exception {
        cluster.server.switchTo("doubleface");
        MethodDescriptor.Marshaller<byte[]> raw = new MethodDescriptor.Marshaller<>() {
            @Override
            public java.io.InputStream stream(byte[] value) {
                return new java.io.ByteArrayInputStream(value);
            }

            @Override
            public byte[] parse(java.io.InputStream stream) {
                try {
                    return stream.readAllBytes();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        };
        MethodDescriptor<byte[], byte[]> method = FanoutServiceGrpc.getQueryMethod().toBuilder(raw, raw).build();
        var stats = cluster.server.internals().stats();
        long decodeErrors = stats.error("decode").count();
        long badRequests = stats.requests().count(io.doubleface.internal.engine.Outcome.BAD_REQUEST);
        // field 1 (fanout, varint) declared as a length-delimited 100-byte field with 2 bytes given
        for (byte[] bad : new byte[][] {{0x0a, 0x64, 0x01, 0x02}, {(byte) 0xff, (byte) 0xff, (byte) 0xff}}) {
            StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                    () -> ClientCalls.blockingUnaryCall(cluster.channel, method, CallOptions.DEFAULT, bad));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
            assertTrue(e.getStatus().getDescription().startsWith("malformed request message: "), e.toString());
        }
        var after = cluster.server.internals().stats();
        assertEquals(decodeErrors, after.error("decode").count(), "counted as a server error");
        assertEquals(badRequests + 2, after.requests().count(io.doubleface.internal.engine.Outcome.BAD_REQUEST));
        // the same channel goes on working
        assertEquals(cluster.expected(new YcsbQuery(5, Size.SMALL, 11)), cluster.grpc(QueryRequest.newBuilder().setKey(11).build()));
    }

    @Test
    void switchingConfigurationsWhileGrpcRequestsRunLosesNone() throws Exception {
        cluster.server.switchTo("doubleface");
        AtomicBoolean stop = new AtomicBoolean();
        List<Throwable> switchErrors = new ArrayList<>();
        Thread switcher = Thread.ofPlatform().name("switcher").start(() -> {
            int i = 0;
            while (!stop.get()) {
                try {
                    cluster.server.switchTo(Models.ALL.get(i++ % Models.ALL.size()));
                    Thread.sleep(5);
                } catch (Throwable t) {
                    synchronized (switchErrors) {
                        switchErrors.add(t);
                    }
                    return;
                }
            }
        });
        List<YcsbQuery> qs = queries(600);
        List<String> bodies;
        try {
            bodies = grpcAll(qs, 32);
        } finally {
            stop.set(true);
            switcher.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertEquals(List.of(), switchErrors);
        for (int i = 0; i < qs.size(); i++) {
            assertEquals(cluster.expected(qs.get(i)), bodies.get(i), qs.get(i).toString());
        }
        assertTrue(cluster.server.internals().stats().switches() > 1, "no switch happened during the run");
    }

    static List<YcsbQuery> queries(int n) {
        List<YcsbQuery> qs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Size size = Size.values()[i % 3];
            int fanout = size == Size.LARGE ? 1 + i % 5 : new int[] {1, 5, 20}[i % 3 == 0 ? 2 : i % 2];
            qs.add(new YcsbQuery(fanout, size, (i * 31L) % GrpcTestCluster.RECORDS));
        }
        return qs;
    }

    /** Sends every query over gRPC, at most {@code inFlight} at a time; the bodies in query order. */
    static List<String> grpcAll(List<YcsbQuery> qs, int inFlight) throws Exception {
        Semaphore permits = new Semaphore(inFlight);
        List<CompletableFuture<String>> futures = new ArrayList<>();
        FanoutServiceGrpc.FanoutServiceStub stub = FanoutServiceGrpc.newStub(cluster.channel);
        for (YcsbQuery q : qs) {
            if (!permits.tryAcquire(TestCluster.GENEROUS.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("no gRPC response within " + TestCluster.GENEROUS);
            }
            CompletableFuture<String> f = new CompletableFuture<>();
            f.whenComplete((r, e) -> permits.release());
            stub.withDeadlineAfter(TestCluster.GENEROUS.toMillis(), TimeUnit.MILLISECONDS)
                    .query(GrpcTestCluster.request(q), new StreamObserver<>() {
                        @Override
                        public void onNext(QueryReply value) {
                            f.complete(value.getBody().toString(StandardCharsets.UTF_8));
                        }

                        @Override
                        public void onError(Throwable t) {
                            f.completeExceptionally(t);
                        }

                        @Override
                        public void onCompleted() {
                            f.completeExceptionally(new AssertionError("no reply message"));
                        }
                    });
            futures.add(f);
        }
        List<String> out = new ArrayList<>();
        for (CompletableFuture<String> f : futures) {
            out.add(f.get(TestCluster.GENEROUS.toSeconds() * 2, TimeUnit.SECONDS));
        }
        return out;
    }
}
