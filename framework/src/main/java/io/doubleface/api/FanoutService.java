package io.doubleface.api;

/**
 * A mid-tier fanout service, written once and run unchanged under every threading model.
 *
 * <p>A service never touches threads. It declares the steps of a fanout request and the framework
 * runs them wherever the active configuration says:
 *
 * <pre>
 *   upstream request ──decode──▶ Q ──plan──▶ calls on any backends ──▶ replies
 *                                             │ onReply(reply i) ─▶ P_i   (the call's ReplyHandler)
 *                                             ▼
 *                        merge(Q, replies, next) ─▶ R ──encode──▶ upstream response
 *                              │
 *                              └─ or adds calls to next ─▶ another round (multi-stage)
 * </pre>
 *
 * <p><b>Rounds.</b> {@link #plan} adds the first round of calls, each with the
 * {@link ReplyHandler} that processes its reply. When every call of the round has a reply (or has
 * failed, as the {@link FailurePolicy} allows), {@link #merge} runs. It either returns the response,
 * or adds calls to {@code next} and returns {@code null}: the framework then runs that round and
 * calls {@code merge} again with its replies. Results of earlier rounds the service still needs
 * go into the request object {@code Q} during {@code merge} (merge runs alone for its request, so
 * this is safe); reply handlers must not write shared state (see {@link ReplyHandler}).
 *
 * <p><b>Guarantees, under every model and across rounds:</b> each request is answered exactly
 * once; the deadline covers all rounds; a run-time configuration switch never moves a request in
 * flight to another model; under DoubleFace every round runs on the request's loop. For one
 * request the framework guarantees happens-before between plan, every reply handler of a round,
 * merge, and the next round, so per-request state needs no synchronisation.
 *
 * <p><b>Threading:</b> {@code plan} and {@code merge} may be called on any thread (an event loop, a
 * worker, a request thread), and calls for different requests run concurrently. They must not
 * block: under the event-loop models they run on an I/O thread.
 *
 * @param <Q> the decoded upstream request
 * @param <P> one processed shard reply
 * @param <R> the merged upstream response
 */
public interface FanoutService<Q, P, R> {

    /**
     * Adds the first round of calls for {@code request} to {@code plan}. A plan of no calls is
     * merged at once, on the same thread, with no replies: a route that needs no shard (a health
     * check, an answer from a cache) answers from {@link #merge}, which may still plan calls (on a
     * cache miss).
     *
     * @param request the decoded upstream request, as the route's binding returned it
     * @param plan where to add the calls of the first round; valid only during this call
     * @throws RuntimeException the request fails with {@code 500}
     */
    void plan(Q request, FanoutPlan<Q, P> plan);

    /**
     * Builds the response from the replies of the last round, or plans another round.
     *
     * @param request the request given to {@link #plan}, with whatever earlier merges stored in it
     * @param replies the round's replies by call number; valid only during this call
     * @param next where to add the calls of another round; if any are added, return {@code null}
     * @return the response, or {@code null} if calls were added to {@code next}
     * @throws RuntimeException the request fails with {@code 500}
     */
    R merge(Q request, Replies<P> replies, FanoutPlan<Q, P> next);
}
