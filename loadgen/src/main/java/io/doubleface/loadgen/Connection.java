package io.doubleface.loadgen;

/**
 * One connection of a {@link Worker}, carrying one request at a time (no pipelining, no
 * multiplexing: in open loop a queue of unsent requests must show as latency, not hide in a pipe).
 * {@link HttpConnection} speaks HTTP/1.1, {@link GrpcConnection} gRPC (one HTTP/2 connection per
 * {@code Connection}).
 *
 * <p>Threading: confined to its worker's event loop.
 */
abstract class Connection {

    final Worker worker;
    /** Intended send time of the request in flight (System.nanoTime()). */
    long intended;
    boolean measured;
    /** Index in the mix of the template of the request in flight (its latency class); set when the request is built. */
    int template;
    boolean inFlight;
    /** Counted as a timeout already; the close that follows is not another error. */
    boolean abandoned;
    /** The response status (HTTP, or the HTTP equivalent of a gRPC status). */
    int status;
    boolean keepAlive;
    /** The request in flight is a resend (see {@link Worker#closed}); it is not resent again. */
    boolean resend;

    /**
     * Whether the request in flight, lost with this connection, may be sent again on another one:
     * HTTP only, when the connection had already carried a response (a kept-alive connection the
     * server may have closed as idle just as the request went out), no byte of this request's
     * response was read, and its method is idempotent. HTTP clients resend such a request (RFC 9110,
     * 9.2.2); a load generator that counted it as an error would charge a server's idle timeout as
     * a failure.
     */
    boolean mayResend() {
        return false;
    }

    Connection(Worker worker) {
        this.worker = worker;
    }

    /** Sends the next request of the mix; the response ends in {@link Worker#completed}, a loss in {@link Worker#closed}. */
    abstract void send(long intendedNanos, boolean measuredRequest);

    /** Whether the connection is open and can carry a request. */
    abstract boolean isActive();

    /** Closes the connection; {@link Worker#closed} follows in a later task. */
    abstract void close();
}
