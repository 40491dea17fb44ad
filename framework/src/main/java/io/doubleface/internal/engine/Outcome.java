package io.doubleface.internal.engine;

/** How an upstream request ended; each maps to one HTTP status and one counter in {@code /admin/stats}. */
public enum Outcome {
    OK(200),
    BAD_REQUEST(400),
    NOT_FOUND(404),
    METHOD_NOT_ALLOWED(405),
    URI_TOO_LONG(414),
    BODY_TOO_LARGE(413),
    HEADERS_TOO_LARGE(431),
    /** The client began a request but did not finish its head or body in time ({@code HttpLimits.requestReadTimeout}). */
    REQUEST_TIMEOUT(408),
    /** A request line naming an HTTP major version other than 1 (RFC 9112). */
    VERSION_NOT_SUPPORTED(505),
    INTERNAL_ERROR(500),
    /** A shard failed (connection lost, shard error) or the server is draining. */
    UNAVAILABLE(503),
    /**
     * The server refused the request to protect itself: admission control's limit of requests in
     * flight, or a full worker queue. Answered with {@code Retry-After: 1} (gRPC {@code RESOURCE_EXHAUSTED}).
     */
    OVERLOADED(503),
    /** The per-request deadline passed, or a shard call timed out. */
    TIMEOUT(504),
    /**
     * The service answered a status of its own choosing other than {@code 2xx}
     * ({@link io.doubleface.api.StatusException}, or a binding's status): {@link #status()} is {@code 0},
     * the status is the service's.
     */
    SERVICE_STATUS(0);

    private final int status;

    Outcome(int status) {
        this.status = status;
    }

    /** The HTTP status code. */
    public int status() {
        return status;
    }

    /** The name used in stats and metrics, e.g. {@code unavailable}. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
