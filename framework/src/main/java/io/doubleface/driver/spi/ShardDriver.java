package io.doubleface.driver.spi;

import io.doubleface.driver.Command;
import io.netty.channel.EventLoop;

/**
 * A datastore driver: the shard list of a server and two ways to talk to it.
 *
 * <ul>
 *   <li>the <b>asynchronous face</b>, {@link #openOn(EventLoop)}: a client whose connections are
 *       registered on the given event loop, which sends from that loop and delivers every
 *       completion on that loop. The DoubleFace model opens one per shared loop (per-loop
 *       affinity), Type-2a/2b one per backend loop;
 *   <li>the <b>blocking face</b>, {@link #openBlocking()}: a client whose calls block the calling
 *       thread, for the thread-per-request and Type-1 models.
 * </ul>
 *
 * <p>Thread-safety: the factory methods are thread-safe; what they return documents its own rules.
 * The driver owns every client it opened and closes them in {@link #close()}; it never shuts down
 * an event loop it was given (those belong to the server).
 *
 * @param <C> the commands this driver runs (its store's own language); the reply type of each is
 *     the command's type argument
 */
public interface ShardDriver<C extends Command<?>> extends AutoCloseable {

    /** {@return the number of shards; shard ids are {@code 0 .. shardCount()-1}. Fixed for the driver's life} */
    int shardCount();

    /**
     * The shard that serves {@code command} when a service routes the call by the key the command
     * carries ({@link io.doubleface.api.FanoutPlan#call(io.doubleface.api.Backend, Command,
     * io.doubleface.api.ReplyHandler)}), for a driver whose store places keys itself (a Redis
     * Cluster: the master owning the key's hash slot). The index is read when the call is planned,
     * for the request's per-shard accounting; a driver that routes by key sends the command where
     * its store says the key lives <em>when it is sent</em>, whatever the index.
     *
     * <p>Thread-safe; called on the thread planning the request, so it must not block.
     *
     * @param command the command, not {@code null}
     * @return the shard, {@code 0 .. shardCount()-1}
     * @throws UnsupportedOperationException if this driver addresses shards by index only (the default)
     * @throws IllegalArgumentException if the command carries no key to route by
     */
    default int shardFor(C command) {
        throw new UnsupportedOperationException(describe() + " addresses its shards by index only: plan the call "
                + "with call(backend, shard, command, onReply), or use a store that places keys itself "
                + "(redis-cluster://)");
    }

    /**
     * The driver's view of where its shards are now, for {@code /admin/stats} (under the backend's
     * {@code topology}) and {@code /metrics} (every top-level number, as the gauge
     * {@code doubleface.backend.topology} tagged with the backend and the entry's name): e.g. a
     * Redis Cluster's slot map version, its masters with their slot ranges and replicas, refreshes
     * and redirects counted. A tree of maps, lists, strings and numbers, made anew at each call.
     *
     * <p>Thread-safe; called from the admin plane, never on a request path.
     *
     * @return the topology, or an empty map (the default) for a driver whose shards are a fixed list
     */
    default java.util.Map<String, Object> topology() {
        return java.util.Map.of();
    }

    /** {@return a short description for logs and {@code /admin/stats}, e.g. {@code kv://127.0.0.1:7101-7120}} */
    String describe();

    /**
     * Opens an asynchronous client bound to {@code loop}. Connections are made when the server asks
     * for them before traffic ({@link LoopClient#connect()}, at the activation or preparation of a
     * configuration), else on first use of a shard, and reconnected after a failure.
     *
     * @param loop the event loop the client's connections are registered on and its callbacks run on;
     *     it stays the server's (the driver never shuts it down)
     * @return a new client, confined to {@code loop}; closed by {@link #close()} if not before
     */
    LoopClient<C> openOn(EventLoop loop);

    /**
     * {@return a new blocking client, safe for concurrent use by many threads; closed by {@link #close()} if
     * not before}
     */
    BlockingClient<C> openBlocking();

    /** Closes every client this driver opened. Idempotent. */
    @Override
    void close();
}
