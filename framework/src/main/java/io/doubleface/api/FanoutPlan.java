package io.doubleface.api;

import io.doubleface.driver.Command;

/**
 * Collects the shard calls of one round of a request: in {@link FanoutService#plan} the first
 * round, in {@link FanoutService#merge} (as {@code next}) the following one. Not thread-safe: used
 * only by the thread running {@code plan} or {@code merge}, and only during that call.
 *
 * <pre>{@code
 * // one call to shard 3 of the "cache" backend; its reply (a Set<String>) is processed by FOLLOWERS
 * plan.call(cache, 3, REDIS.smembers("followers:" + user), FOLLOWERS);
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
     * Adds a call whose reply {@code merge} reads by reference, as it came from the driver:
     * {@link Replies#get(CallRef) replies.get(ref)} gives it typed, with no handler and no common
     * reply type (see {@link CallRef}).
     *
     * @param <V> the reply type of the command
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends
     * @param shard 0-based index into the backend's shard list
     * @param command the command to send, not {@code null}
     * @param ref names the reply, not {@code null}; usually a constant
     * @return the call number
     * @throws IllegalArgumentException as {@link #call(Backend, int, Command, ReplyHandler)}
     */
    <V, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command, CallRef<V> ref);

    /**
     * {@link #call(Backend, int, Command, CallRef)} routed by the key the command carries (see
     * {@link #call(Backend, Command, ReplyHandler)}).
     *
     * @param <V> the reply type of the command
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends, over a driver that routes by key
     * @param command the command, carrying at least one key, not {@code null}
     * @param ref names the reply, not {@code null}
     * @return the call number
     */
    default <V, C extends Command<V>> int call(Backend<? super C> backend, C command, CallRef<V> ref) {
        return call(backend, backend.shardFor(command), command, ref);
    }

    /**
     * Adds a call whose reply {@code onReply} turns into the reference's type; {@code merge} reads
     * the result with {@link Replies#get(CallRef) replies.get(ref)}.
     *
     * @param <V> the reply type of the command
     * @param <T> the handler's result, the reference's type
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends
     * @param shard 0-based index into the backend's shard list
     * @param command the command to send, not {@code null}
     * @param ref names the result, not {@code null}
     * @param onReply processes the reply, not {@code null}
     * @return the call number
     * @throws IllegalArgumentException as {@link #call(Backend, int, Command, ReplyHandler)}
     */
    <V, T, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command, CallRef<T> ref,
            CallHandler<? super Q, ? super V, ? extends T> onReply);

    /**
     * {@link #call(Backend, int, Command, CallRef, CallHandler)} routed by the key the command carries.
     *
     * @param <V> the reply type of the command
     * @param <T> the handler's result, the reference's type
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends, over a driver that routes by key
     * @param command the command, carrying at least one key, not {@code null}
     * @param ref names the result, not {@code null}
     * @param onReply processes the reply, not {@code null}
     * @return the call number
     */
    default <V, T, C extends Command<V>> int call(Backend<? super C> backend, C command, CallRef<T> ref,
            CallHandler<? super Q, ? super V, ? extends T> onReply) {
        return call(backend, backend.shardFor(command), command, ref, onReply);
    }

    /**
     * Sends {@code command} to every shard of {@code backend}; {@link Replies#all(CallRef)
     * replies.all(ref)} gives the replies in shard order.
     *
     * @param <V> the reply type of the command
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends; gets {@code backend.shardCount()} calls
     * @param command the command sent to every shard, not {@code null}
     * @param ref names the replies, not {@code null}
     * @return the call number of shard 0's call; shard {@code i}'s call is that plus {@code i}
     */
    default <V, C extends Command<V>> int broadcast(Backend<? super C> backend, C command, CallRef<V> ref) {
        int first = call(backend, 0, command, ref);
        for (int s = 1; s < backend.shardCount(); s++) {
            call(backend, s, command, ref);
        }
        return first;
    }

    /**
     * Sends {@code command} to every shard of {@code backend}, each reply processed by
     * {@code onReply}; {@link Replies#all(CallRef) replies.all(ref)} gives the results in shard order.
     *
     * @param <V> the reply type of the command
     * @param <T> the handler's result, the reference's type
     * @param <C> the command type, one the backend's driver runs
     * @param backend one of the server's backends; gets {@code backend.shardCount()} calls
     * @param command the command sent to every shard, not {@code null}
     * @param ref names the results, not {@code null}
     * @param onReply processes each shard's reply, not {@code null}
     * @return the call number of shard 0's call; shard {@code i}'s call is that plus {@code i}
     */
    default <V, T, C extends Command<V>> int broadcast(Backend<? super C> backend, C command, CallRef<T> ref,
            CallHandler<? super Q, ? super V, ? extends T> onReply) {
        int first = call(backend, 0, command, ref, onReply);
        for (int s = 1; s < backend.shardCount(); s++) {
            call(backend, s, command, ref, onReply);
        }
        return first;
    }

    /**
     * Gives call {@code call} of this round a time limit of its own, shorter than the request's
     * deadline: with no reply by then the call fails with {@link
     * io.doubleface.driver.ShardException.Kind#TIMEOUT} (the request answers {@code 504} under
     * fail-fast, or {@code merge} sees the failure if the call is optional or the policy tolerates
     * it), and a reply that comes later is dropped. A limit at or beyond the deadline changes
     * nothing.
     *
     * <pre>{@code
     * int recs = plan.call(recommender, 0, query, RECS);
     * plan.timeout(recs, Duration.ofMillis(30));   // a page without recommendations beats a slow page
     * plan.optional(recs);
     * }</pre>
     *
     * @param call a call number this round's {@link #call} returned
     * @param timeout the call's limit from the moment the round is sent, positive
     * @throws IndexOutOfBoundsException if there is no such call in this round
     * @throws IllegalArgumentException if {@code timeout} is not positive
     * @throws IllegalStateException if called outside {@code plan} or {@code merge}
     */
    void timeout(int call, java.time.Duration timeout);

    /**
     * {@return what the server knows about the request: route, headers, the time left before its
     * deadline, its trace context, the configuration serving it}
     */
    RequestContext context();

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
