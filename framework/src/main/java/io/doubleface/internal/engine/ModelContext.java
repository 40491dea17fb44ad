package io.doubleface.internal.engine;

import io.doubleface.driver.Transport;
import io.doubleface.api.Backend;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.sched.ReplyOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What every threading model of one server shares: the server's I/O loops, its backends, for each
 * backend one per-I/O-loop asynchronous client (the DoubleFace per-loop connections, shared by
 * every DoubleFace configuration) and one blocking client (shared by the thread and Type-1
 * models), and the server-wide defaults.
 *
 * <p>Threading: immutable after construction except the lazily opened blocking client, which is
 * created under a lock on first use. Owns the clients it opened; the server owns the loops and
 * the driver.
 */
public final class ModelContext implements AutoCloseable {

    /** Default bound of a pool's request queue before requests are refused with 503: {@value}. */
    public static final int DEFAULT_QUEUE_LIMIT = 16_384;

    private final LoopGroup io;
    private final List<Backend<?>> backends;
    private final Supplier<? extends ReplyOrder> defaultPolicy;
    private final int queueLimit;
    private final LoopClient<?>[][] ioClients;
    private final List<AutoCloseable> owned = new ArrayList<>();
    private final BlockingClient<?>[] blocking;
    private final ClientWarmup[][] ioWarmups;
    private final ClientWarmup[] blockingWarmups;
    private boolean closed; // under this
    private volatile Consumer<LoopGroup> loopGroupStarted = g -> { };

    /**
     * @param io the server's I/O loops (upstream; DoubleFace downstream too)
     * @param defaultPolicy the DoubleFace reply order of configurations that name none (a name,
     *     see {@link ReplyOrder#create})
     * @param queueLimit bound of each worker pool's queue
     */
    public ModelContext(LoopGroup io, List<Backend<?>> backends, String defaultPolicy, int queueLimit) {
        this(io, backends, ReplyOrder.factory(defaultPolicy), queueLimit);
    }

    /**
     * @param io the server's I/O loops (upstream; DoubleFace downstream too)
     * @param defaultPolicy makes the DoubleFace reply order of configurations that name none, one
     *     instance per loop
     * @param queueLimit bound of each worker pool's queue
     */
    public ModelContext(LoopGroup io, List<Backend<?>> backends, Supplier<? extends ReplyOrder> defaultPolicy,
            int queueLimit) {
        if (backends.isEmpty()) {
            throw new IllegalArgumentException("backends: none (expected: at least one)");
        }
        for (int i = 0; i < backends.size(); i++) {
            if (backends.get(i).index() != i) {
                throw new IllegalArgumentException("backend " + backends.get(i).name() + " has index "
                        + backends.get(i).index() + " (expected: " + i + ")");
            }
        }
        this.io = io;
        this.backends = List.copyOf(backends);
        this.defaultPolicy = Objects.requireNonNull(defaultPolicy, "defaultPolicy");
        this.queueLimit = queueLimit;
        this.ioClients = new LoopClient<?>[backends.size()][io.size()];
        this.blocking = new BlockingClient<?>[backends.size()];
        this.ioWarmups = new ClientWarmup[backends.size()][io.size()];
        this.blockingWarmups = new ClientWarmup[backends.size()];
    }

    public LoopGroup io() {
        return io;
    }

    /** The server's backends, by {@link Backend#index()}. */
    public List<Backend<?>> backends() {
        return backends;
    }

    /** {@return the factory of the reply order of DoubleFace configurations that name none} */
    public Supplier<? extends ReplyOrder> defaultPolicy() {
        return defaultPolicy;
    }


    public int queueLimit() {
        return queueLimit;
    }

    /**
     * Sets what is done with each loop group a model starts ({@link #newLoopGroup}) before the
     * model opens clients on it: the server applies its loop knobs (flush mode, CPU pinning).
     *
     * @param hook called on the thread that builds the model
     */
    public void onLoopGroupStarted(Consumer<LoopGroup> hook) {
        this.loopGroupStarted = Objects.requireNonNull(hook, "hook");
    }

