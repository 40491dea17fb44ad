package io.doubleface.api;

/**
 * Processes the reply of one shard call: the per-reply work (parse, filter, score) that the
 * DoubleFace scheduler orders, the Type-2b worker pool runs, and every other model runs where it
 * says. Given with each call ({@link FanoutPlan#call}); a handler that captures nothing can be one
 * constant shared by every request, so planning a call allocates nothing for it.
 *
 * <p>Threading: runs on whichever thread the active threading model prescribes; handlers of
 * different calls of one request may run concurrently on different threads, so a handler must only
 * return its result (the framework keeps it in the call's own slot), never write shared
 * per-request state. It must not block: under the event-loop models it runs on an I/O thread.
 *
 * <p>Without a copy: a driver that hands over its received bytes as a {@code ByteBuf} (e.g.
 * {@code Redis.getBuffer} on a native Redis connection, the KV driver) lets the handler return
 * the buffer itself, {@code (q, call, buf) -> buf}, and merge put it into the response retained.
 *
 * @param <Q> the request
 * @param <V> the reply type of the call's command
 * @param <P> the processed reply handed to {@link FanoutService#merge}
 */
@FunctionalInterface
public interface ReplyHandler<Q, V, P> {

    /**
     * Processes one reply.
     *
     * @param request the request the call was planned for
     * @param call the call number in its round, as returned by {@link FanoutPlan#call}
     * @param reply the driver's reply; a reference-counted reply (e.g. a {@code ByteBuf}) is
     *     released by the framework right after this method returns, unless this method returns
     *     it: so a result made from it copies what it keeps, or is the reply itself
     * @return the processed reply; {@code null} is allowed. A reference-counted result (the reply
     *     itself, or a retained slice of it) belongs to the framework, which releases it once the
     *     round is over: when {@link FanoutService#merge} returns, or when the request fails or
     *     times out without merging it (see {@link Replies})
     * @throws RuntimeException the request fails with {@code 500}
     */
    P onReply(Q request, int call, V reply);
}
