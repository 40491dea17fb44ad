package io.doubleface.driver;

import io.netty.buffer.ByteBuf;

/** Completion callback of {@link LoopClient#send}; invoked on the client's loop. */
public interface ReplyListener {

    /**
     * A reply arrived.
     *
     * @param reply the payload in the canonical encoding of {@link io.doubleface.data.Records};
     *     ownership passes to the listener, which must release it exactly once
     */
    void onReply(int tag, ByteBuf reply);

    /** The call failed; no reply will follow for this tag. */
    void onFailure(int tag, ShardException cause);
}
