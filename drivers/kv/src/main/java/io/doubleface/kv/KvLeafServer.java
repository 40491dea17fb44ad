package io.doubleface.kv;

import io.doubleface.loop.LoopGroup;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KV leaf: one process (or embedded object) hosting many KV shards, one listening port per
 * shard ({@code basePort .. basePort+shards-1}), all served by one {@link LoopGroup} named
 * {@value #LOOP_GROUP_NAME}. Every shard holds the whole deterministic key space
 * {@code 0 .. records-1} of {@link io.doubleface.data.Records}, precomputed once in memory and
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
public final class KvLeafServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KvLeafServer.class);

    /** Name of the leaf's loop group (and prefix of its thread names): {@value}. */
    public static final String LOOP_GROUP_NAME = "kv-leaf";

    /** Default host to bind: {@value}. */
    public static final String DEFAULT_HOST = "127.0.0.1";

    /** Default number of event loops: {@value}. */
    public static final int DEFAULT_LOOPS = 1;

    /** Most shards one leaf hosts: {@value}. */
    public static final int MAX_SHARDS = 4096;

    private final String host;
    private final int records;
    private final LoopGroup loops;
    private final List<Channel> listeners;
    private final int[] ports;
    /** Accepted connections, so {@link #close} can close them before the loops stop. */
    private final Set<Channel> children = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private KvLeafServer(Builder b) {
        this.host = b.host;
        this.records = b.records;
        KvStore store = new KvStore(b.records);
        this.loops = new LoopGroup(LOOP_GROUP_NAME, b.loops, b.transport);
        this.listeners = new ArrayList<>(b.shards);
        this.ports = new int[b.shards];
        try {
            for (int shard = 0; shard < b.shards; shard++) {
                int port = b.basePort == 0 ? 0 : b.basePort + shard;
                Channel ch = bind(store, shard, port);
                listeners.add(ch);
                ports[shard] = ((InetSocketAddress) ch.localAddress()).getPort();
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private Channel bind(KvStore store, int shard, int port) {
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
                        ch.pipeline().addLast(new KvServerHandler(store, shard));
                    }
                });
        ChannelFuture f = b.bind(host, port).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new IllegalStateException("kv shard " + shard + ": cannot listen on " + host + ":" + port
                    + ": " + f.cause(), f.cause());
        }
        return f.channel();
    }

    /** A builder with the defaults (host {@value #DEFAULT_HOST}, {@value #DEFAULT_LOOPS} loop, AUTO transport). */
    public static Builder builder() {
        return new Builder();
    }

    /** Starts {@code shards} shards on {@code basePort ..} of {@value #DEFAULT_HOST} with the other defaults. */
    public static KvLeafServer start(int shards, int basePort, int records) {
        return builder().shards(shards).basePort(basePort).records(records).start();
    }

    /** Number of shards. */
    public int shardCount() {
        return ports.length;
    }

    /** The port shard {@code shard} listens on. */
    public int port(int shard) {
        Objects.checkIndex(shard, ports.length);
        return ports[shard];
    }

    /** The bound ports, indexed by shard (a copy). */
    public int[] ports() {
        return ports.clone();
    }

    public String host() {
        return host;
    }

    /** Records per shard. */
    public int records() {
        return records;
    }

    /** The loop group serving the shards (owned by this server). */
    public LoopGroup loopGroup() {
        return loops;
    }

    /** The shards' addresses, indexed by shard: what {@link KvDriver} takes. */
    public List<InetSocketAddress> addresses() {
        List<InetSocketAddress> a = new ArrayList<>(ports.length);
        for (int p : ports) {
            a.add(new InetSocketAddress(host, p));
        }
        return a;
    }

    /** The shard list as {@link KvDriver#parse} reads it, e.g. {@code kv://127.0.0.1:7101-7120}. */
    public String uri() {
        return KvDriver.describe(addresses());
    }

    /** E.g. {@code listening on 127.0.0.1:7101-7120 (20 shards, 1000 records)}. */
    public String listeningMessage() {
        return "listening on " + uri().substring(KvDriver.SCHEME.length()) + " (" + ports.length
                + (ports.length == 1 ? " shard, " : " shards, ") + records + " records)";
    }

    /** Prints {@link #listeningMessage()} as one line. */
    public void printListening(PrintStream out) {
        out.println(listeningMessage());
    }

    /** Stops listening, closes every connection and shuts the loops down. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
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
        log.debug("kv leaf on {} stopped", host);
    }

    @Override
    public String toString() {
        return "KvLeafServer[" + listeningMessage() + "]";
    }

    /** Configures and starts a {@link KvLeafServer}. Not thread-safe. */
    public static final class Builder {
        private int shards = 1;
        private int basePort;
        private int records = 1000;
        private String host = DEFAULT_HOST;
        private int loops = DEFAULT_LOOPS;
        private LoopGroup.Transport transport = LoopGroup.Transport.AUTO;

        private Builder() {}

        /** Number of shards, {@code 1 ..} {@value #MAX_SHARDS}; default 1. */
        public Builder shards(int shards) {
            if (shards < 1 || shards > MAX_SHARDS) {
                throw new IllegalArgumentException("shards: " + shards + " (expected: 1.." + MAX_SHARDS + ")");
            }
            this.shards = shards;
            return this;
        }

        /** Port of shard 0 (shard i listens on basePort+i), or 0 for ephemeral ports; default 0. */
        public Builder basePort(int basePort) {
            if (basePort < 0 || basePort > 65535) {
                throw new IllegalArgumentException("basePort: " + basePort + " (expected: 0..65535)");
            }
            this.basePort = basePort;
            return this;
        }

        /** Records per shard (keys {@code 0 .. records-1}); default 1000. */
        public Builder records(int records) {
            if (records < 1 || records > KvStore.MAX_RECORDS) {
                throw new IllegalArgumentException("records: " + records + " (expected: 1.." + KvStore.MAX_RECORDS + ")");
            }
            this.records = records;
            return this;
        }

        /** Address to bind; default {@value #DEFAULT_HOST}. */
        public Builder host(String host) {
            if (host == null || host.isEmpty()) {
                throw new IllegalArgumentException("host: '" + host + "' (expected: a host name or address)");
            }
            this.host = host;
            return this;
        }

        /** Event loops serving all shards; default {@value #DEFAULT_LOOPS}. */
        public Builder loops(int loops) {
            if (loops < 1) {
                throw new IllegalArgumentException("loops: " + loops + " (expected: > 0)");
            }
            this.loops = loops;
            return this;
        }

        /** Transport of the loops; default AUTO (epoll if available). */
        public Builder transport(LoopGroup.Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /** Binds every shard and returns the running server. */
        public KvLeafServer start() {
            if (basePort != 0 && basePort + shards - 1 > 65535) {
                throw new IllegalArgumentException("basePort: " + basePort + " with " + shards
                        + " shards (expected: basePort + shards - 1 <= 65535)");
            }
            return new KvLeafServer(this);
        }
    }
}
