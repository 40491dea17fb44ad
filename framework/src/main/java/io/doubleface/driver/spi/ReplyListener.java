package io.doubleface.driver.spi;

import io.doubleface.driver.ShardException;

/** Completion callback of {@link LoopClient#send}; invoked on the client's loop. */
public interface ReplyListener {

    /**
     * A reply arrived.
     *
     * @param tag the tag given to {@link LoopClient#send}
     * @param reply the reply, of the reply type of the command sent; if it is reference-counted
     *     (a {@code ByteBuf}), ownership passes to the listener, which must release it exactly once
     */
    void onReply(int tag, Object reply);

    /**
     * The call failed; no reply will follow for this tag.
     *
     * @param tag the tag given to {@link LoopClient#send}
     * @param cause why; its {@link ShardException#kind()} decides the upstream status
     */
    void onFailure(int tag, ShardException cause);
}
