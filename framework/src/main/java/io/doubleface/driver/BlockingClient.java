package io.doubleface.driver;

import io.doubleface.api.ShardRequest;
import io.netty.buffer.ByteBuf;

/**
 * The blocking face of a driver, for the thread-per-request and Type-1 models. Thread-safe: many
 * threads call it at once; each call uses a connection no other thread uses meanwhile.
 */
public interface BlockingClient extends AutoCloseable {

    /**
     * Calls one shard and blocks until its reply.
     *
     * @param timeoutNanos the longest the call may take (> 0)
     * @return the reply payload (canonical encoding); the caller releases it
     * @throws ShardException on connection failure, timeout or a shard error
     */
    ByteBuf call(int shard, ShardRequest request, long timeoutNanos) throws ShardException;

    /**
     * Calls several shards at once from the calling thread — all requests are written before any
     * reply is awaited, so shards work in parallel without extra threads — and hands each outcome
     * to {@code sink} on the calling thread, in completion order as far as the driver can tell.
     * Every index gets exactly one outcome.
     *
     * @param timeoutNanos the longest the whole call may take (> 0)
     */
    void callAll(int[] shards, ShardRequest[] requests, long timeoutNanos, Sink sink);

    /** Receives the outcomes of {@link #callAll}; on the calling thread. */
    interface Sink {
        /** Reply to call {@code index}; ownership of {@code reply} passes to the sink. */
        void onReply(int index, ByteBuf reply);

        /** Call {@code index} failed. */
        void onFailure(int index, ShardException cause);
    }

    @Override
    void close();
}
