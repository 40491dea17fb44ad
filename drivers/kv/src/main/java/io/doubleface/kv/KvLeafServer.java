package io.doubleface.kv;

import io.doubleface.driver.spi.LeafServer;
import io.doubleface.driver.Transport;
import io.doubleface.driver.spi.LeafServerBuilder;
import io.doubleface.driver.spi.DriverLoops;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KV leaf: one process (or embedded object) hosting many KV shards, one listening port per
 * shard ({@code basePort .. basePort+shards-1}), all served by one {@link DriverLoops} named
 * {@value #LOOP_GROUP_NAME}. Every shard holds the whole deterministic key space
 * {@code 0 .. records-1} of {@link io.doubleface.kv.Records}, precomputed once in memory and
 * shared by the shards, so a READ or SCAN is a memory copy. Wire format: {@link KvProtocol}.
 *
 * <pre>{@code
 * try (KvLeafServer leaf = KvLeafServer.builder().shards(20).basePort(7101).records(1000).start()) {
 *     leaf.printListening(System.out);   // listening on 127.0.0.1:7101-7120 (20 shards, 1000 records)
 *     ...
 * }
 * }</pre>
 *
 * <p>A base port of 0 binds every shard to an ephemeral port (for tests); {@link #ports()} tells
 * which.
 *
 * <p>Threading: {@link #start} and {@link #close} may be called from any thread except the leaf's
 * own loops; the accessors are thread-safe. The server owns its loop group and shuts it down in
 * {@link #close()}.
 */
public final class KvLeafServer extends LeafServer {

    private static final Logger log = LoggerFactory.getLogger(KvLeafServer.class);

    /** Name of the leaf's loop group (and prefix of its thread names): {@value}. */
    public static final String LOOP_GROUP_NAME = "kv-leaf";

    /** Default host to bind: {@value}. */
    public static final String DEFAULT_HOST = LeafServerBuilder.DEFAULT_HOST;

    /** Default number of event loops: {@value}. */
    public static final int DEFAULT_LOOPS = 1;

    /** Most shards one leaf hosts: {@value}. */
    public static final int MAX_SHARDS = 4096;

    private final int records;
    private final DriverLoops loops;
    private final List<Channel> listeners;
    /** Accepted connections, so {@link #close} can close them before the loops stop. */
    private final Set<Channel> children = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    private KvLeafServer(Builder b) {
        super(b);
        this.records = b.records;
        KvStore store = new KvStore(b.records);
        this.loops = DriverLoops.open(LOOP_GROUP_NAME, b.loops, b.transport);
        this.listeners = new ArrayList<>(b.shards());
        try {
            for (int shard = 0; shard < b.shards(); shard++) {
                int port = b.basePort() == 0 ? 0 : b.basePort() + shard;
                boolean slow = shard == b.slowShard;
                Channel ch = bind(store, shard, port, slow ? b.slowFraction : 0, slow ? b.slowDelay.toNanos() : 0);
                listeners.add(ch);
                bound(shard, ((InetSocketAddress) ch.localAddress()).getPort());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private Channel bind(KvStore store, int shard, int port, double slowFraction, long slowDelayNanos) {
        ServerBootstrap b = new ServerBootstrap()
                .group(loops.group())
                .channel(loops.serverChannelClass())
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        children.add(ch);
                        ch.closeFuture().addListener(f -> children.remove(ch));
                        ch.pipeline().addLast(new KvServerHandler(store, shard, slowFraction, slowDelayNanos));
                    }
                });
        ChannelFuture f = b.bind(host(), port).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new IllegalStateException("kv shard " + shard + ": cannot listen on " + host() + ":" + port
                    + ": " + f.cause(), f.cause());
        }
        return f.channel();
    }

    /**
     * {@return a new builder with the defaults (host {@value #DEFAULT_HOST}, {@value #DEFAULT_LOOPS} loop, AUTO
     * transport, 1 shard, ephemeral port, 1000 records)}
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts {@code shards} shards on {@code basePort ..} of {@value #DEFAULT_HOST} with the other defaults.
     *
     * @param shards the number of shards, {@code 1 ..} {@value #MAX_SHARDS}
     * @param basePort the port of shard 0, the others following it; 0 for ephemeral ports
     * @param records records per shard, {@code 1 ..} 2107442 (keys {@code 0 .. records-1})
     * @return the running server; the caller closes it
     * @throws IllegalArgumentException if an argument is out of range
     * @throws IllegalStateException if a port cannot be bound
     */
    public static KvLeafServer start(int shards, int basePort, int records) {
        return builder().shards(shards).basePort(basePort).records(records).start();
    }

    /** {@return the records per shard: keys {@code 0 .. records()-1}} */
    public int records() {
        return records;
    }

    /** {@return the loop group serving the shards (owned by this server: do not close it)} */
    public DriverLoops loopGroup() {
        return loops;
    }

    /** {@return the shard list as {@link KvDriver#parse} reads it, e.g. {@code kv://127.0.0.1:7101-7120}} */
    public String uri() {
        return KvDriver.describe(addresses());
    }

    /** {@return the startup line, e.g. {@code listening on 127.0.0.1:7101-7120 (20 shards, 1000 records)}} */
    public String listeningMessage() {
        return "listening on " + uri().substring((KvDriver.SCHEME + "://").length()) + " (" + shardsLabel()
                + ", " + records + " records)";
    }

    /**
     * Prints {@link #listeningMessage()} as one line.
     *
     * @param out where to print, e.g. {@code System.out}
     */
    public void printListening(PrintStream out) {
        out.println(listeningMessage());
    }

    /** Stops listening, closes every connection and shuts the loops down. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (Channel ch : listeners) {
            ch.close().awaitUninterruptibly();
        }
        // Let registrations of connections accepted just before run, then close every connection
        // ourselves: a loop shutting down does not close channels registered while it shuts down,
        // and their clients would wait for replies forever.
        for (EventLoop loop : loops.loops()) {
            loop.submit(() -> { }).awaitUninterruptibly();
        }
        for (Channel ch : List.copyOf(children)) {
            ch.close().awaitUninterruptibly();
        }
        loops.close();
        log.debug("kv leaf on {} stopped", host());
    }

    @Override
    public String toString() {
        return "KvLeafServer[" + listeningMessage() + "]";
    }

    /** Configures and starts a {@link KvLeafServer}. Not thread-safe. */
    public static final class Builder extends LeafServerBuilder<Builder> {
        private int records = 1000;
        private int loops = DEFAULT_LOOPS;
        private Transport transport = Transport.AUTO;
        private int slowShard = -1;
        private double slowFraction;
        private java.time.Duration slowDelay = java.time.Duration.ZERO;

        private Builder() {
            super(MAX_SHARDS);
        }

        /**
         * Makes one shard answer a fraction of its calls late, for tail-latency experiments (e.g.
         * hedging): each call to {@code shard} is, with probability {@code fraction}, answered after
         * {@code delay} instead of at once. The late answer waits on the shard's loop, so later calls
         * on the same connection overtake it (clients match answers by id).
         *
         * @param shard the slow shard, {@code 0 .. shards-1}
         * @param fraction share of its calls answered late, {@code 0..1}
         * @param delay how late, {@code >= 0}
         * @return this builder
         * @throws IllegalArgumentException if a value is out of range
         */
        public Builder slowCalls(int shard, double fraction, java.time.Duration delay) {
            if (shard < 0) {
                throw new IllegalArgumentException("slow shard: " + shard + " (expected: >= 0)");
            }
            if (!(fraction >= 0 && fraction <= 1)) {
                throw new IllegalArgumentException("slow fraction: " + fraction + " (expected: 0..1)");
            }
            if (delay.isNegative()) {
                throw new IllegalArgumentException("slow delay: " + delay + " (expected: >= 0)");
            }
            this.slowShard = shard;
            this.slowFraction = fraction;
            this.slowDelay = delay;
            return this;
        }

        /**
         * Sets the records per shard (keys {@code 0 .. records-1}); default 1000.
         *
         * @param records {@code 1 ..} 2107442 (what fits one 2 GiB array); computed once at start and
         *     shared by every shard
         * @return this builder
         * @throws IllegalArgumentException if {@code records} is out of range
         */
        public Builder records(int records) {
            if (records < 1 || records > KvStore.MAX_RECORDS) {
                throw new IllegalArgumentException("records: " + records + " (expected: 1.." + KvStore.MAX_RECORDS + ")");
            }
            this.records = records;
            return this;
        }

        /**
         * Sets the number of event loops serving all shards; default {@value #DEFAULT_LOOPS}.
         *
         * @param loops the number of loops, {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code loops < 1}
         */
        public Builder loops(int loops) {
            if (loops < 1) {
                throw new IllegalArgumentException("loops: " + loops + " (expected: > 0)");
            }
            this.loops = loops;
            return this;
        }

        /**
         * Sets the transport of the loops; default AUTO (epoll if available).
         *
         * @param transport the transport, not {@code null}; {@code EPOLL} fails at {@link #start()} where
         *     epoll is not available
         * @return this builder
         */
        public Builder transport(Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /**
         * Binds every shard and returns the running server.
         *
         * @return the running server; the caller closes it
         * @throws IllegalArgumentException if {@code basePort + shards - 1 > 65535}
         * @throws IllegalStateException if a port cannot be bound (the server is closed again)
         */
        public KvLeafServer start() {
            if (slowShard >= shards()) {
                throw new IllegalArgumentException("slow shard: " + slowShard + " (expected: 0.." + (shards() - 1) + ")");
            }
            checkPortRange();
            return new KvLeafServer(this);
        }
    }
}
