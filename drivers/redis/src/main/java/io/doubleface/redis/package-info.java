/**
 * The Redis driver: native commands built with {@link io.doubleface.redis.Redis}
 * ({@link io.doubleface.redis.RedisCommand}), sent by {@link io.doubleface.redis.RedisDriver}
 * (Lettuce, per-loop clients on the caller's event loops, a shared-connection mode and a blocking
 * face; {@code redis://} and {@code redis-cluster://} through
 * {@link io.doubleface.redis.RedisDriverProvider}), and the {@code redis-server} launcher
 * {@link io.doubleface.redis.RedisServers}. See {@code docs/redis.md}.
 */
package io.doubleface.redis;
