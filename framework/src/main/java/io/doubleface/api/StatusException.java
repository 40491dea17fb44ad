package io.doubleface.api;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Thrown by a service to answer its request with a status of its own choosing and a body it
 * encodes — {@code 404} for an unknown product, {@code 409} for a stale version, {@code 422} for a
 * request that parses but makes no sense, or a {@code 2xx} answer decided early. It may be thrown
 * from {@link HttpBinding#decode}, {@link GrpcBinding#decode}, {@link FanoutService#plan plan}, a
 * {@link ReplyHandler}, {@link FanoutService#merge merge}, and from {@link HttpBinding#encode} /
 * {@link GrpcBinding#encode}; calls planned in the step that threw are not sent.
 *
 * <pre>{@code
 * public Product merge(ProductQuery q, Replies<Object> replies, FanoutPlan<ProductQuery, Object> next) {
 *     if (replies.get(0) == null) {
 *         throw StatusException.of(404, "application/json",
 *                 ("{\"error\":\"no product " + q.id() + "\"}").getBytes(StandardCharsets.UTF_8));
 *     }
 *     ...
 * }
 * }</pre>
 *
 * <p>Over HTTP the answer is the status with {@link #body()} as its body and {@link #contentType()}
 * as its {@code Content-Type}. Over gRPC a {@code 2xx} answers {@code OK} with the body as the
 * response message (the bytes the method's response marshaller would have written); any other
 * status closes the call with the gRPC status of that HTTP status ({@link #grpcCode()}: {@code 404}
 * → {@code NOT_FOUND}, {@code 409} → {@code ALREADY_EXISTS}, …) and {@link #getMessage()} as its
 * description. Counted in {@code /admin/stats} and {@code /metrics} under the outcome
 * {@code service_status} ({@code ok} for a {@code 2xx}). Cheap: no stack trace.
 */
public final class StatusException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The HTTP status answered. */
    private final int status;
    /** The body's media type. */
    private final String contentType;
    /** The body's bytes. */
    private final byte[] body;

    private StatusException(int status, String message, String contentType, byte[] body) {
        super(message, null, false, false);
        this.status = status;
        this.contentType = contentType;
        this.body = body;
    }

    /**
     * Answers {@code status} with {@code message} as a plain-text body.
     *
     * @param status {@code 200..299} or {@code 400..599}
     * @param message the body's text (a line is added), and the gRPC description; not {@code null}
     * @return the exception to throw
     * @throws IllegalArgumentException if {@code status} is out of range
     */
    public static StatusException of(int status, String message) {
        Objects.requireNonNull(message, "message");
        return new StatusException(check(status), message, "text/plain; charset=utf-8",
                (message + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Answers {@code status} with a body the service encoded.
     *
     * @param status {@code 200..299} or {@code 400..599}
     * @param contentType the body's media type, e.g. {@code application/json}; not {@code null}
     * @param body the body's bytes (copied); not {@code null}, possibly empty
     * @return the exception to throw; its message (the gRPC description) is {@code "status N"}
     * @throws IllegalArgumentException if {@code status} is out of range or {@code contentType} blank
     */
    public static StatusException of(int status, String contentType, byte[] body) {
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(body, "body");
        if (contentType.isBlank()) {
            throw new IllegalArgumentException("contentType: blank");
        }
        return new StatusException(check(status), "status " + status, contentType, body.clone());
    }

    private static int check(int status) {
        if (!(status >= 200 && status <= 299) && !(status >= 400 && status <= 599)) {
            throw new IllegalArgumentException("status: " + status + " (expected: 200..299 or 400..599)");
        }
        return status;
    }

    /** {@return the HTTP status} */
    public int status() {
        return status;
    }

    /** {@return the body's media type} */
    public String contentType() {
        return contentType;
    }

    /** {@return a copy of the body's bytes} */
    public byte[] body() {
        return body.clone();
    }

    /** {@return the body's length in bytes} */
    public int bodyLength() {
        return body.length;
    }

    /**
     * {@return the name of the gRPC status code this status maps to}: {@code OK} for {@code 2xx};
     * {@code 400} {@code INVALID_ARGUMENT}, {@code 401} {@code UNAUTHENTICATED}, {@code 403}
     * {@code PERMISSION_DENIED}, {@code 404} {@code NOT_FOUND}, {@code 409} {@code ALREADY_EXISTS},
     * {@code 412} {@code FAILED_PRECONDITION}, {@code 429} {@code RESOURCE_EXHAUSTED}, {@code 499}
     * {@code CANCELLED}, {@code 501} {@code UNIMPLEMENTED}, {@code 503} {@code UNAVAILABLE},
     * {@code 504} {@code DEADLINE_EXCEEDED}; any other {@code 4xx} {@code FAILED_PRECONDITION}, any
     * other {@code 5xx} {@code INTERNAL}
     */
    public String grpcCode() {
        if (status < 300) {
            return "OK";
        }
        return switch (status) {
            case 400 -> "INVALID_ARGUMENT";
            case 401 -> "UNAUTHENTICATED";
            case 403 -> "PERMISSION_DENIED";
            case 404 -> "NOT_FOUND";
            case 409 -> "ALREADY_EXISTS";
            case 412 -> "FAILED_PRECONDITION";
            case 429 -> "RESOURCE_EXHAUSTED";
            case 499 -> "CANCELLED";
            case 501 -> "UNIMPLEMENTED";
            case 503 -> "UNAVAILABLE";
            case 504 -> "DEADLINE_EXCEEDED";
            default -> status < 500 ? "FAILED_PRECONDITION" : "INTERNAL";
        };
    }
}
