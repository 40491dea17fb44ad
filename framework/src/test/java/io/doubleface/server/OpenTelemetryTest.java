package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.internal.engine.OtelTracing;
import io.doubleface.testing.TestRead;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
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
import org.junit.jupiter.api.Test;

/**
 * {@code Builder.openTelemetry}: a SERVER span per request whose parent is the caller's
 * {@code traceparent}, a CLIENT child per shard call, an error status on a failed call and
 * request; under the loop models and the thread models. The SDK's in-memory exporter.
 */
class OpenTelemetryTest {

    static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final String PARENT = "00f067aa0ba902b7";

    @Test
    void eachRequestIsASpanUnderTheCallersTraceWithAChildPerShardCall() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        GeneratedShards driver = new GeneratedShards(4);
        FanoutServer.Builder b = FanoutServer.builder();
        io.doubleface.api.Backend<TestRead> echo = b.backend("echo", driver, false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (FanoutServer server = b.port(0).ioThreads(2).configuration("doubleface").deadline(Duration.ofSeconds(10))
                .openTelemetry(otel).start()) {
            for (String config : List.of("doubleface", "type2a-1f2b", "thread-8", "type2b")) {
                server.switchTo(config);
                exporter.reset();
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                        + "/echo?key=5&fan=3")).header("traceparent", "00-" + TRACE_ID + "-" + PARENT + "-01").build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), config);
                List<SpanData> spans = exporter.getFinishedSpanItems();
                SpanData req = spans.stream().filter(s -> s.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
                assertEquals(TRACE_ID, req.getTraceId(), config);
                assertEquals(PARENT, req.getParentSpanId(), config + ": the caller's span is the parent");
                assertEquals("GET /echo", req.getName());
                assertEquals(config, req.getAttributes().get(OtelTracingKeys.CONFIG), config);
                assertEquals("ok", req.getAttributes().get(OtelTracingKeys.OUTCOME));
                assertTrue(req.getEvents().stream().anyMatch(e -> e.getName().equals("planned")), req.toString());
                List<SpanData> calls = spans.stream().filter(s -> s.getKind() == SpanKind.CLIENT).toList();
                assertEquals(3, calls.size(), config + ": " + spans);
                for (SpanData c : calls) {
                    assertEquals(req.getSpanId(), c.getParentSpanId(), config);
                    assertEquals("call echo", c.getName());
                    assertEquals(StatusCode.UNSET, c.getStatus().getStatusCode(), c.toString());
                    assertTrue(c.getEndEpochNanos() <= req.getEndEpochNanos(), config);
                }
            }
            // a failed shard: its call span and the request span say so
            server.switchTo("doubleface");
            exporter.reset();
            driver.failShard(1);
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                    + "/echo?key=5&fan=3")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(503, r.statusCode(), r.body());
            List<SpanData> spans = exporter.getFinishedSpanItems();
            SpanData req = spans.stream().filter(s -> s.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
            assertEquals(StatusCode.ERROR, req.getStatus().getStatusCode());
            assertEquals("unavailable", req.getAttributes().get(OtelTracingKeys.OUTCOME));
            assertTrue(spans.stream().anyMatch(s -> s.getKind() == SpanKind.CLIENT
                    && s.getStatus().getStatusCode() == StatusCode.ERROR), spans.toString());
            assertTrue(req.getParentSpanId().equals("0000000000000000"), "no traceparent: a root span");
        } finally {
            driver.failShard(-1);
            otel.close();
        }
    }

    /** The attribute keys, as the tests read them. */
    static final class OtelTracingKeys {
        static final io.opentelemetry.api.common.AttributeKey<String> CONFIG =
                io.opentelemetry.api.common.AttributeKey.stringKey("doubleface.configuration");
        static final io.opentelemetry.api.common.AttributeKey<String> OUTCOME =
                io.opentelemetry.api.common.AttributeKey.stringKey("doubleface.outcome");

        static {
            assertEquals(OtelTracing.SCOPE, "io.doubleface");
        }
    }
}
