/**
 * The Redis driver: {@link io.doubleface.redis.RedisDriver} (Lettuce, per-loop clients on the
 * caller's event loops, a shared-connection mode and a blocking face),
 * {@link io.doubleface.redis.RedisDriverProvider} ({@code redis://}, {@code redis-cluster://},
 * {@code load-data}), the dataset layout {@link io.doubleface.redis.RedisLayout} and the
 * {@code redis-server} launcher {@link io.doubleface.redis.RedisServers}. See {@code docs/redis.md}.
 */
package io.doubleface.redis;
