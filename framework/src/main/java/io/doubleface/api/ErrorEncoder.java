package io.doubleface.api;

import io.doubleface.internal.Json;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The body of every HTTP answer the framework makes itself: a malformed request ({@code 400}), an
 * unknown route ({@code 404}), a wrong method ({@code 405}), a request too large or too slow
 * ({@code 408}, {@code 413}, {@code 414}, {@code 431}), a bug in service code ({@code 500}), a shard
 * that failed or the server overloaded ({@code 503}), the deadline ({@code 504}). Set one per server
 * with {@code FanoutServer.Builder.errorEncoder}; answers of the service's own choosing
 * ({@link io.doubleface.api.StatusException}) keep their own body. The message never names an
 * exception class or carries a stack trace or a driver's text: those go to the log.
 *
 * <pre>{@code
 * FanoutServer.builder().errorEncoder(ErrorEncoder.json())   // {"error":"no such path: /x","status":404}
 * }</pre>
 *
 * <p>Called on an I/O loop for each such answer: keep it cheap and thread-safe.
 */
@FunctionalInterface
public interface ErrorEncoder {

    /**
     * An encoded error body.
     *
     * @param contentType its media type
     * @param bytes its bytes (not copied: do not change them after returning)
     */
    record Body(String contentType, byte[] bytes) {
        /**
         * Checks the parts.
         *
         * @throws NullPointerException if a part is {@code null}
         */
        public Body {
            Objects.requireNonNull(contentType, "contentType");
            Objects.requireNonNull(bytes, "bytes");
        }
    }

    /**
     * Encodes the body of one answer.
     *
     * @param status the HTTP status, e.g. {@code 404}
     * @param message what went wrong, one line, e.g. {@code no such path: /x}
     * @return the body
     */
    Body encode(int status, String message);

    /** {@return the default: the message and a newline, {@code text/plain; charset=utf-8}} */
    static ErrorEncoder plainText() {
        return (status, message) -> new Body("text/plain; charset=utf-8",
                (message + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /** {@return {@code {"error":"<message>","status":<status>}} and a newline, {@code application/json}} */
    static ErrorEncoder json() {
        return (status, message) -> new Body("application/json",
                ("{\"error\":" + Json.quote(message) + ",\"status\":" + status + "}\n").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * {@return RFC 9457 problem details, {@code application/problem+json}:
     * {@code {"type":"about:blank","title":"<reason phrase>","status":<status>,"detail":"<message>"}}}
     */
    static ErrorEncoder problemDetails() {
        return (status, message) -> new Body("application/problem+json",
                ("{\"type\":\"about:blank\",\"title\":" + Json.quote(HttpResponseStatus.valueOf(status).reasonPhrase())
                        + ",\"status\":" + status + ",\"detail\":" + Json.quote(message) + "}\n")
                        .getBytes(StandardCharsets.UTF_8));
    }
}
