package io.doubleface.internal.engine;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * OpenTelemetry spans of the engine's requests (only when a server is given an
 * {@link OpenTelemetry}; otherwise no class of the API is loaded): one {@code SERVER} span per
 * upstream request, its parent taken from the request's W3C {@code traceparent} with the
 * instance's propagators, events at the stage points, and one {@code CLIENT} child span per shard
 * call (from the end of the plan to the call's outcome), whose context goes to the shard in the
 * call's headers where the driver's protocol carries them ({@link io.doubleface.driver.spi.CallTrace}). Spans are started and ended with
 * explicit {@link System#nanoTime()}-based timestamps, so no thread-local context is needed on
 * the event loops.
 */
public final class OtelTracing {

    /** Instrumentation scope name: {@value}. */
    public static final String SCOPE = "io.doubleface";

    static final AttributeKey<String> CONFIG = AttributeKey.stringKey("doubleface.configuration");
    static final AttributeKey<String> ROUTE = AttributeKey.stringKey("doubleface.route");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("doubleface.outcome");
    static final AttributeKey<String> BACKEND = AttributeKey.stringKey("doubleface.backend");
    static final AttributeKey<Long> SHARD = AttributeKey.longKey("doubleface.shard");
    static final AttributeKey<Long> CALLS = AttributeKey.longKey("doubleface.calls");
    static final AttributeKey<Long> ROUND = AttributeKey.longKey("doubleface.round");

    private static final TextMapGetter<TraceCarrier> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(TraceCarrier carrier) {
            return List.of("traceparent", "tracestate");
        }

        @Override
        public String get(TraceCarrier carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private static final TextMapSetter<Map<String, String>> SETTER = (carrier, key, value) -> {
        if (carrier != null) {
            carrier.put(key, value);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    /** Wall-clock epoch nanos minus nanoTime at start: turns nanoTime points into span timestamps. */
    private final long epochOffsetNanos;

    /**
     * {@code otel} (an {@link OpenTelemetry}, held as an {@code Object} by callers that must not
     * load the API when tracing is off) as tracing.
     */
    public static OtelTracing of(Object otel) {
        return new OtelTracing((OpenTelemetry) otel);
    }

    /** @param otel where spans go (its tracer provider) and how parents are read (its propagators) */
    public OtelTracing(OpenTelemetry otel) {
        this.tracer = otel.getTracer(SCOPE);
        this.propagator = otel.getPropagators().getTextMapPropagator();
        this.epochOffsetNanos = TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis()) - System.nanoTime();
    }

    private long epoch(long nanoTime) {
        return epochOffsetNanos + nanoTime;
    }

    /** Starts the span of a request admitted at {@code nanoTime}. */
    Span startRequest(String route, String configuration, TraceCarrier carrier, long nanoTime) {
        Context parent = carrier == null ? Context.root() : propagator.extract(Context.root(), carrier, GETTER);
        return tracer.spanBuilder(route == null ? "doubleface request" : route).setParent(parent)
                .setSpanKind(SpanKind.SERVER).setStartTimestamp(epoch(nanoTime), TimeUnit.NANOSECONDS)
                .setAttribute(CONFIG, configuration).setAttribute(ROUTE, route == null ? "" : route).startSpan();
    }

    /** Adds the event {@code name} at {@code nanoTime} to {@code span}. */
    void event(Span span, String name, long nanoTime) {
        span.addEvent(name, epoch(nanoTime), TimeUnit.NANOSECONDS);
    }

    /** Starts the span of one shard call, a child of {@code request}, at {@code nanoTime}. */
    Span startCall(Span request, String backend, int shard, int round, long nanoTime) {
        return tracer.spanBuilder("call " + backend).setParent(Context.root().with(request))
                .setSpanKind(SpanKind.CLIENT).setStartTimestamp(epoch(nanoTime), TimeUnit.NANOSECONDS)
                .setAttribute(BACKEND, backend).setAttribute(SHARD, (long) shard).setAttribute(ROUND, (long) round)
                .startSpan();
    }

    /**
     * {@return the headers that carry {@code call}'s context to the shard (W3C {@code traceparent},
     * {@code tracestate}, as the instance's propagators write them)}
     */
    Map<String, String> headers(Span call) {
        Map<String, String> h = new HashMap<>(4);
        propagator.inject(Context.root().with(call), h, SETTER);
        return h;
    }

    /** Ends a call span: ok, or failed with {@code error}. */
    void endCall(Span call, String error, long nanoTime) {
        if (error != null) {
            call.setStatus(StatusCode.ERROR, error);
        }
        call.end(epoch(nanoTime), TimeUnit.NANOSECONDS);
    }

    /** Ends the request span with its outcome. */
    void endRequest(Span request, Outcome outcome, String reason, long nanoTime) {
        request.setAttribute(OUTCOME, outcome.label());
        if (outcome != Outcome.OK) {
            request.setStatus(StatusCode.ERROR, reason == null ? outcome.label() : reason);
        }
        request.end(epoch(nanoTime), TimeUnit.NANOSECONDS);
    }
}
