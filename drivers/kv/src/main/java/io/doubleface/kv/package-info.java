/**
 * The built-in KV shards: a leaf server hosting many shards in one process, and the driver that
 * talks to them.
 *
 * <ul>
 *   <li>{@link io.doubleface.kv.KvProtocol}: the wire format (length-prefixed, pipelined frames
 *       whose OK payload is the canonical reply encoding of {@link io.doubleface.kv.Records});
 *   <li>{@link io.doubleface.kv.KvLeafServer}: one port per shard on one loop group, every shard
 *       serving the precomputed dataset;
 *   <li>{@link io.doubleface.kv.KvDriver}: the {@link io.doubleface.driver.spi.ShardDriver} — a
 *       loop-confined pipelining client per event loop (flushes consolidated at the end of each loop
 *       iteration) and a blocking client over plain sockets for the thread-based models.
 * </ul>
 */
package io.doubleface.kv;
