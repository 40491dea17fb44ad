package io.doubleface.mongo;

import io.doubleface.driver.Command;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;

/**
 * One MongoDB operation for a {@code mongodb://} backend, whose reply is a {@code V}: a find,
 * aggregate, insert, update, delete or any database command, on any database and collection of the
 * shard. Build it with {@link Mongo}. Under the loop models it runs on the shard's reactive-streams
 * client of the loop (the DoubleFace per-loop affinity), under the thread models on the sync
 * driver; the reply is the same.
 *
 * <p>Immutable and reusable from any thread. A server-side error (a bad filter, a duplicate key)
 * fails the call with {@link io.doubleface.driver.ShardException.Kind#SHARD_ERROR} and MongoDB's
 * message.
 *
 * @param <V> the reply type
 */
public final class MongoCommand<V> implements Command<V> {

    /** How the operation runs on one database (reactive and sync faces), and its result's shape. */
    interface Op<V> {
        /** The publisher of the operation (items collected in order). */
        Publisher<?> reactive(com.mongodb.reactivestreams.client.MongoDatabase db);

        /** The reply from the collected items of {@link #reactive}. */
        V reply(List<Object> items);

        /** The operation on the sync driver, bounded by {@code timeoutNanos}. */
        V sync(com.mongodb.client.MongoDatabase db);

        String describe();
    }

    private final String database;
    private final Op<V> op;

    MongoCommand(String database, Op<V> op) {
        this.database = database;
        this.op = Objects.requireNonNull(op, "op");
    }

    /**
     * The same operation on {@code database} instead of the database of the shard's URI
     * ({@code mongodb://host:port/DB}; {@code ycsb} when the URI names none).
     *
     * @param database the database's name, non-empty
     * @return a new command; this one is unchanged
     * @throws IllegalArgumentException if {@code database} is {@code null} or empty
     */
    public MongoCommand<V> inDatabase(String database) {
        if (database == null || database.isEmpty()) {
            throw new IllegalArgumentException("database: '" + database + "' (expected: a name)");
        }
        return new MongoCommand<>(database, op);
    }

    /** The database, or {@code null} for the shard URI's. */
    String database() {
        return database;
    }

    Op<V> op() {
        return op;
    }

    /** The sync face with a time limit. */
    V sync(com.mongodb.client.MongoDatabase db, long timeoutNanos) {
        return op.sync(db.withTimeout(timeoutNanos, TimeUnit.NANOSECONDS));
    }

    @Override
    public String toString() {
        return (database == null ? "" : database + ".") + op.describe();
    }
}
