package io.doubleface.internal.engine;

/**
 * Where the outcome of one upstream request goes (the HTTP or gRPC upstream implements it).
 * Exactly one of the two methods is called, exactly once, from any thread; implementations hop
 * to their connection's loop themselves.
 *
 * @param <R> the response type
 */
public interface ResponseSink<R> {

    /** The request succeeded with {@code response}. */
    void complete(R response);

    /**
     * The request failed.
     *
     * @param outcome the failure class (decides the status code)
     * @param reason a short human-readable reason sent to the client
     */
    void fail(Outcome outcome, String reason);

    /**
     * The service answered with a status of its own choosing ({@link io.doubleface.api.StatusException}).
     * By default, as a failure of outcome {@link Outcome#SERVICE_STATUS} with the exception's message.
     *
     * @param answer the status, body and message
     */
    default void fail(io.doubleface.api.StatusException answer) {
        fail(Outcome.SERVICE_STATUS, answer.getMessage());
    }

    /**
     * {@return what the listener knows of the request this sink answers (route, headers, …), read
     * through {@link io.doubleface.api.RequestContext}; {@link RequestInfo#NONE} by default}
     */
    default RequestInfo info() {
        return RequestInfo.NONE;
    }
}
