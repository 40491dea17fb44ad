package io.doubleface.redis;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;

/**
 * The blocking Redis client of the thread-per-request and Type-1 models: Lettuce connections on
 * Lettuce's own event loops (the driver's default resources), pooled per shard and lent to one
 * thread at a time.
 *
 * <ul>
 *   <li>{@link #call}: borrows a connection, sets its timeout to the call's and runs the command
 *       through Lettuce's synchronous API;
 *   <li>{@link #callAll}: borrows one connection per distinct shard, issues every command (async
 *       API, each written at once) before awaiting any, then hands the outcomes to the sink on
 *       the calling thread in completion order.
 * </ul>
 *
 * <p>A connection whose shard went away stays in the pool: Lettuce reconnects it by itself
 * (commands meanwhile are rejected: {@code UNAVAILABLE}). A command that timed out is cancelled
 * and its late reply dropped by Lettuce, so the connection stays usable.
 *
 * <p>Threading: thread-safe. {@link #close} closes every connection, borrowed ones included, so
 * blocked threads return with {@code CLOSED}.
 */
final class RedisBlockingClient implements BlockingClient<Command<?>> {

    private final RedisDriver driver;
    private final RedisClient client;
    private final ConcurrentLinkedDeque<StatefulRedisConnection<byte[], byte[]>>[] idle;
    private final Set<StatefulRedisConnection<byte[], byte[]>> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    @SuppressWarnings("unchecked")
    RedisBlockingClient(RedisDriver driver) {
        this.driver = driver;
        this.client = RedisClient.create(driver.resources());
        this.client.setOptions(driver.clientOptions(true));
        this.idle = (ConcurrentLinkedDeque<StatefulRedisConnection<byte[], byte[]>>[]) new ConcurrentLinkedDeque<?>[driver
                .shardCount()];
        for (int i = 0; i < idle.length; i++) {
            idle[i] = new ConcurrentLinkedDeque<>();
        }
    }

    private StatefulRedisConnection<byte[], byte[]> borrow(int shard) throws ShardException {
        if (closed) {
            throw new ShardException(Kind.CLOSED, shard, "client closed");
        }
        StatefulRedisConnection<byte[], byte[]> c = idle[shard].pollFirst();
        if (c != null) {
            return c;
        }
        try {
            c = client.connect(ByteArrayCodec.INSTANCE, driver.uri(shard));
        } catch (RuntimeException e) {
            throw RedisErrors.map(e, shard, closed);
        }
        open.add(c);
        if (closed) {
            open.remove(c);
            c.closeAsync();
            throw new ShardException(Kind.CLOSED, shard, "client closed");
        }
        return c;
    }

    private void giveBack(int shard, StatefulRedisConnection<byte[], byte[]> c) {
        if (closed || !c.isOpen()) {
            open.remove(c);
            c.closeAsync();
            return;
        }
        idle[shard].offerFirst(c);
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Object call(int shard, Command<?> request, long timeoutNanos) throws ShardException {
        if (shard < 0 || shard >= idle.length) {
            throw new IndexOutOfBoundsException("shard " + shard + " (expected: 0.." + (idle.length - 1) + ")");
        }
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("timeoutNanos: " + timeoutNanos + " (expected: > 0)");
        }
        StatefulRedisConnection<byte[], byte[]> c = borrow(shard);
        try {
            c.setTimeout(Duration.ofNanos(timeoutNanos));
            RedisCommands<byte[], byte[]> sync = c.sync();
            RedisCommand<?> rc = RedisLoopClient.redisCommand(request);
            return ((RedisCommands) sync).dispatch(rc.type(), rc.newOutput(), rc.newArgs());
        } catch (RuntimeException e) {
            throw RedisErrors.map(e, shard, closed);
        } finally {
            giveBack(shard, c);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public void callAll(int[] shards, java.util.List<Command<?>> requests, long timeoutNanos, Sink sink) {
        if (shards.length != requests.size()) {
            throw new IllegalArgumentException("shards.length " + shards.length + " != requests.size() " + requests.size());
        }
        int n = shards.length;
        long deadline = System.nanoTime() + timeoutNanos;
        StatefulRedisConnection<byte[], byte[]>[] borrowed = new StatefulRedisConnection[idle.length];
        RedisFuture<?>[] futures = new RedisFuture<?>[n];
        boolean[] delivered = new boolean[n];
        ArrayBlockingQueue<Integer> completed = new ArrayBlockingQueue<>(Math.max(1, n));
        try {
            for (int i = 0; i < n; i++) {
                int shard = shards[i];
                try {
                    if (shard < 0 || shard >= idle.length) {
                        throw new ShardException(Kind.SHARD_ERROR, shard, "no such shard (expected: 0.."
                                + (idle.length - 1) + ")");
                    }
                    if (borrowed[shard] == null) {
                        borrowed[shard] = borrow(shard);
                    }
                    RedisAsyncCommands<byte[], byte[]> cmds = borrowed[shard].async();
                    RedisFuture<?> f = RedisLoopClient.issue(cmds, requests.get(i));
                    futures[i] = f;
                    int index = i;
                    f.whenComplete((v, e) -> completed.offer(index));
                } catch (ShardException e) {
                    delivered[i] = true;
                    sink.onFailure(i, e);
                }
            }
            int pending = 0;
            for (int i = 0; i < n; i++) {
                if (!delivered[i]) {
                    pending++;
                }
            }
            while (pending > 0) {
                long left = deadline - System.nanoTime();
                Integer idx = left <= 0 ? completed.poll() : completed.poll(left, TimeUnit.NANOSECONDS);
                if (idx == null) {
                    break;
                }
                int i = idx;
                if (delivered[i]) {
                    continue;
                }
                delivered[i] = true;
                pending--;
                deliver(i, shards[i], requests.get(i), futures[i], sink);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            for (int i = 0; i < n; i++) {
                if (!delivered[i]) {
                    delivered[i] = true;
                    if (futures[i] != null) {
                        futures[i].cancel(true);
                    }
                    sink.onFailure(i, new ShardException(closed ? Kind.CLOSED : Kind.TIMEOUT, shards[i], "no reply within "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
                }
            }
            for (int s = 0; s < borrowed.length; s++) {
                if (borrowed[s] != null) {
                    giveBack(s, borrowed[s]);
                }
            }
        }
    }

    private void deliver(int i, int shard, Command<?> r, RedisFuture<?> f, Sink sink) {
        Object value;
        try {
            value = f.get();
        } catch (Exception e) {
            sink.onFailure(i, RedisErrors.map(e, shard, closed));
            return;
        }
        sink.onReply(i, value);
    }

    /** Connects to every shard that has no idle connection and pools the new connections for the next calls. */
    @Override
    public void connect() throws ShardException {
        for (int shard = 0; shard < idle.length; shard++) {
            if (idle[shard].isEmpty()) {
                giveBack(shard, borrow(shard));
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // the client's shutdown closes every connection it opened: closing them here too made Lettuce
        // log "Connection is already closed" once per connection
        open.clear();
        for (ConcurrentLinkedDeque<StatefulRedisConnection<byte[], byte[]>> d : idle) {
            d.clear();
        }
        client.shutdown(0, 2, TimeUnit.SECONDS);
        driver.clients.forget(this);
    }

    @Override
    public String toString() {
        return "RedisBlockingClient[" + driver.describe() + "]";
    }
}
