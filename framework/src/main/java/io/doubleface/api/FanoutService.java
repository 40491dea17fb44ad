package io.doubleface.api;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * A mid-tier fanout service, written once and run unchanged under every threading model.
 *
 * <p>A service never touches threads. It declares the three steps of a fanout request and the
 * framework runs them wherever the active configuration says:
 *
 * <pre>
 *   upstream request ──decode──▶ Q ──plan──▶ K shard calls ──▶ K replies
 *                                            │ onReply(reply i) ─▶ P_i  (one per reply)
 *                                            ▼
 *                                   merge(P_0 … P_K-1) ─▶ R ──encode──▶ upstream response
 * </pre>
 *
 * <p>Threading: {@link #plan}, {@link #onReply} and {@link #merge} may be called on any thread
 * (an event loop, a worker, a request thread), and calls for <em>different</em> requests run
 * concurrently. For one request the framework guarantees happens-before between plan, every
 * onReply and merge, so per-request state needs no synchronisation. Implementations must not
 * block in {@code onReply} or {@code merge}: under the event-loop models they run on an I/O
 * thread.
 *
 * @param <Q> the decoded upstream request
 * @param <P> one processed shard reply
 * @param <R> the merged upstream response
 */
public interface FanoutService<Q, P, R> {

    /** Adds the shard calls for {@code request} to {@code plan}; at least one call. */
    void plan(Q request, FanoutPlan plan);

    /**
     * Processes the reply to call number {@code call} (in the order the calls were planned).
     *
     * @param reply the reply payload in the canonical record encoding (see
     *     {@link io.doubleface.data.Records}); owned by the framework and released right after
     *     this method returns, so the result must not keep a reference to it
     * @return the processed reply handed to {@link #merge}
     */
    P onReply(Q request, int call, ByteBuf reply);

    /**
     * Builds the response from all processed replies, indexed by call number.
     *
     * @param processed one entry per planned call, in plan order; never {@code null} entries
     */
    R merge(Q request, List<P> processed);
}
