package io.doubleface.api;

/**
 * Collects the shard calls of one request during {@link FanoutService#plan}. Not thread-safe:
 * used only by the thread running {@code plan}.
 */
public interface FanoutPlan {

    /**
     * Adds a call to {@code shard} (0-based index into the server's shard list).
     *
     * @return the call number, which {@link FanoutService#onReply} receives with its reply
     * @throws IllegalArgumentException if {@code shard} is out of range or the fanout limit is
     *     exceeded
     */
    int call(int shard, ShardRequest request);

    /** The number of shards the server fans out over. */
    int shardCount();
}
