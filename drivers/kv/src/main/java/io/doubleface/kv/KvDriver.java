package io.doubleface.kv;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.DriverClients;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.PipelinedLoopClient;
import io.doubleface.driver.spi.ShardAddresses;
import io.doubleface.driver.spi.ShardGroups;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDrivers;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The driver of the built-in KV shards ({@link KvLeafServer}, wire format {@link KvProtocol}).
 *
 * <ul>
 *   <li>{@link #openOn(EventLoop)} gives a {@link LoopClient} whose connections (one per shard,
 *       made lazily) are registered on that loop and pipeline many calls each;
 *   <li>{@link #openBlocking()} gives a {@link BlockingClient} over plain blocking
 *       {@link java.net.Socket}s with a per-shard pool of idle connections.
 * </ul>
 *
 * <p>Shard lists: {@link #parse} reads {@code kv://host:port-port} and
 * {@code kv://host:port,host:port,...}.
 *
 * <p>Threading: the factories, {@link #openOn}, {@link #openBlocking} and {@link #close} are
 * thread-safe. The driver closes every client it opened in {@link #close()}; it never shuts down
 * an event loop it was given.
 */
public final class KvDriver implements ShardDriver<KvRequest> {

    /** URI scheme of shard lists, without {@code ://} (as {@code MongoDriver.SCHEME}): {@value}. */
    public static final String SCHEME = "kv";

    /** Longest {@link #close()} waits for each loop client to close on its loop: {@value} ms. */
    static final long CLOSE_WAIT_MILLIS = 5_000;

    /**
     * Client options. Immutable; start from {@link #DEFAULT} and change with the {@code with*}
     * methods.
     *
     * @param connectTimeout longest a connection attempt may take
     * @param callTimeout longest a {@link LoopClient} call may wait for its reply (a
     *     {@link BlockingClient} call takes its limit as an argument)
     * @param maxOutstanding most calls a {@link LoopClient} connection holds at once, sent or
     *     queued while connecting; beyond it, sends fail with {@code OVERLOADED}
     * @param reconnectBackoff after a failed connection attempt, sends to that shard fail at once
     *     with {@code UNAVAILABLE} for this long, instead of each trying to connect again (zero:
     *     every send after a failure tries again)
     */
    public record Options(Duration connectTimeout, Duration callTimeout, int maxOutstanding, Duration reconnectBackoff) {

        /** Default connect timeout: {@value} ms. */
        public static final long DEFAULT_CONNECT_TIMEOUT_MILLIS = 1_000;
        /** Default call timeout: {@value} ms. */
        public static final long DEFAULT_CALL_TIMEOUT_MILLIS = 1_000;
        /** Default most outstanding calls per connection: {@value}. */
        public static final int DEFAULT_MAX_OUTSTANDING = 4096;
        /** Default reconnect backoff: {@value} ms. */
        public static final long DEFAULT_RECONNECT_BACKOFF_MILLIS = 50;

        /** The defaults. */
        public static final Options DEFAULT = new Options(Duration.ofMillis(DEFAULT_CONNECT_TIMEOUT_MILLIS),
                Duration.ofMillis(DEFAULT_CALL_TIMEOUT_MILLIS), DEFAULT_MAX_OUTSTANDING,
                Duration.ofMillis(DEFAULT_RECONNECT_BACKOFF_MILLIS));

        /**
         * Checks the options.
         *
         * @throws NullPointerException if a duration is {@code null}
         * @throws IllegalArgumentException if a timeout is not positive, the connect timeout is longer than
         *     {@code Integer.MAX_VALUE} ms (about 24 days), {@code maxOutstanding < 1} or the backoff is negative
         */
        public Options {
            requirePositive("connectTimeout", connectTimeout);
            requirePositive("callTimeout", callTimeout);
            if (connectTimeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("connectTimeout: " + connectTimeout + " (expected: < 24 days)");
            }
            if (maxOutstanding < 1) {
                throw new IllegalArgumentException("maxOutstanding: " + maxOutstanding + " (expected: > 0)");
            }
            Objects.requireNonNull(reconnectBackoff, "reconnectBackoff");
            if (reconnectBackoff.isNegative()) {
                throw new IllegalArgumentException("reconnectBackoff: " + reconnectBackoff + " (expected: >= 0)");
            }
        }

        private static void requirePositive(String name, Duration d) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
            }
        }

        /** {@return the store-neutral part of these options: timeouts and the outstanding-call bound} */
        public DriverSettings settings() {
            return new DriverSettings(connectTimeout, callTimeout, maxOutstanding);
        }

        /**
         * These options with the timeouts and bound of {@code s}.
         *
         * @param s the store-neutral settings
         * @return new options; the reconnect backoff is kept
         */
        public Options with(DriverSettings s) {
            return new Options(s.connectTimeout(), s.callTimeout(), s.maxOutstanding(), reconnectBackoff);
        }

        /**
         * These options with another connect timeout.
         *
         * @param d longest a connection attempt may take, {@code > 0}
         * @return new options
         * @throws IllegalArgumentException if {@code d} is not positive
         */
        public Options withConnectTimeout(Duration d) {
            return new Options(d, callTimeout, maxOutstanding, reconnectBackoff);
        }

        /**
         * These options with another call timeout.
         *
         * @param d longest a loop client call may wait for its reply, {@code > 0}
         * @return new options
         * @throws IllegalArgumentException if {@code d} is not positive
         */
        public Options withCallTimeout(Duration d) {
            return new Options(connectTimeout, d, maxOutstanding, reconnectBackoff);
        }

        /**
         * These options with another bound of outstanding calls.
         *
         * @param n most calls a loop client connection holds at once, {@code > 0}
         * @return new options
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Options withMaxOutstanding(int n) {
            return new Options(connectTimeout, callTimeout, n, reconnectBackoff);
        }

        /**
         * These options with another reconnect backoff.
         *
         * @param d how long sends to a shard fail at once after a failed connection attempt, {@code >= 0}
         * @return new options
         * @throws IllegalArgumentException if {@code d} is negative
         */
        public Options withReconnectBackoff(Duration d) {
            return new Options(connectTimeout, callTimeout, maxOutstanding, d);
        }
    }

    private final List<InetSocketAddress> shards;
    /** The shards as replica groups (DNS names, a file, {@code a|b} lists); {@code null} for a fixed list. */
    private final ShardGroups groups;
    private final Options options;
    private final String description;
    /** The driver's open/closed state and its clients; a client's {@code close()} forgets itself here. */
    final DriverClients clients;
    private final DriverClients.Registry<PipelinedLoopClient<KvRequest>> loopClients;
    private final DriverClients.Registry<KvBlockingClient> blockingClients;
    private final DriverClients.Registry<BlockingClient<KvRequest>> groupBlocking;
    /** The loop of the blocking clients over replica groups, created on first use (guarded by {@code this}). */
    private io.doubleface.driver.spi.DriverLoops blockingLoop;

    /**
     * A driver of {@code shards} (shard i at index i) with the default options.
     *
     * @param shards the shard addresses, at least one, none {@code null}; copied
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     * @deprecated use {@link #of(List)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public KvDriver(List<InetSocketAddress> shards) {
        this(fixed(shards), null, Options.DEFAULT);
    }

    /**
     * A driver of {@code shards} (shard i at index i).
     *
     * @param shards the shard addresses, at least one, none {@code null}; copied
     * @param options timeouts and bounds, not {@code null}
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     * @throws NullPointerException if an address or {@code options} is {@code null}
     * @deprecated use {@link #of(List, Options)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public KvDriver(List<InetSocketAddress> shards, Options options) {
        this(fixed(shards), null, options);
    }

    /**
     * A driver of shards that are replica groups.
     *
     * @param groups the shards' members, not {@code null}
     * @param options timeouts and bounds, not {@code null}
     * @deprecated use {@link #of(ShardGroups, Options)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public KvDriver(ShardGroups groups, Options options) {
        this(firstMembers(groups), groups, options);
    }

    /** The one constructor: {@code groups} is {@code null} for a fixed list. */
    private KvDriver(List<InetSocketAddress> shards, ShardGroups groups, Options options) {
        this.shards = shards;
        this.groups = groups;
        this.options = Objects.requireNonNull(options, "options");
        this.description = groups == null ? describe(shards) : groups.describe();
        this.clients = new DriverClients("kv driver " + description);
        this.loopClients = clients.registry();
        this.blockingClients = clients.registry();
        this.groupBlocking = clients.registry();
    }

    private static List<InetSocketAddress> fixed(List<InetSocketAddress> shards) {
        if (shards == null || shards.isEmpty()) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: at least one address)");
        }
        for (InetSocketAddress a : shards) {
            Objects.requireNonNull(a, "shard address");
        }
        return List.copyOf(shards);
    }

    private static List<InetSocketAddress> firstMembers(ShardGroups groups) {
        List<InetSocketAddress> first = new java.util.ArrayList<>();
        for (List<InetSocketAddress> g : Objects.requireNonNull(groups, "groups").current().members()) {
            first.add(g.get(0));
        }
        return List.copyOf(first);
    }

    /**
     * A driver of {@code shards} (shard i at index i) with the default options. Connects nothing yet.
     *
     * @param shards the shard addresses, at least one, none {@code null}; copied
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     */
    public static KvDriver of(List<InetSocketAddress> shards) {
        return of(shards, Options.DEFAULT);
    }

    /**
     * A driver of {@code shards} (shard i at index i). Connects nothing yet: loop clients connect to a
     * shard on its first call, blocking clients when a call finds no idle connection.
     *
     * @param shards the shard addresses, at least one, none {@code null}; copied
     * @param options timeouts and bounds, not {@code null}
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     * @throws NullPointerException if an address or {@code options} is {@code null}
     */
    public static KvDriver of(List<InetSocketAddress> shards, Options options) {
        return new KvDriver(fixed(shards), null, options);
    }

    /**
     * A driver of shards that are replica groups, possibly found by name ({@link ShardGroups}: DNS
     * A/AAAA or SRV names re-resolved while the driver runs, a watched file, {@code host:port|host:port}
     * groups). Loop clients send each call to the member of its shard with the fewest calls
     * outstanding and retry a call that fails {@code UNAVAILABLE} once on another member (every KV
     * request is a read); blocking clients go through a loop client on a loop of the driver's own.
     * The driver closes {@code groups}.
     *
     * @param groups the shards' members, not {@code null}
     * @param options timeouts and bounds, not {@code null}
     * @return the driver; the caller closes it
     */
    public static KvDriver of(ShardGroups groups, Options options) {
        return new KvDriver(firstMembers(groups), groups, options);
    }

    /**
     * A driver of the shards in {@code uri} with the default options ({@link #of(String, Options)}).
     *
     * @param uri the shard list, e.g. {@code kv://127.0.0.1:7101-7120}
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code uri} is not a shard list
     */
    public static KvDriver of(String uri) {
        return of(uri, Options.DEFAULT);
    }

    /**
     * Opens {@code uri}: a fixed list ({@link #parse}) or, when it names groups, DNS names or a file
     * ({@link ShardGroups#isGroupList}), replica groups with the options {@code dns-refresh},
     * {@code dns-min-ttl} and {@code dns-server} in its query string.
     *
     * @param uri the shard list
     * @param options timeouts and bounds
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code uri} is malformed
     * @throws IllegalStateException if a DNS name does not resolve or the file cannot be read
     */
    public static KvDriver of(String uri, Options options) {
        if (!ShardGroups.isGroupList(uri)) {
            if (uri.indexOf('?') >= 0) {
                throw new IllegalArgumentException("kv shard list '" + uri + "': options are for DNS names and files "
                        + "only (dns-refresh, dns-min-ttl, dns-server)");
            }
            return of(parse(uri), options);
        }
        return of(ShardGroups.open("kv", uri), options);
    }

    /**
     * {@link #of(String, Options)}.
     *
     * @param uri the shard list
     * @param options timeouts and bounds
     * @return the driver; the caller closes it
     * @deprecated use {@link #of(String, Options)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static KvDriver open(String uri, Options options) {
        return of(uri, options);
    }

    /**
     * Reads a shard list: {@code kv://host:first-last} (a port range) or
     * {@code kv://host:port,host:port,...} ({@link ShardAddresses#parse}).
     *
     * @param uri the shard list
     * @return the shard addresses, shard {@code i} at index {@code i}
     * @throws IllegalArgumentException if {@code uri} is not such a list
     */
    public static List<InetSocketAddress> parse(String uri) {
        return ShardAddresses.parse("kv", uri);
    }

    /** The compact shard list of {@code shards}: a port range when it is one, else a comma list. */
    static String describe(List<InetSocketAddress> shards) {
        return ShardAddresses.describe("kv", shards);
    }

    @Override
    public int shardCount() {
        return shards.size();
    }

    /** For replica groups, their members now and the resolutions counted ({@link ShardGroups#topology()}); else empty. */
    @Override
    public java.util.Map<String, Object> topology() {
        return groups == null ? java.util.Map.of() : groups.topology();
    }

    @Override
    public String describe() {
        return description;
    }

    /** {@return the shard addresses, indexed by shard (an unmodifiable list)} */
    public List<InetSocketAddress> shards() {
        return shards;
    }

    /** {@return the options the driver was opened with} */
    public Options options() {
        return options;
    }

    /**
     * Opens a client on {@code loop}, which must be an epoll or NIO {@link IoEventLoop}
     * (e.g. a loop of a {@link io.doubleface.internal.loop.LoopGroup}).
     */
    @Override
    public LoopClient<KvRequest> openOn(EventLoop loop) {
        Objects.requireNonNull(loop, "loop");
        clients.requireOpen();
        DriverSettings settings = options.settings();
        return loopClients.add(groups != null
                ? new PipelinedLoopClient<>(loop, groups, KvClientProtocol.INSTANCE, settings,
                        options.reconnectBackoff(), description, loopClients::remove)
                : new PipelinedLoopClient<>(loop, shards, KvClientProtocol.INSTANCE, settings,
                        options.reconnectBackoff(), description, loopClients::remove));
    }

    @Override
    public BlockingClient<KvRequest> openBlocking() {
        clients.requireOpen();
        if (groups != null) {
            EventLoop loop;
            synchronized (this) {
                if (blockingLoop == null) {
                    blockingLoop = io.doubleface.driver.spi.DriverLoops.open("kv-groups", 1, io.doubleface.driver.Transport.AUTO);
                }
                loop = blockingLoop.loops().get(0);
            }
            java.util.concurrent.atomic.AtomicReference<BlockingClient<KvRequest>> self =
                    new java.util.concurrent.atomic.AtomicReference<>();
            BlockingClient<KvRequest> g = ShardDrivers.blockingOver(openOn(loop), () -> groupBlocking.remove(self.get()));
            self.set(g);
            return groupBlocking.add(g, BlockingClient::close);
        }
        return blockingClients.add(new KvBlockingClient(this), KvBlockingClient::close);
    }

    /**
     * Closes every client this driver opened: blocking clients at once, loop clients on their loops
     * (waiting up to {@value #CLOSE_WAIT_MILLIS} ms for each). Idempotent.
     */
    @Override
    public void close() {
        if (!clients.close()) {
            return;
        }
        blockingClients.closeAll(KvBlockingClient::close);
        groupBlocking.closeAll(BlockingClient::close);
        DriverClients.closeOnLoops(loopClients, Duration.ofMillis(CLOSE_WAIT_MILLIS));
        io.doubleface.driver.spi.DriverLoops bl;
        synchronized (this) {
            bl = blockingLoop;
            blockingLoop = null;
        }
        if (bl != null) {
            bl.close();
        }
        if (groups != null) {
            groups.close();
        }
    }

    @Override
    public String toString() {
        return "KvDriver[" + description + "]";
    }
}
