package io.doubleface.internal.engine;

/**
 * The headers of an upstream request, as far as tracing needs them: W3C {@code traceparent} and
 * {@code tracestate} (HTTP headers, gRPC metadata). Keys are lower case.
 */
@FunctionalInterface
public interface TraceCarrier {

    /** {@return the value of header {@code key}, or {@code null}} */
    String get(String key);
}
