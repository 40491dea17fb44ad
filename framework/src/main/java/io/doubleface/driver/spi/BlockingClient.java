package io.doubleface.driver.spi;

import io.doubleface.driver.Command;
import io.doubleface.driver.ShardException;


/**
 * The blocking face of a driver, for the thread-per-request and Type-1 models. Thread-safe: many
 * threads call it at once; each call uses a connection no other thread uses meanwhile.
 *
 * @param <C> the driver's command type
 */
public interface BlockingClient<C extends Command<?>> extends AutoCloseable {

    /**
     * Calls one shard and blocks until its reply.
     *
     * @param shard the shard, {@code 0 .. shardCount()-1} of the driver
     * @param command the command to run
     * @param timeoutNanos the longest the call may take (> 0)
     * @return the reply, of the command's reply type; the caller releases it if it is
     *     reference-counted
     * @throws ShardException on connection failure, timeout or a shard error
     */
    Object call(int shard, C command, long timeoutNanos) throws ShardException;

    /**
     * Calls several shards at once from the calling thread — all requests are written before any
     * reply is awaited, so shards work in parallel without extra threads — and hands each outcome
     * to {@code sink} on the calling thread, in completion order as far as the driver can tell.
     * Every index gets exactly one outcome.
     *
     * @param shards the shard of each call; {@code shards[i]} gets {@code commands.get(i)}
     * @param commands the command of each call, as many as {@code shards}
     * @param timeoutNanos the longest the whole call may take (> 0)
     * @param sink receives the outcome of each call, by index into {@code shards}
     */
    void callAll(int[] shards, java.util.List<C> commands, long timeoutNanos, Sink sink);

    /**
     * Connects to every shard now instead of on first use (warm start), and keeps the connections
     * for the next calls: the server calls it for every blocking client of a configuration when the
     * configuration is activated or prepared, on a thread of its own, and its readiness waits for
     * it to return. Never called on the request path. "Connected" means what it means for
     * {@link LoopClient#connect()}.
     *
     * <p>Blocks the calling thread for at most about the driver's connect timeout per shard; may
     * be called again (a failed attempt is retried that way) and from several threads. The
     * default does nothing: a driver that does not override it is taken as connected at once and
     * connects on first use, as before.
     *
     * @throws ShardException naming the first shard that cannot be reached, its address and why
     */
    default void connect() throws ShardException {
    }

    /** Receives the outcomes of {@link #callAll}; on the calling thread. */
    interface Sink {
        /**
         * Reply to call {@code index}; ownership of {@code reply} (if reference-counted) passes to the sink.
         *
         * @param index the call's index into the {@code shards} given to {@link #callAll}
         * @param reply the reply, of the reply type of the call's command
         */
        void onReply(int index, Object reply);

        /**
         * Call {@code index} failed.
         *
         * @param index the call's index into the {@code shards} given to {@link #callAll}
         * @param cause why; its {@link ShardException#kind()} decides the upstream status
         */
        void onFailure(int index, ShardException cause);
    }

    @Override
    void close();
}
