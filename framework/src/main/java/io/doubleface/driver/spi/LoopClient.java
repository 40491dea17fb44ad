package io.doubleface.driver.spi;

import io.doubleface.driver.Command;
import io.doubleface.driver.FlushMode;
import io.doubleface.driver.ShardException;
import io.netty.channel.EventLoop;

/**
 * The asynchronous face of a driver, confined to one event loop.
 *
 * <p>Threading: every method must be called on {@link #loop()}, and every listener callback is
 * invoked on {@link #loop()}. No synchronisation inside.
 *
 * <p>Every {@link #send} ends in exactly one callback: {@link ReplyListener#onReply} or
 * {@link ReplyListener#onFailure} — including when the connection is lost, when the command
 * times out, and when the client is closed with calls outstanding. Callbacks never run inside
 * {@code send} itself (a failure detected while sending is delivered by a later loop task), so a
 * caller may send several calls in a row without re-entrancy.
 *
 * @param <C> the driver's command type
 */
public interface LoopClient<C extends Command<?>> extends AutoCloseable {

    /** {@return the loop this client's connections are registered on} */
    EventLoop loop();

    /**
     * Sends {@code command} to {@code shard}. Writes may be buffered until the end of the current
     * loop iteration (one flush per connection per iteration), or as the loop's {@link FlushMode}
     * says for drivers that honour it. The reply delivered to the listener
     * is of the command's reply type ({@code V} of {@code Command<V>}).
     *
     * @param shard the shard, {@code 0 .. shardCount()-1} of the driver
     * @param command the command to run
     * @param listener gets exactly one callback for this call, on {@link #loop()}
     * @param tag passed back to the listener unchanged, so one listener object can serve many calls
     */
    void send(int shard, C command, ReplyListener listener, int tag);

    /**
     * Connects to every shard now instead of on first use (warm start): the server calls it on
     * every client of a configuration when the configuration is activated or prepared, before it
     * takes traffic, and its readiness ({@code FanoutServer.awaitReady}, {@code /ready}) waits for
     * the futures. Never called on the request path.
     *
     * <p>What "connected" means is the driver's: a live connection to every shard, to every member
     * of a shard that is a group ({@link ShardGroups}), to every master of a store that places keys
     * itself; a driver whose connections are made by a library (a pool, a channel) makes that
     * library reach its servers. The connections are the ones later calls use.
     *
     * <p>Contract: called on {@link #loop()}; must not block; calling it again joins the connection
     * attempts under way or starts new ones for shards not connected (a failed attempt is retried
     * by calling again); the future may complete on any thread; {@link #close()} completes a
     * pending future exceptionally. A failure names the shard, its address and why, as a
     * {@link ShardException} ({@code UNAVAILABLE}, or {@code CLOSED}).
     *
     * <p>The default returns a completed future: a driver that does not override it is taken as
     * connected at once and connects on first use, as before. Third-party drivers should override
     * it, or their first calls pay for the connection.
     *
     * @return completed normally when every shard has a live connection; exceptionally with a
     *     {@link ShardException} naming the first shard that cannot be reached
     */
    default java.util.concurrent.CompletableFuture<Void> connect() {
        return java.util.concurrent.CompletableFuture.completedFuture(null);
    }

    /** Fails outstanding calls with {@link ShardException.Kind#CLOSED} and closes the connections. */
    @Override
    void close();
}
