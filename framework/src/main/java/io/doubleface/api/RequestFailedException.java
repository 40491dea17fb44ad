package io.doubleface.api;

/**
 * Thrown by a service's {@link FanoutService#plan plan}, {@link ReplyHandler#onReply onReply} or
 * {@link FanoutService#merge merge} to fail its request with a chosen status and reason, instead of
 * the {@code 500} any other exception gives: {@link #unavailable} answers {@code 503} (gRPC
 * {@code UNAVAILABLE}), {@link #timedOut} {@code 504} ({@code DEADLINE_EXCEEDED}), each with the
 * reason as the short text of the answer.
 *
 * <pre>{@code
 * public Answer merge(Query q, Replies<Value> replies, FanoutPlan<Query, Value> next) {
 *     if (!replies.ok(0) && q.lastReplica()) {
 *         throw RequestFailedException.unavailable("every replica of group " + q.group() + " failed");
 *     }
 *     ...
 * }
 * }</pre>
 *
 * <p>Calls already planned in the round being planned are not sent. Cheap: no stack trace.
 */
public final class RequestFailedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Whether the request is answered {@code 504} (else {@code 503}). */
    private final boolean timedOut;

    private RequestFailedException(String reason, boolean timedOut) {
        super(reason, null, false, false);
        this.timedOut = timedOut;
    }

    /**
     * A request failed because what it needs is unavailable: answered {@code 503} (gRPC {@code UNAVAILABLE}).
     *
     * @param reason the short text reason sent with the answer
     * @return the exception to throw
     */
    public static RequestFailedException unavailable(String reason) {
        return new RequestFailedException(reason, false);
    }

    /**
     * A request failed because something it needs took too long: answered {@code 504} (gRPC
     * {@code DEADLINE_EXCEEDED}).
     *
     * @param reason the short text reason sent with the answer
     * @return the exception to throw
     */
    public static RequestFailedException timedOut(String reason) {
        return new RequestFailedException(reason, true);
    }

    /** {@return whether the request is answered {@code 504} (else {@code 503})} */
    public boolean isTimeout() {
        return timedOut;
    }
}
