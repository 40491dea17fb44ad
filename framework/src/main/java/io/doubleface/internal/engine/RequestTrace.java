package io.doubleface.internal.engine;

import io.opentelemetry.api.trace.Span;

/**
 * One traced request's OpenTelemetry spans ({@link OtelTracing}): the request span and one span
 * per call of the current round. Kept apart from {@link FanoutExchange} so that no
 * OpenTelemetry class is loaded when tracing is off. Call spans end on the threads that handle
 * their outcomes (distinct slots); the rest on the thread that owns the exchange at that point.
 */
final class RequestTrace {

    private final OtelTracing otel;
    private final Span span;
    private Span[] calls = new Span[0];

    private RequestTrace(OtelTracing otel, Span span) {
        this.otel = otel;
        this.span = span;
    }

    static RequestTrace start(OtelTracing otel, String route, String configuration, TraceCarrier carrier,
            long nanoTime) {
        return new RequestTrace(otel, otel.startRequest(route, configuration, carrier, nanoTime));
    }

    void event(String name, long nanoTime) {
        otel.event(span, name, nanoTime);
    }

    /** The round's calls are sent: one span each. */
    void startRound(int round, int n, java.util.function.IntFunction<String> backend,
            java.util.function.IntUnaryOperator shard, long nanoTime) {
        endOpenCalls(nanoTime); // the previous round's, if any were left open
        Span[] c = new Span[n];
        for (int i = 0; i < n; i++) {
            c[i] = otel.startCall(span, backend.apply(i), shard.applyAsInt(i), round, nanoTime);
        }
        calls = c;
        span.setAttribute(OtelTracing.CALLS, (long) n);
    }

    /** {@return the headers carrying call {@code call}'s span to its shard, or {@code null} if it has none (open)} */
    java.util.Map<String, String> callHeaders(int call) {
        Span[] c = calls;
        Span s = call < c.length ? c[call] : null;
        return s == null ? null : otel.headers(s);
    }

    /** Call {@code call} of the current round has an outcome ({@code error == null}: a reply). */
    void endCall(int call, String error, long nanoTime) {
        Span[] c = calls;
        if (call < c.length && c[call] != null) {
            Span s = c[call];
            c[call] = null;
            otel.endCall(s, error, nanoTime);
        }
    }

    private void endOpenCalls(long nanoTime) {
        Span[] c = calls;
        for (int i = 0; i < c.length; i++) {
            if (c[i] != null) {
                otel.endCall(c[i], "no outcome before the request finished", nanoTime);
                c[i] = null;
            }
        }
    }

    /** The request is answered. */
    void end(Outcome outcome, String reason, long nanoTime) {
        endOpenCalls(nanoTime);
        otel.endRequest(span, outcome, reason, nanoTime);
    }
}
