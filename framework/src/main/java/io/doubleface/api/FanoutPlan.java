package io.doubleface.api;

import io.doubleface.driver.Command;

/**
 * Collects the shard calls of one round of a request: in {@link FanoutService#plan} the first
 * round, in {@link FanoutService#merge} (as {@code next}) the following one. Not thread-safe: used
 * only by the thread running {@code plan} or {@code merge}, and only during that call.
 *
 * <pre>{@code
 * // one call to shard 3 of the "cache" backend; its reply (a Set<String>) is processed by FOLLOWERS
 * plan.call(cache, 3, RedisCommands.smembers("followers:" + user), FOLLOWERS);
 * }</pre>
 *
 * @param <Q> the request
 * @param <P> the processed reply
 */
public interface FanoutPlan<Q, P> {

    /** Most calls one round may plan: {@value}. */
    int MAX_CALLS = 1024;

    /**
     * Adds a call of {@code command} to shard {@code shard} of {@code backend}; its reply is
     * processed by {@code onReply} and lands at the returned call number in {@link Replies}.
     *
     * @param <V> the reply type of the command
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends (from {@code FanoutServer.Builder#backend})
     * @param shard 0-based index into the backend's shard list, {@code 0 .. backend.shardCount()-1}
     * @param command the command to send, not {@code null}; it should be immutable (it may be sent
     *     from another thread), and may then be shared by several calls
     * @param onReply processes the call's reply, not {@code null}
     * @return the call number (0, 1, 2, … in the order of this round's calls)
     * @throws IllegalArgumentException if the backend is not one of this server's, the shard is out
     *     of range, or the round already has {@value #MAX_CALLS} calls
     */
    <V, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command,
            ReplyHandler<? super Q, ? super V, ? extends P> onReply);

    /**
     * Adds a call of {@code command} routed by the key it carries: the backend's store decides which
     * shard holds that key, as a Redis Cluster does with its hash slots (the master owning the slot
     * of the command's first key, followed through {@code MOVED}/{@code ASK} redirects and
     * fail-overs; a multi-key command whose keys span several nodes is split and its replies put
     * back together in key order). The service names the key, never a shard:
     *
     * <pre>{@code
     * plan.call(cluster, REDIS.hgetall("user:" + id), USER);      // wherever Redis put user:<id>
     * plan.call(cluster, REDIS.mget(keys), VALUES);                // one call, split per node if it must be
     * }</pre>
     *
     * @param <V> the reply type of the command
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends, over a driver that routes by key
     * @param command the command, carrying at least one key, not {@code null}
     * @param onReply processes the call's reply, not {@code null}
     * @return the call number (0, 1, 2, … in the order of this round's calls)
     * @throws IllegalArgumentException if the backend is not one of this server's, its driver
     *     addresses shards by index only, the command carries no key, or the round is full
     */
    default <V, C extends Command<V>> int call(Backend<? super C> backend, C command,
            ReplyHandler<? super Q, ? super V, ? extends P> onReply) {
        return call(backend, backend.shardFor(command), command, onReply);
    }

    /**
     * Adds the same command to every shard of {@code backend} (a broadcast), in shard order.
     *
     * @param <V> the reply type of the command
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends; gets {@code backend.shardCount()} calls
     * @param command the command sent to every shard, not {@code null}
     * @param onReply processes each shard's reply, not {@code null}
     * @return the call number of shard 0's call; shard {@code i}'s call is that plus {@code i}
     */
    default <V, C extends Command<V>> int broadcast(Backend<? super C> backend, C command,
            ReplyHandler<? super Q, ? super V, ? extends P> onReply) {
        int first = call(backend, 0, command, onReply);
        for (int s = 1; s < backend.shardCount(); s++) {
            call(backend, s, command, onReply);
        }
        return first;
    }

    /**
     * Makes call {@code call} of this round optional: its failure (or lateness, at the deadline) is
     * reported by {@link Replies} instead of failing the request, whatever the failure policy.
     *
     * @param call a call number this round's {@link #call} returned, {@code 0 .. calls()-1}
     * @throws IndexOutOfBoundsException if there is no such call in this round
     * @throws IllegalStateException if called outside {@code plan} or {@code merge}
     */
    void optional(int call);

    /**
     * Sets the failure policy of this request from this round on (default {@link FailurePolicy#failFast()}).
     *
     * @param policy the policy, not {@code null}; it stays for later rounds until set again
     */
    void failurePolicy(FailurePolicy policy);

    /** {@return the number of calls added to this round so far} */
    int calls();
}
