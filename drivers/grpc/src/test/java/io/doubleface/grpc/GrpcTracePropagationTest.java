package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.driver.DriverSettings;
import io.doubleface.server.FanoutServer;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * W3C trace context through a mid-tier on gRPC: a request's {@code traceparent} (HTTP header or
 * gRPC metadata) is the parent of the request's SERVER span, and each gRPC leaf call carries the
 * context of its own CLIENT span as metadata — under a loop model sending from the upstream loop,
 * one sending from backend loops, the thread model's {@code callAll} and Type-1's blocking call.
 * Real gRPC leaves record the metadata they receive; spans go to the SDK's in-memory exporter.
 */
class GrpcTracePropagationTest {

    static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final String PARENT = "00f067aa0ba902b7";
    static final String TRACEPARENT = "00-" + TRACE_ID + "-" + PARENT + "-01";

    /** {@code n:fan}: key n from shards 0..fan-1, answered with the replies' total length. */
    record Query(int n, int fan) {}

    static final class LeafFanout implements FanoutService<Query, Integer, String> {
        private final Backend<GrpcCall<?, ?>> leaves;

        LeafFanout(Backend<GrpcCall<?, ?>> leaves) {
            this.leaves = leaves;
        }

        @Override
        public void plan(Query q, FanoutPlan<Query, Integer> plan) {
            for (int s = 0; s < q.fan(); s++) {
                plan.call(leaves, s, TestLeaves.get(q.n(), 16), (Query qq, int call, String reply) -> reply.length());
            }
        }

        @Override
        public String merge(Query q, Replies<Integer> replies, FanoutPlan<Query, Integer> next) {
            return q.n() + ":" + replies.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    static Query parse(String s) throws BadRequestException {
        String[] p = s.split(":");
        try {
            return new Query(Integer.parseInt(p[0]), Integer.parseInt(p[1]));
        } catch (RuntimeException e) {
            throw new BadRequestException("expected n:fan");
        }
    }

    static final class Http implements HttpBinding<Query, String> {
        @Override
        public Query decode(HttpRequestView request) throws BadRequestException {
            return parse(request.query().get("q").get(0));
        }

        @Override
        public ByteBuf encode(String response, ByteBufAllocator alloc) {
            return ByteBufUtil.writeUtf8(alloc, response);
        }

        @Override
        public String contentType() {
            return "text/plain; charset=utf-8";
        }
    }

    static final MethodDescriptor<String, String> MID = MethodDescriptor.<String, String>newBuilder(
                    TestLeaves.UTF8, TestLeaves.UTF8)
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test.Mid/Get").build();

    static final class Grpc implements GrpcBinding<Query, String, String, String> {
        @Override
        public MethodDescriptor<String, String> method() {
            return MID;
        }

        @Override
        public Query decode(String request) throws BadRequestException {
            return parse(request);
        }

        @Override
        public String encode(String response) {
            return response;
        }
    }

    private static List<SpanData> clientSpans(InMemorySpanExporter exporter) {
        return exporter.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.CLIENT).toList();
    }

    private static SpanData serverSpan(InMemorySpanExporter exporter) {
        return exporter.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.SERVER).findFirst()
                .orElseThrow(() -> new AssertionError("no SERVER span: " + exporter.getFinishedSpanItems()));
    }

    @Test
    void eachLeafCallCarriesItsClientSpanAndTheUpstreamContextIsTheParent() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (TestLeaves leaves = TestLeaves.start(3, 100, Transport.AUTO);
                GrpcDriver driver = GrpcDriver.of(leaves.addresses(), DriverSettings.DEFAULT)) {
            FanoutServer.Builder b = FanoutServer.builder();
            Backend<GrpcCall<?, ?>> backend = b.backend("leaf", driver, false);
            LeafFanout service = new LeafFanout(backend);
            b.get("/q", service, new Http()).grpc(0, service, new Grpc());
            try (FanoutServer server = b.port(0).ioThreads(2).configuration("doubleface")
                    .deadline(Duration.ofSeconds(10)).openTelemetry(otel).start()) {
                for (String config : List.of("doubleface", "type2a-1f2b", "thread-8", "type1-4")) {
                    server.switchTo(config);
                    exporter.reset();
                    leaves.takeTraceparents();
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + server.port() + "/q?q=7:3")).header("traceparent", TRACEPARENT).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertEquals(200, r.statusCode(), config + ": " + r.body());
                    assertEquals("7:48", r.body());
                    SpanData req = serverSpan(exporter);
                    assertEquals(PARENT, req.getParentSpanId(), config);
                    List<SpanData> calls = clientSpans(exporter);
                    assertEquals(3, calls.size(), config + ": " + exporter.getFinishedSpanItems());
                    // what the leaves saw: shard and traceparent; what was sent: each call span's
                    Set<String> expected = new TreeSet<>();
                    for (SpanData c : calls) {
                        assertEquals(req.getSpanId(), c.getParentSpanId(), config);
                        expected.add(c.getAttributes().get(io.opentelemetry.api.common.AttributeKey.longKey(
                                "doubleface.shard")) + " 00-" + TRACE_ID + "-" + c.getSpanId() + "-01");
                    }
                    assertEquals(expected, new TreeSet<>(leaves.takeTraceparents()),
                            config + ": each leaf call carries the context of its own CLIENT span");
                }

                // the gRPC upstream: traceparent in the call's metadata is the request span's parent
                server.switchTo("doubleface");
                exporter.reset();
                ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
                try {
                    Metadata m = new Metadata();
                    m.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER), TRACEPARENT);
                    String reply = ClientCalls.blockingUnaryCall(io.grpc.ClientInterceptors.intercept(ch,
                            MetadataUtils.newAttachHeadersInterceptor(m)), MID, CallOptions.DEFAULT
                            .withDeadlineAfter(10, TimeUnit.SECONDS), "5:2");
                    assertEquals("5:32", reply);
                    SpanData req = serverSpan(exporter);
                    assertEquals(TRACE_ID, req.getTraceId());
                    assertEquals(PARENT, req.getParentSpanId(), "the gRPC caller's span is the parent");
                    assertEquals("grpc test.Mid/Get", req.getName(), "the route name of a gRPC method");
                    Set<String> sent = clientSpans(exporter).stream().map(SpanData::getSpanId)
                            .collect(Collectors.toCollection(TreeSet::new));
                    Set<String> seen = leaves.takeTraceparents().stream().map(t -> t.split("-")[2])
                            .collect(Collectors.toCollection(TreeSet::new));
                    assertEquals(sent, seen);
                    assertEquals(2, seen.size());

                    // without one: a root span, and the leaves still get the (new) trace's context
                    exporter.reset();
                    ClientCalls.blockingUnaryCall(ch, MID, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                            "5:1");
                    req = serverSpan(exporter);
                    assertEquals("0000000000000000", req.getParentSpanId());
                    List<String> got = leaves.takeTraceparents();
                    assertEquals(1, got.size());
                    assertTrue(got.get(0).contains("-" + req.getTraceId() + "-"), got.toString());
                } finally {
                    ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }
        } finally {
            otel.close();
        }
    }
}
