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
 * @param idleTimeout a connection with no traffic for this long is closed; each connection's timeout
 *     is up to a tenth longer, at random, so that connections idle since the same moment (a
 *     client's pool after a burst) close spread over that tenth, not all in one event-loop iteration
 *     (HTTP/1.1 connections; gRPC connections are closed by grpc-java's own idle handling at this
 *     timeout)
 * @param maxQueuedBytes response bytes written to one connection and not yet taken by its client
 *     (Netty's outbound buffer) above which the connection is closed as a slow reader. Reading from
 *     a connection also stops while its outbound buffer is above Netty's high water mark, so only
 *     requests already in flight (at most {@code maxPipelined}) can add to it.
 * @param slowReaderTimeout a connection whose client takes no response bytes for this long while
 *     responses wait (its outbound buffer stays above the high water mark) is closed
 * @param requestReadTimeout a request whose head (or body) has begun to arrive but is not complete
 *     this long later gets {@code 408 Request Timeout} and the connection is closed (a client
 *     trickling bytes resets the idle timeout but not this one); checked once per this period, so
 *     such a request is cut after one to two periods
 */
public record HttpLimits(int maxInitialLineLength, int maxHeaderSize, int maxBodySize, int maxPipelined,
        Duration idleTimeout, long maxQueuedBytes, Duration slowReaderTimeout, Duration requestReadTimeout) {

    /** Default longest request line: {@value} bytes. */
    public static final int DEFAULT_MAX_INITIAL_LINE = 4096;
    /** Default total header size: {@value} bytes. */
    public static final int DEFAULT_MAX_HEADER_SIZE = 8192;
    /** Default body limit: {@value} bytes (a larger body gets {@code 413}; raise it for routes that take big bodies). */
    public static final int DEFAULT_MAX_BODY_SIZE = 65536;
    /** Default pipelining depth per connection: {@value}. */
    public static final int DEFAULT_MAX_PIPELINED = 128;
    /** Default idle timeout: {@value} seconds. */
    public static final int DEFAULT_IDLE_TIMEOUT_SECONDS = 60;
    /** Default bound of unread response bytes per connection: {@value} (16 MiB). */
    public static final long DEFAULT_MAX_QUEUED_BYTES = 16L << 20;
    /** Default time a client may leave responses unread: {@value} seconds. */
    public static final int DEFAULT_SLOW_READER_TIMEOUT_SECONDS = 30;
    /** Default time to send one request's head or body: {@value} seconds. */
    public static final int DEFAULT_REQUEST_READ_TIMEOUT_SECONDS = 10;

    /** The defaults. */
    public static final HttpLimits DEFAULTS = new HttpLimits(DEFAULT_MAX_INITIAL_LINE, DEFAULT_MAX_HEADER_SIZE,
            DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_PIPELINED, Duration.ofSeconds(DEFAULT_IDLE_TIMEOUT_SECONDS));

    /**
     * The first five limits, with the default slow-reader limits ({@value #DEFAULT_MAX_QUEUED_BYTES}
     * bytes, {@value #DEFAULT_SLOW_READER_TIMEOUT_SECONDS} s) and request read timeout
     * ({@value #DEFAULT_REQUEST_READ_TIMEOUT_SECONDS} s).
     *
     * @param maxInitialLineLength longest request line in bytes, {@code > 0}
     * @param maxHeaderSize total bytes of header fields, {@code > 0}
     * @param maxBodySize longest request body in bytes, {@code >= 0}
     * @param maxPipelined requests read and not yet answered per connection, {@code > 0}
     * @param idleTimeout idle time after which a connection is closed, {@code > 0}
     */
    public HttpLimits(int maxInitialLineLength, int maxHeaderSize, int maxBodySize, int maxPipelined,
            Duration idleTimeout) {
        this(maxInitialLineLength, maxHeaderSize, maxBodySize, maxPipelined, idleTimeout, DEFAULT_MAX_QUEUED_BYTES,
                Duration.ofSeconds(DEFAULT_SLOW_READER_TIMEOUT_SECONDS),
                Duration.ofSeconds(DEFAULT_REQUEST_READ_TIMEOUT_SECONDS));
    }

    /**
     * These limits with another slow-reader bound and timeout.
     *
     * @param maxQueuedBytes unread response bytes per connection above which it is closed, {@code > 0}
     * @param slowReaderTimeout how long a client may take no response bytes while responses wait,
     *     {@code > 0}
     * @return new limits
     */
    public HttpLimits withSlowReader(long maxQueuedBytes, Duration slowReaderTimeout) {
        return new HttpLimits(maxInitialLineLength, maxHeaderSize, maxBodySize, maxPipelined, idleTimeout,
                maxQueuedBytes, slowReaderTimeout, requestReadTimeout);
    }

    /**
     * These limits with another request read timeout.
     *
     * @param requestReadTimeout how long one request's head or body may take to arrive, {@code > 0}
     * @return new limits
     */
    public HttpLimits withRequestReadTimeout(Duration requestReadTimeout) {
        return new HttpLimits(maxInitialLineLength, maxHeaderSize, maxBodySize, maxPipelined, idleTimeout,
                maxQueuedBytes, slowReaderTimeout, requestReadTimeout);
    }

    /**
     * Checks the limits.
     *
     * @throws IllegalArgumentException if a limit is out of range (every one must be positive, except
     *     {@code maxBodySize}, which may be 0) or a timeout is {@code null}
     */
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
        if (maxQueuedBytes < 1) {
            throw new IllegalArgumentException("maxQueuedBytes: " + maxQueuedBytes + " (expected: > 0)");
        }
        if (slowReaderTimeout == null || slowReaderTimeout.isNegative() || slowReaderTimeout.isZero()) {
            throw new IllegalArgumentException("slowReaderTimeout: " + slowReaderTimeout + " (expected: > 0)");
        }
        if (requestReadTimeout == null || requestReadTimeout.isNegative() || requestReadTimeout.isZero()) {
            throw new IllegalArgumentException("requestReadTimeout: " + requestReadTimeout + " (expected: > 0)");
        }
    }

    private static void positive(String what, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(what + ": " + v + " (expected: > 0)");
        }
    }

    /** The part of these limits an upstream connection's handler enforces. */
    io.doubleface.server.internal.ConnectionLimits connectionLimits() {
        return new io.doubleface.server.internal.ConnectionLimits(maxInitialLineLength, maxHeaderSize, maxBodySize,
                maxPipelined, maxQueuedBytes, slowReaderTimeout, requestReadTimeout);
    }
}
