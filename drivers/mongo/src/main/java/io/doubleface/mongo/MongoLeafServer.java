package io.doubleface.mongo;

import io.doubleface.driver.spi.LeafServer;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.doubleface.driver.spi.LeafServerBuilder;
import io.doubleface.driver.spi.ShardAddresses;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Embedded MongoDB shards: many {@code mongo-java-server} instances (memory backend, real MongoDB
 * wire protocol) in one process, one port each ({@code basePort .. basePort+shards-1}), empty when
 * they start: a test or demo writes its data through a {@link MongoDriver} over {@link #uri()}.
 *
 * <pre>{@code
 * try (MongoLeafServer leaf = MongoLeafServer.builder().shards(20).basePort(7301).start()) {
 *     System.out.println(leaf.listeningMessage()); // listening on 127.0.0.1:7301-7320 (20 shards)
 *     ... MongoDriver.of(leaf.uri() ...) ...
 * }
 * }</pre>
 *
 * <p>Each shard is its own {@link MongoServer} with its own Netty (4.2, NIO) boss and worker thread
 * ({@code mongo-server-boss-N}, {@code mongo-server-worker-N}): two threads per shard. A base
 * port of 0 binds ephemeral ports (for tests); {@link #ports()} tells which. For failure tests a
 * shard can be stopped ({@link #stop(int)}: its connections drop, its port refuses) and started
 * again on the same port, empty ({@link #restart(int)}).
 *
 * <p>Threading: all methods are thread-safe (synchronized); {@link #close} is idempotent.
 */
public final class MongoLeafServer extends LeafServer {

    /** Default host to bind: {@value}. */
    public static final String DEFAULT_HOST = LeafServerBuilder.DEFAULT_HOST;

    /** Most shards one leaf hosts: {@value} (two threads each). */
    public static final int MAX_SHARDS = 1024;

    private final MongoServer[] servers;
    private boolean closed;

    private MongoLeafServer(Builder b) {
        super(b);
        this.servers = new MongoServer[b.shards()];
        try {
            for (int shard = 0; shard < b.shards(); shard++) {
                servers[shard] = bind(shard, b.basePort() == 0 ? 0 : b.basePort() + shard);
                bound(shard, servers[shard].getLocalAddress().getPort());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private MongoServer bind(int shard, int port) {
        MongoServer s = new MongoServer(new MemoryBackend());
        try {
            s.bind(new InetSocketAddress(host(), port), 1, 1);
        } catch (RuntimeException e) {
            throw new IllegalStateException("mongo shard " + shard + ": cannot listen on " + host() + ":" + port + ": " + e, e);
        }
        return s;
    }

    /**
     * {@return a new builder with the defaults (host {@value #DEFAULT_HOST}, 1 shard, ephemeral port)}
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the shard list, e.g. {@code mongodb://127.0.0.1:7301-7320}, for {@link MongoDriver#open}} */
    public String uri() {
        return ShardAddresses.describe(MongoDriver.SCHEME, addresses());
    }

    /** {@return the startup line, e.g. {@code listening on 127.0.0.1:7301-7320 (20 shards)}} */
    public String listeningMessage() {
        return "listening on " + uri().substring((MongoDriver.SCHEME + "://").length()) + " (" + shardsLabel()
                + ")";
    }

    /**
     * Prints {@link #listeningMessage()} as one line.
     *
     * @param out where to print, e.g. {@code System.out}
     */
    public void printListening(PrintStream out) {
        out.println(listeningMessage());
    }

    /**
     * Stops shard {@code shard}: closes its connections and its port, drops its data. Does nothing if
     * it is stopped already.
     *
     * @param shard the shard, {@code 0 .. shardCount()-1}
     * @throws IndexOutOfBoundsException if there is no such shard
     */
    public synchronized void stop(int shard) {
        Objects.checkIndex(shard, servers.length);
        if (servers[shard] != null) {
            servers[shard].shutdownNow();
            servers[shard] = null;
        }
    }

    /**
     * Starts shard {@code shard} again on its port, empty; a running shard is stopped first (so it
     * comes back without its data).
     *
     * @param shard the shard, {@code 0 .. shardCount()-1}
     * @throws IndexOutOfBoundsException if there is no such shard
     * @throws IllegalStateException if the leaf is closed or the port cannot be bound again
     */
    public synchronized void restart(int shard) {
        if (closed) {
            throw new IllegalStateException("mongo leaf is closed");
        }
        stop(shard);
        servers[shard] = bind(shard, port(shard));
    }

    /** Stops every shard. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] != null) {
                servers[i].shutdownNow();
                servers[i] = null;
            }
        }
    }

    @Override
    public String toString() {
        return "MongoLeafServer[" + listeningMessage() + "]";
    }

    /** Configures and starts a {@link MongoLeafServer}. Not thread-safe. */
    public static final class Builder extends LeafServerBuilder<Builder> {

        private Builder() {
            super(MAX_SHARDS);
        }

        /**
         * Binds every shard and returns the running leaf.
         *
         * @return the running leaf; the caller closes it
         * @throws IllegalArgumentException if {@code basePort + shards - 1 > 65535}
         * @throws IllegalStateException if {@code de.bwaldvogel:mongo-java-server} is not on the class
         *     path (an optional dependency of this driver: declare it, test scope), or a port cannot
         *     be bound (the shards started so far are stopped again)
         */
        public MongoLeafServer start() {
            try {
                Class.forName("de.bwaldvogel.mongo.MongoServer", false, MongoLeafServer.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("MongoLeafServer needs de.bwaldvogel:mongo-java-server on the class "
                        + "path (an optional dependency of doubleface-driver-mongo): declare it, e.g. with "
                        + "<scope>test</scope>; doubleface-bom manages its version", e);
            }
            checkPortRange();
            return new MongoLeafServer(this);
        }
    }
}
