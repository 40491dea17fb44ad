package io.doubleface.services.ycsb;

/**
 * A decoded {@code GET /query}: read {@code fanout} shards starting at {@code key}.
 *
 * @param fanout shards to call (K)
 * @param size reply size class
 * @param key the first record key; call i reads key {@code (key + i) % records} on shard
 *     {@code (key + i) % shards}
 */
public record YcsbQuery(int fanout, Size size, long key) {}
