package io.doubleface.api;

/**
 * One call of a request, as its {@link CallHandler} sees it while it processes the call's reply.
 * Valid only during {@link CallHandler#onReply}; keep values, not the call.
 *
 * @param <Q> the request
 */
public interface Call<Q> {

    /** {@return the request the call was planned for} */
    Q request();

    /** {@return the call number in its round, as {@link FanoutPlan#call} returned it} */
    int index();

    /** {@return the backend the call went to} */
    Backend<?> backend();

    /**
     * {@return the shard that answered: the index planned, or for a call routed by key the shard
     * its backend chose for the key}
     */
    int shard();

    /** {@return what the server knows about the request: route, headers, deadline left, …} */
    RequestContext context();
}
