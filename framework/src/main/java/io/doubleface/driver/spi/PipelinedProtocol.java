package io.doubleface.driver.spi;

import io.doubleface.driver.Command;
import io.doubleface.driver.ShardException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;

/**
 * The protocol half of a {@link PipelinedLoopClient}: how a command is written to a shard
 * connection and how that connection's replies are read. The client owns everything else —
 * connecting, the outstanding calls, timeouts, the end-of-iteration flush, reconnect backoff,
 * exactly one callback per call.
 *
 * <p>A protocol fits when many calls may be outstanding on one connection and each reply names
 * the call it answers (a request id echoed back, as the KV protocol's id or MongoDB's
 * {@code responseTo}), or the replies come in call order (RESP: the decoder asks
 * {@link PipelinedConnection#nextReplyId} which call each reply answers). The client numbers calls
 * per connection from 1 upwards.
 *
 * <p>Reading: {@link #initChannel} adds the protocol's decoder to every new connection; the decoder
 * hands each reply to {@link PipelinedConnection#onReply} (or {@link PipelinedConnection#onError},
 * {@link PipelinedConnection#onMalformed}). It need not handle {@code channelInactive} or
 * exceptions: the client's own handler, after the decoder, does.
 *
 * <p>Threading: every method is called on the loop of the connection concerned; one instance may
 * serve the clients of many loops, so keep it stateless (or thread-safe).
 *
 * @param <C> the command type
 */
public interface PipelinedProtocol<C extends Command<?>> {

    /** {@return a short name for log lines and messages, e.g. {@code kv} or {@code mongodb}} */
    String protocolName();

    /** {@return the initial capacity, in bytes, of a connection's buffer of unwritten calls} */
    int initialOutputBytes();

    /**
     * Whether replies come in call order on a connection (RESP), rather than naming their call by an
     * id that may come back in any order (the KV protocol, OP_MSG). In order, the connection keeps no
     * id map: a reply answers the oldest outstanding call ({@link PipelinedConnection#nextReplyId}
     * gives its id), and one to an older id is a late reply to a call that timed out.
     *
     * @return {@code false} by default
     */
    default boolean repliesInOrder() {
        return false;
    }

    /**
     * Whether a call of {@code command} may be sent twice: when a shard is a group of several
     * members ({@link ShardGroups}), an idempotent call that fails {@code UNAVAILABLE} on one member
     * is sent once more to another. Reads are; writes that are not idempotent must not say so.
     *
     * @param command the command
     * @return {@code false} by default
     */
    default boolean idempotent(C command) {
        return false;
    }

    /**
     * Whether any member of a replica group ({@link ShardGroups}) may serve {@code command}, or only
     * the group's first member, its primary — e.g. a write to a Redis master whose replicas refuse
     * writes. A call only the primary may serve goes to it whatever the others' load and is not sent
     * to another member when it fails.
     *
     * @param command the command
     * @return {@code true} by default (every member holds and serves the same data)
     */
    default boolean anyMember(C command) {
        return true;
    }

    /**
     * Checks a command before anything is queued for it.
     *
     * @param command the command to send
     * @return {@code null} if it can be sent, else why not (the call then fails with
     *     {@link ShardException.Kind#SHARD_ERROR} and this reason)
     */
    default String refuse(C command) {
        return null;
    }

    /**
     * Encodes one call into a connection's buffer of unwritten calls.
     *
     * @param id the call's id on its connection; the reply must carry it back
     * @param shard the shard the call goes to
     * @param command the command, accepted by {@link #refuse}
     * @param out where to append the encoded call
     */
    void encode(int id, int shard, C command, ByteBuf out);

    /**
     * Adds the reply decoder to a new connection's pipeline.
     *
     * @param channel the new connection's channel (not yet connected)
     * @param connection where the decoder delivers replies
     */
    void initChannel(Channel channel, PipelinedConnection connection);

    /**
     * Turns what the decoder gave to {@link PipelinedConnection#onReply} into the reply the
     * listener gets. The default delivers it as it is (for a protocol whose decoder already hands
     * over the reply, e.g. a retained slice of the received bytes).
     *
     * @param command the command of the call this reply answers
     * @param shard the shard that answered
     * @param decoded what the decoder gave; owned by this method from here on (release it if it is
     *     reference-counted and not returned)
     * @param alloc an allocator for a reply built anew
     * @return the reply (of the command's reply type)
     * @throws RuntimeException when the reply does not fit the command; the call then fails with
     *     {@link ShardException.Kind#SHARD_ERROR} and the exception's message
     */
    default Object reply(C command, int shard, Object decoded, ByteBufAllocator alloc) {
        return decoded;
    }
}
