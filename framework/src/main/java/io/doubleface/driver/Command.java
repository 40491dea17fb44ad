package io.doubleface.driver;

/**
 * A command a backend's driver runs on one shard, whose reply is a {@code V}. Each driver defines
 * its own command family in its store's language (e.g. the Redis driver's {@code RedisCommand<V>}
 * for any Redis command, the gRPC driver's unary calls of the user's own methods); a
 * {@link io.doubleface.api.Backend} accepts exactly its driver's family, so a command for another store does not
 * compile.
 *
 * <p>Commands should be immutable: under some threading models a command is sent from another
 * thread than the one that planned it.
 *
 * @param <V> the reply type the driver delivers for this command
 */
public interface Command<V> {}