    /**
     * Starts a model's own loop group (backend loops, reactors) on the I/O loops' transport and hands
     * it to the {@link #onLoopGroupStarted} hook. The model owns and closes it.
     *
     * @param name thread-name prefix
     * @param size number of loops
     * @return the started group
     */
    public LoopGroup newLoopGroup(String name, int size) {
        LoopGroup g = new LoopGroup(name, size, io.isEpoll() ? Transport.EPOLL : Transport.NIO);
        try {
            loopGroupStarted.accept(g);
        } catch (RuntimeException e) {
            g.close();
            throw e;
        }
        return g;
    }

    /** The asynchronous client of {@code backend} bound to I/O loop {@code loop}; opened on first use. Thread-safe. */
    public synchronized LoopClient<?> ioClient(int backend, int loop) {
        LoopClient<?> c = ioClients[backend][loop];
        if (c == null) {
            c = backends.get(backend).driver().openOn(io.loops().get(loop));
            ioClients[backend][loop] = c;
        }
        return c;
    }

    /** The shared blocking client of {@code backend}; opened on first use. Thread-safe. */
    public synchronized BlockingClient<?> blocking(int backend) {
        BlockingClient<?> c = blocking[backend];
        if (c == null) {
            c = blocking[backend] = backends.get(backend).driver().openBlocking();
        }
        return c;
    }

    /**
     * Opens every backend's client on every I/O loop (those not open yet) and starts connecting
     * them (warm start, once per client).
     *
     * @return the warm-ups of every I/O-loop client
     */
    synchronized List<ClientWarmup> warmIoClients() {
        List<ClientWarmup> all = new ArrayList<>();
        for (int b = 0; b < backends.size(); b++) {
            for (int i = 0; i < io.size(); i++) {
                LoopClient<?> c = ioClient(b, i);
                ClientWarmup w = ioWarmups[b][i];
                if (w == null && !closed) {
                    w = ioWarmups[b][i] = ClientWarmup.start(backends.get(b).name(), io.name() + "-" + i, c);
                }
                if (w != null) {
                    all.add(w);
                }
            }
        }
        return all;
    }

    /**
     * Opens every backend's blocking client (those not open yet) and starts connecting them (warm
     * start, once per client).
     *
     * @return the warm-ups of the blocking clients
     */
    synchronized List<ClientWarmup> warmBlockingClients() {
        List<ClientWarmup> all = new ArrayList<>();
        for (int b = 0; b < backends.size(); b++) {
            BlockingClient<?> c = blocking(b);
            ClientWarmup w = blockingWarmups[b];
            if (w == null && !closed) {
                w = blockingWarmups[b] = ClientWarmup.start(backends.get(b).name(), c);
            }
            if (w != null) {
                all.add(w);
            }
        }
        return all;
    }

    /**
     * Starts connecting a model's own clients (warm start): {@code clients[i][b]}, the client of
     * backend {@code b} on loop {@code i} of {@code group}.
     *
     * @return their warm-ups
     */
    List<ClientWarmup> warm(LoopGroup group, LoopClient<?>[][] clients) {
        List<ClientWarmup> all = new ArrayList<>();
        for (int i = 0; i < clients.length; i++) {
            for (int b = 0; b < clients[i].length; b++) {
                all.add(ClientWarmup.start(backends.get(b).name(), group.name() + "-" + i, clients[i][b]));
            }
        }
        return all;
    }

    /** Registers something to close with the context (e.g. a model's backend loops). */
    synchronized void own(AutoCloseable c) {
        owned.add(c);
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (ClientWarmup[] perLoop : ioWarmups) {
            for (ClientWarmup w : perLoop) {
                if (w != null) {
                    w.cancel();
                }
            }
        }
        for (ClientWarmup w : blockingWarmups) {
            if (w != null) {
                w.cancel();
            }
        }
        for (LoopClient<?>[] perLoop : ioClients) {
            for (LoopClient<?> c : perLoop) {
                if (c != null) {
                    c.loop().execute(c::close);
                }
            }
        }
        for (BlockingClient<?> c : blocking) {
            if (c != null) {
                c.close();
            }
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
