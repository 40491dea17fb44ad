package io.doubleface.api;

import java.time.Duration;

/**
 * What the server knows about a request beyond the request object itself: the route and headers
 * it came with, the time left before its deadline, its trace context and the configuration (threading
 * model) serving it. Read it in {@code plan} ({@link FanoutPlan#context()}), in {@code merge}
 * ({@link Replies#context()}) and in a {@link CallHandler} ({@link Call#context()}); a binding's
 * {@code decode} sees the same route, path and headers in its {@link HttpRequestView}.
 *
 * <pre>{@code
 * public void plan(Query q, FanoutPlan<Query, Object> plan) {
 *     String tenant = plan.context().header("x-tenant");         // null when the client sent none
 *     if (plan.context().timeLeft().toMillis() < 20) {
 *         throw StatusException.of(503, "not enough time left");  // a status of the service's choosing
 *     }
 *     ...
 * }
 * }</pre>
 *
 * <p>Readable from any thread while the request runs (the values never change, except the time
 * left). A request that did not come from the server's listeners (one submitted to the engine
 * directly, as the experiments do) has no route, method, path or headers: those methods give
 * {@code null}.
 */
public interface RequestContext {

    /**
     * {@return the route that took the request, as the server's statistics and metrics name it: for
     * HTTP the method and pattern (e.g. {@code GET /users/{user}}), for gRPC {@code grpc} and the
     * full method name (e.g. {@code grpc shop.Shop/Page}); {@code null} if the request came from no
     * listener}
     */
    String route();

    /** {@return the HTTP method ({@code POST} for gRPC), or {@code null} if the request came from no listener} */
    String method();

    /** {@return the decoded path without the query ({@code /shop.Shop/Page} for gRPC), or {@code null}} */
    String path();

    /**
     * The value of a path variable of the route's pattern.
     *
     * @param name the variable's name, without braces
     * @return the segment it matched, or {@code null} if the route has no such variable (or the
     *     request is not HTTP)
     */
    String pathVariable(String name);

    /**
     * A request header (HTTP) or ASCII metadata entry (gRPC).
     *
     * @param name the header's name, case-insensitive
     * @return its first value, or {@code null} if the request has none
     */
    String header(String name);

    /** {@return nanoseconds left before the request's deadline; negative once it passed} */
    long nanosLeft();

    /** {@return the time left before the request's deadline, zero once it passed} */
    default Duration timeLeft() {
        return Duration.ofNanos(Math.max(0, nanosLeft()));
    }

    /** {@return the request's W3C {@code traceparent} header, or {@code null} if it has none} */
    default String traceParent() {
        return header("traceparent");
    }

    /** {@return the name of the configuration (threading model) serving the request, e.g. {@code doubleface}} */
    String configuration();
}
