package io.doubleface.driver;

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
     * loop iteration (one flush per connection per iteration), or as the loop's {@link FlushPolicy}
     * says for drivers that honour it. The reply delivered to the listener
     * is of the command's reply type ({@code V} of {@code Command<V>}).
     *
     * @param shard the shard, {@code 0 .. shardCount()-1} of the driver
     * @param command the command to run
     * @param listener gets exactly one callback for this call, on {@link #loop()}
     * @param tag passed back to the listener unchanged, so one listener object can serve many calls
     */
    void send(int shard, C command, ReplyListener listener, int tag);

    /** Fails outstanding calls with {@link ShardException.Kind#CLOSED} and closes the connections. */
    @Override
    void close();
}
