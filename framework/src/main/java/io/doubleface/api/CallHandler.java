package io.doubleface.api;

/**
 * Processes the reply of one call planned with a {@link CallRef}: like {@link ReplyHandler}, with
 * the call itself in hand ({@link Call}: its request, number, backend, shard and the request's
 * {@link RequestContext}) and a result of the reference's own type, so the calls of one request
 * need no common reply type.
 *
 * <pre>{@code
 * plan.call(users, REDIS.hgetall("user:" + id), USER, (call, fields) -> User.of(call.request(), fields));
 * }</pre>
 *
 * <p>Threading, reference counting and failures are as for {@link ReplyHandler}: it runs on the
 * thread the active model prescribes, possibly beside the handlers of the request's other calls; a
 * reference-counted reply is released after it returns unless it returns the reply itself. The
 * {@code call} is valid only while the handler runs. A handler of this kind costs one small object
 * per reply (its {@code call}); a {@link ReplyHandler} or a reference without a handler costs none.
 *
 * @param <Q> the request
 * @param <V> the reply type of the call's command
 * @param <T> the result, the type of the call's {@link CallRef}
 */
@FunctionalInterface
public interface CallHandler<Q, V, T> {

    /**
     * Processes one reply.
     *
     * @param call the call the reply answers: valid only during this method
     * @param reply the driver's reply (see {@link ReplyHandler#onReply} on reference-counted replies)
     * @return the result that {@link Replies#get(CallRef)} gives; {@code null} is allowed
     * @throws RuntimeException the request fails: with the status of a {@link StatusException},
     *     else {@code 500}
     */
    T onReply(Call<? extends Q> call, V reply);
}
