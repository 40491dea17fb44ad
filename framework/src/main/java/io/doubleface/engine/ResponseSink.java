package io.doubleface.engine;

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
}
