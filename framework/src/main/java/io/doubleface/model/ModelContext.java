package io.doubleface.model;

import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ShardDriver;
import io.doubleface.loop.LoopGroup;
import java.util.ArrayList;
import java.util.List;

/**
 * What every threading model of one server shares: the server's I/O loops, the driver, one
 * per-I/O-loop asynchronous client (the DoubleFace per-loop connections, shared by every
 * DoubleFace configuration), one blocking client (shared by the thread and Type-1 models), and
 * the server-wide defaults.
 *
 * <p>Threading: immutable after construction except the lazily opened blocking client, which is
 * created under a lock on first use. Owns the clients it opened; the server owns the loops and
 * the driver.
 */
public final class ModelContext implements AutoCloseable {

    /** Default bound of a pool's request queue before requests are refused with 503: {@value}. */
    public static final int DEFAULT_QUEUE_LIMIT = 16_384;

    private final LoopGroup io;
    private final ShardDriver driver;
    private final String defaultPolicy;
    private final int queueLimit;
    private final LoopClient[] ioClients;
    private final List<AutoCloseable> owned = new ArrayList<>();
    private BlockingClient blocking;

    /**
     * @param io the server's I/O loops (upstream; DoubleFace downstream too)
     * @param defaultPolicy the DoubleFace scheduling policy of configurations that name none
     * @param queueLimit bound of each worker pool's queue
     */
    public ModelContext(LoopGroup io, ShardDriver driver, String defaultPolicy, int queueLimit) {
        this.io = io;
        this.driver = driver;
        this.defaultPolicy = defaultPolicy;
        this.queueLimit = queueLimit;
        this.ioClients = new LoopClient[io.size()];
    }

    public LoopGroup io() {
        return io;
    }

    public ShardDriver driver() {
        return driver;
    }

    public String defaultPolicy() {
        return defaultPolicy;
    }

    public int queueLimit() {
        return queueLimit;
    }

    /** The asynchronous client bound to I/O loop {@code index}; opened on first use. Thread-safe. */
    public synchronized LoopClient ioClient(int index) {
        LoopClient c = ioClients[index];
        if (c == null) {
            c = driver.openOn(io.loops().get(index));
            ioClients[index] = c;
        }
        return c;
    }

    /** The shared blocking client; opened on first use. Thread-safe. */
    public synchronized BlockingClient blocking() {
        if (blocking == null) {
            blocking = driver.openBlocking();
        }
        return blocking;
    }

    /** Registers something to close with the context (e.g. a model's backend loops). */
    synchronized void own(AutoCloseable c) {
        owned.add(c);
    }

    @Override
    public synchronized void close() {
        for (LoopClient c : ioClients) {
            if (c != null) {
                c.loop().execute(c::close);
            }
        }
        if (blocking != null) {
            blocking.close();
        }
        for (AutoCloseable c : owned) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort on shutdown
            }
        }
    }
}
