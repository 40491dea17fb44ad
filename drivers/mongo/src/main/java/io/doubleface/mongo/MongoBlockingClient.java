package io.doubleface.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.doubleface.driver.Command;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.spi.DriverLoops;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.bson.RawBsonDocument;

/**
 * The blocking MongoDB client: {@code mongodb-driver-sync}, one pooled {@code MongoClient} per
 * shard (made when the client opens; {@link MongoDriver.Options#poolSize} connections at most), shared by
 * every calling thread.
 *
 * <p>{@link #callAll}: the sync driver has no way to write a command and read its reply later, so
 * calls cannot be overlapped from one thread the way the KV client does. Rather than serialise
 * them (K round trips in a row), {@code callAll} runs all but one call each on a fresh virtual
 * thread ({@code mongo-fan-N}), runs the last on the calling thread, and hands the outcomes to the
 * sink on the calling thread in completion order. Virtual threads cost a few hundred bytes and
 * block without holding a carrier (the sync driver's socket I/O and locks are virtual-thread
 * friendly), so this is what a synchronous scatter-gather client can do cheaply.
 *
 * <p>Each call carries its own time limit as the operation's {@code timeoutMS}
 * ({@code MongoCollection.withTimeout}); a shard whose monitor saw it unreachable fails at once
 * with UNAVAILABLE.
 *
 * <p>Threading: thread-safe. {@link #close} from any thread; calls in progress then fail (CLOSED
 * or UNAVAILABLE) as their connections close.
 */
final class MongoBlockingClient implements BlockingClient<Command<?>> {

    private static final ThreadFactory FAN_OUT = DriverLoops.virtualThreads("mongo-fan");

    private final MongoDriver driver;
    private final Shard[] shards;
    private volatile boolean closed;

    /** One shard's sync client. */
    private final class Shard {
        final int id;
        final String address;
        volatile MongoClient client;

        Shard(int id) {
            this.id = id;
            this.address = driver.address(id);
        }

        /** The shard's client, created on first use. */
        MongoClient client() throws ShardException {
            MongoClient c = client;
            if (c != null) {
                return c;
            }
            synchronized (this) {
                if (closed) {
                    throw new ShardException(ShardException.Kind.CLOSED, id, "client closed");
                }
                if (client == null) {
                    client = MongoClients.create(driver.settings(id, null, null, driver.options().poolSize(), true));
                }
                return client;
            }
        }

        /** What the shard's monitor last failed with, if it sees no server at all; else null. */
        Throwable downCause() {
            MongoClient c = client;
            return c == null ? null : MongoErrors.downCause(c.getClusterDescription());
        }

        synchronized void close() {
            if (client != null) {
                client.close();
            }
        }

    }

    MongoBlockingClient(MongoDriver driver) {
        this.driver = driver;
        this.shards = new Shard[driver.shardCount()];
        for (int i = 0; i < shards.length; i++) {
            shards[i] = new Shard(i);
        }
        for (Shard s : shards) {
            try {
                s.client(); // the monitor finds the server before the first call
            } catch (ShardException | RuntimeException e) {
                // retried on first use
            }
        }
    }

    @Override
    public Object call(int shard, Command<?> command, long timeoutNanos) throws ShardException {
        check(shard, command, timeoutNanos);
        Shard s = shards[shard];
        if (closed) {
            throw new ShardException(ShardException.Kind.CLOSED, shard, "client closed");
        }
        Throwable down = s.downCause();
        if (down != null) {
            throw MongoErrors.down(shard, s.address, down);
        }
        MongoCommand<?> mc = (MongoCommand<?>) command;
        try {
            MongoClient client = s.client(); // opens the shard's client on first use
            String db = mc.database() != null ? mc.database() : driver.database(shard);
            return mc.sync(client.getDatabase(db), timeoutNanos);
        } catch (ShardException e) {
            throw e;
        } catch (RuntimeException e) {
            throw MongoErrors.map(e, shard, s.address, s.downCause(), closed);
        }
    }

    /** An outcome of one call of {@link #callAll}. */
    private record Outcome(int index, Object reply, ShardException failure) {}

    @Override
    public void callAll(int[] shardIds, java.util.List<Command<?>> requests, long timeoutNanos, Sink sink) {
        if (shardIds.length != requests.size()) {
            throw new IllegalArgumentException("shards: " + shardIds.length + " entries, requests: " + requests.size()
                    + " (expected: the same)");
        }
        for (int i = 0; i < shardIds.length; i++) {
            check(shardIds[i], requests.get(i), timeoutNanos);
        }
        int n = shardIds.length;
        if (n == 0) {
            return;
        }
        BlockingQueue<Outcome> done = new ArrayBlockingQueue<>(n);
        for (int i = 0; i < n - 1; i++) {
            int index = i;
            Runnable task = () -> done.add(callQuietly(index, shardIds[index], requests.get(index), timeoutNanos));
            try {
                FAN_OUT.newThread(task).start();
            } catch (RuntimeException | OutOfMemoryError e) {
                task.run(); // cannot fork: run it here
            }
        }
        done.add(callQuietly(n - 1, shardIds[n - 1], requests.get(n - 1), timeoutNanos));
        boolean interrupted = false;
        for (int received = 0; received < n; received++) {
            Outcome o;
            try {
                o = done.take(); // every call is bounded by its timeoutMS, so this is too
            } catch (InterruptedException e) {
                // keep the contract (one outcome per index): collect the rest, then restore the flag
                interrupted = true;
                received--;
                continue;
            }
            if (o.failure == null) {
                sink.onReply(o.index, o.reply);
            } else {
                sink.onFailure(o.index, o.failure);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private Outcome callQuietly(int index, int shard, Command<?> request, long timeoutNanos) {
        try {
            return new Outcome(index, call(shard, request, timeoutNanos), null);
        } catch (ShardException e) {
            return new Outcome(index, null, e);
        } catch (RuntimeException e) {
            return new Outcome(index, null, new ShardException(ShardException.Kind.UNAVAILABLE, shard, e.toString(), e));
        }
    }

    private void check(int shard, Command<?> request, long timeoutNanos) {
        Objects.checkIndex(shard, shards.length);
        Objects.requireNonNull(request, "request");
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("timeoutNanos: " + timeoutNanos + " (expected: > 0)");
        }
    }

    /** A {@code ping} on every shard's server: selects it and leaves an open connection in the client's pool. */
    @Override
    public void connect() throws ShardException {
        for (Shard s : shards) {
            try {
                s.client().getDatabase("admin").runCommand(new org.bson.Document(MongoLoopClient.PING, 1));
            } catch (RuntimeException e) {
                throw MongoErrors.map(e, s.id, s.address, null, closed);
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Shard s : shards) {
            s.close();
        }
        driver.clients.forget(this);
    }

    @Override
    public String toString() {
        return "MongoBlockingClient[" + driver.describe() + "]";
    }
}
