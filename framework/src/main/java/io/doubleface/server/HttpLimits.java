package io.doubleface.server;

import java.time.Duration;

/**
 * Limits of the HTTP/1.1 upstream. Every request that breaks one gets a clear status and a short
 * text reason; the connection is then closed (the request stream can no longer be trusted).
 *
 * @param maxInitialLineLength longest request line; longer → {@code 414 URI Too Long}
 * @param maxHeaderSize total bytes of header fields; more → {@code 431 Request Header Fields Too Large}
 * @param maxBodySize longest request body; longer → {@code 413 Content Too Large}
 * @param maxPipelined requests read from one connection and not yet answered before the server
 *     stops reading from it (back-pressure, not an error)
 * @param idleTimeout a connection with no traffic for this long is closed
 */
public record HttpLimits(int maxInitialLineLength, int maxHeaderSize, int maxBodySize, int maxPipelined,
        Duration idleTimeout) {

    /** Default longest request line: {@value} bytes. */
    public static final int DEFAULT_MAX_INITIAL_LINE = 4096;
    /** Default total header size: {@value} bytes. */
    public static final int DEFAULT_MAX_HEADER_SIZE = 8192;
    /** Default body limit: {@value} bytes (the fanout API takes no body). */
    public static final int DEFAULT_MAX_BODY_SIZE = 65536;
    /** Default pipelining depth per connection: {@value}. */
    public static final int DEFAULT_MAX_PIPELINED = 128;
    /** Default idle timeout: {@value} seconds. */
    public static final int DEFAULT_IDLE_TIMEOUT_SECONDS = 60;

    /** The defaults. */
    public static final HttpLimits DEFAULTS = new HttpLimits(DEFAULT_MAX_INITIAL_LINE, DEFAULT_MAX_HEADER_SIZE,
            DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_PIPELINED, Duration.ofSeconds(DEFAULT_IDLE_TIMEOUT_SECONDS));

    public HttpLimits {
        positive("maxInitialLineLength", maxInitialLineLength);
        positive("maxHeaderSize", maxHeaderSize);
        if (maxBodySize < 0) {
            throw new IllegalArgumentException("maxBodySize: " + maxBodySize + " (expected: >= 0)");
        }
        positive("maxPipelined", maxPipelined);
        if (idleTimeout == null || idleTimeout.isNegative() || idleTimeout.isZero()) {
            throw new IllegalArgumentException("idleTimeout: " + idleTimeout + " (expected: > 0)");
        }
    }

    private static void positive(String what, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(what + ": " + v + " (expected: > 0)");
        }
    }
}
