package io.doubleface.redis;

import io.doubleface.driver.PipelinedLoopClient;
import io.doubleface.driver.ShardDrivers;
import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.LoopClient;
import io.doubleface.driver.ShardAddresses;
import io.doubleface.driver.ShardDriver;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.event.DefaultEventPublisherOptions;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandle;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver of Redis shards, through Lettuce. Shard {@code i} is the {@code i}-th
 * {@code redis-server} of the list ({@code redis://host:first-last} or
 * {@code redis://host:port,host:port}), or the {@code i}-th master of a Redis Cluster
 * ({@code redis-cluster://host:port}, see {@link RedisClusterShards}), whose keys carry the
 * shard's hash tag ({@link #keyTag(int)}). It sends {@link RedisCommand}s, built with {@link Redis}.
 *
 * <ul>
 *   <li>{@link #openOn(EventLoop)} with {@code connection=per-loop} (the default): one
 *       {@link RedisClient} per loop whose {@link ClientResources} hand Lettuce <em>that</em> loop
 *       ({@link LoopEventLoopGroupProvider}, never shut down by Lettuce), so the connections (one
 *       per shard) are registered on the caller's loop and replies complete on it;
 *   <li>{@link #openOn(EventLoop)} with {@code connection=shared}: one connection per shard on
 *       Lettuce's own event loops, shared by every loop client, completions handed to the
 *       caller's loop — what most Lettuce users do;
 *   <li>{@link #openOn(EventLoop)} with {@code connection=native}: one connection per shard per
 *       loop, on that loop, through doubleface's own RESP2 client ({@link RespProtocol}): commands
 *       encoded into one buffer per connection and written once per loop iteration, replies framed
 *       by hand and decoded with Lettuce's state machine into the command's output;
 *   <li>{@link #openBlocking()}: pooled connections on Lettuce's own loops, used through the
 *       synchronous API by the calling thread.
 * </ul>
 *
 * <p>Every client has Lettuce's bounds set: {@code requestQueueSize = maxOutstanding},
 * {@code disconnectedBehavior = REJECT_COMMANDS}, auto-reconnect on (delay 10 ms doubling up to
 * 1 s), connect timeout and call timeout from {@link DriverSettings}.
 *
 * <p>Threading: the factory methods and {@link #close} are thread-safe. The driver closes every
 * client it opened and shuts down the Lettuce resources it created; it never shuts down an
 * event loop it was given.
 */
public final class RedisDriver implements ShardDriver<RedisCommand<?>> {

    private static final Logger log = LoggerFactory.getLogger(RedisDriver.class);

    /** Longest {@link #close()} waits for each loop client to close on its loop: {@value} ms. */
    static final long CLOSE_WAIT_MILLIS = 5_000;

    /** After a failed connection attempt, sends to that shard fail at once for this long: {@value} ms. */
    static final long RECONNECT_BACKOFF_MILLIS = 50;

    /** How loop clients reach the shards ({@code ?connection=}). */
    public enum ConnectionMode {
        /** One client and one connection per shard per event loop, on that loop (the default). */
        PER_LOOP,
        /** One connection per shard on Lettuce's own loops, shared by every loop client. */
        SHARED,
        /**
         * One connection per shard per event loop, on that loop, with doubleface's own RESP2 client
         * instead of Lettuce's channel pipeline (commands still built and replies still decoded with
         * Lettuce's codecs and outputs): see {@link RespProtocol}. Plain {@code redis://} and
         * {@code redis-cluster://} shards without a password or database number.
         */
        NATIVE;

        /** {@return the URI spelling: {@code per-loop} or {@code shared}} */
        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        static ConnectionMode parse(String s) {
            for (ConnectionMode m : values()) {
                if (m.label().equals(s)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("connection=" + s + " (expected: per-loop, shared or native)");
        }
    }

    /**
     * Scheme of shard lists over TLS: {@value}. Options {@code cacert=PEM} (the certificate
     * authorities to trust; default the JDK's) and {@code verify=full|ca|none} (default {@code full}:
     * chain and host name or IP).
     */
    public static final String TLS_SCHEME = "rediss";

    private final List<InetSocketAddress> shards;
    private final String[] keyTags;
    private final DriverSettings settings;
    private final ConnectionMode mode;
    private final Tls tls; // null: plain TCP
    private final String description;
    /** Created on first use ({@link #resources()}), under {@link #sharedLock}. */
    private DefaultClientResources resources;
    private final RedisURI[] uris;
    private final Set<RedisLoopClient> loopClients = ConcurrentHashMap.newKeySet();
    private final Set<PipelinedLoopClient<RedisCommand<?>>> nativeClients = ConcurrentHashMap.newKeySet();
    private final Set<RedisBlockingClient> blockingClients = ConcurrentHashMap.newKeySet();
    private final LongAdder offLoopCompletions = new LongAdder();
    private final Object sharedLock = new Object();
    private RedisClient sharedClient; // guarded by sharedLock
    private final AtomicReferenceArray<CompletableFuture<StatefulRedisConnection<byte[], byte[]>>> shared;
    private final long[] sharedRetryAt; // guarded by sharedLock
    private volatile boolean closed;

    /**
     * A driver of standalone {@code shards} (shard i at index i), per-loop connections. Connects
     * nothing yet: connections are made when clients first use a shard.
     *
     * @param shards the {@code redis-server} addresses, at least one; copied
     * @param settings timeouts and outstanding-call bound, not {@code null}
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     * @throws NullPointerException if {@code settings} is {@code null}
     */
    public RedisDriver(List<InetSocketAddress> shards, DriverSettings settings) {
        this(shards, null, settings, ConnectionMode.PER_LOOP, null, null);
    }

    /**
     * TLS to the shards ({@code rediss://}).
     *
     * @param caCert PEM file of the certificate authorities to trust, or {@code null} for the JDK's
     * @param verify how much of the shard's certificate is checked: {@code FULL} (chain and host
     *     name or IP), {@code CA} (chain only), {@code NONE} (nothing: testing only)
     */
    record Tls(java.nio.file.Path caCert, SslVerifyMode verify) {}

    /**
     * A driver of {@code shards}.
     *
     * @param keyTags the key tag of each shard ({@link #keyTag}), or {@code null} for none
     * @param description for {@link #describe()}, or {@code null} for the {@code redis://} list
     */
    RedisDriver(List<InetSocketAddress> shards, List<String> keyTags, DriverSettings settings,
            ConnectionMode mode, Tls tls, String description) {
        if (shards == null || shards.isEmpty()) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: at least one address)");
        }
        this.shards = List.copyOf(shards);
        this.keyTags = new String[shards.size()];
        for (int i = 0; i < this.keyTags.length; i++) {
            this.keyTags[i] = keyTags == null ? "" : "{" + keyTags.get(i) + "}";
        }
        this.settings = Objects.requireNonNull(settings, "settings");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.tls = tls;
        this.description = description != null ? description
                : ShardAddresses.describe(tls == null ? "redis" : TLS_SCHEME, this.shards)
                        + (mode == ConnectionMode.PER_LOOP ? "" : "?connection=" + mode.label());
        this.uris = new RedisURI[shards.size()];
        for (int i = 0; i < uris.length; i++) {
            InetSocketAddress a = this.shards.get(i);
            RedisURI.Builder ub = RedisURI.builder().withHost(a.getHostString()).withPort(a.getPort())
                    .withTimeout(settings.callTimeout());
            if (tls != null) {
                ub.withSsl(true).withVerifyPeer(tls.verify());
            }
            uris[i] = ub.build();
        }
        this.shared = new AtomicReferenceArray<>(shards.size());
        this.sharedRetryAt = new long[shards.size()];
    }

    /**
     * Opens the driver of {@code uri}: {@code redis://host:first-last[?options]},
     * {@code redis://host:port,host:port[?options]} or {@code redis-cluster://host:port[?options]};
     * {@code rediss://} instead of {@code redis://} for TLS. Options: {@code connection=per-loop|shared|native};
     * with {@code rediss://} also {@code cacert=PEM-FILE} and {@code verify=full|ca|none}
     * ({@link #TLS_SCHEME}).
     *
     * @param uri the shard list, not {@code null}
     * @param settings timeouts and outstanding-call bound, not {@code null}
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code uri} is malformed
     * @throws IllegalStateException for {@code redis-cluster://}, if no seed answers {@code CLUSTER NODES}
     *     within the connect timeout or the cluster has no master serving slots
     */
    public static RedisDriver open(String uri, DriverSettings settings) {
        Objects.requireNonNull(uri, "uri");
        int q = uri.indexOf('?');
        String base = q < 0 ? uri : uri.substring(0, q);
        boolean secure = base.startsWith(TLS_SCHEME + "://");
        ConnectionMode mode = ConnectionMode.PER_LOOP;
        java.nio.file.Path caCert = null;
        SslVerifyMode verify = SslVerifyMode.FULL;
        List<String> kept = new java.util.ArrayList<>();
        if (q >= 0) {
            for (String kv : uri.substring(q + 1).split("&", -1)) {
                int eq = kv.indexOf('=');
                String k = eq < 0 ? kv : kv.substring(0, eq);
                String v = eq < 0 ? "" : kv.substring(eq + 1);
                switch (k) {
                    case "connection" -> {
                        mode = ConnectionMode.parse(v);
                        if (mode != ConnectionMode.PER_LOOP) {
                            kept.add(kv);
                        }
                    }
                    case "cacert" -> {
                        if (!secure) {
                            throw new IllegalArgumentException("redis shard URI '" + uri + "': cacert needs "
                                    + TLS_SCHEME + "://");
                        }
                        caCert = java.nio.file.Path.of(v);
                        if (!java.nio.file.Files.isReadable(caCert)) {
                            throw new IllegalArgumentException("redis shard URI '" + uri + "': cacert file " + v
                                    + " is not readable");
                        }
                        kept.add(kv);
                    }
                    case "verify" -> {
                        if (!secure) {
                            throw new IllegalArgumentException("redis shard URI '" + uri + "': verify needs "
                                    + TLS_SCHEME + "://");
                        }
                        verify = switch (v) {
                            case "full" -> SslVerifyMode.FULL;
                            case "ca" -> SslVerifyMode.CA;
                            case "none" -> SslVerifyMode.NONE;
                            default -> throw new IllegalArgumentException("redis shard URI '" + uri
                                    + "': verify=" + v + " (expected: full, ca or none)");
                        };
                        kept.add(kv);
                    }
                    default -> throw new IllegalArgumentException("redis shard URI '" + uri + "': unknown option '"
                            + k + "' (known: connection=per-loop|shared|native" + (secure ? ", cacert=PEM, verify=full|ca|none"
                            : "; rediss:// adds cacert=PEM, verify=full|ca|none") + ")");
                }
            }
        }
        String suffix = kept.isEmpty() ? "" : "?" + String.join("&", kept);
        if (base.startsWith(RedisClusterShards.SCHEME + "://")) {
            List<InetSocketAddress> seeds = ShardAddresses.parse(RedisClusterShards.SCHEME, base);
            RedisClusterShards cs = RedisClusterShards.discover(seeds, settings.connectTimeout());
            return new RedisDriver(cs.masters(), cs.tags(), settings, mode, null, base + suffix + " ("
                    + cs.masters().size() + " masters)");
        }
        if (secure && mode == ConnectionMode.NATIVE) {
            throw new IllegalArgumentException("redis shard URI '" + uri + "': connection=native speaks plain TCP "
                    + "(use connection=per-loop or shared with " + TLS_SCHEME + "://)");
        }
        if (secure) {
            List<InetSocketAddress> shards = ShardAddresses.parse(TLS_SCHEME, base);
            return new RedisDriver(shards, null, settings, mode, new Tls(caCert, verify),
                    ShardAddresses.describe(TLS_SCHEME, shards) + suffix);
        }
        return new RedisDriver(ShardAddresses.parse("redis", base), null, settings, mode, null, null);
    }

    @Override
    public int shardCount() {
        return shards.size();
    }

    @Override
    public String describe() {
        return description;
    }

    /** {@return the shard addresses, indexed by shard (an unmodifiable list)} */
    public List<InetSocketAddress> shards() {
        return shards;
    }

    /** {@return the settings the driver was opened with} */
    public DriverSettings settings() {
        return settings;
    }

    /** {@return how loop clients reach the shards ({@code ?connection=}; default {@link ConnectionMode#PER_LOOP})} */
    public ConnectionMode connectionMode() {
        return mode;
    }

    /**
     * Completions of per-loop clients that arrived off their loop and had to be handed over (0 if
     * Lettuce delivers every completion on the connection's loop, as designed).
     *
     * @return the count since the driver was opened, over every per-loop client
     */
    public long offLoopCompletions() {
        return offLoopCompletions.sum();
    }

    LongAdder offLoopCounter() {
        return offLoopCompletions;
    }

    /**
     * The hash tag to start a key with so that it lives on shard {@code shard}: {@code ""} for
     * standalone shards, {@code "{t}"} for a {@code redis-cluster://} shard (a tag whose slot the
     * shard's master serves; see {@link RedisClusterShards}). Prefix every key a command sends to
     * shard {@code shard} with it, e.g. {@code driver.keyTag(s) + "user:" + id}, and a multi-key
     * command (MGET, a script) stays a single-slot command on one master.
     *
     * @param shard the shard, {@code 0 .. shardCount()-1}
     * @return the tag, never {@code null}
     * @throws IndexOutOfBoundsException if {@code shard} is out of range
     */
    public String keyTag(int shard) {
        return keyTags[shard];
    }

    RedisURI uri(int shard) {
        return uris[shard];
    }

    /**
     * Lettuce's resources, created on first use: a driver whose clients are all native
     * ({@code connection=native}) never starts Lettuce's threads (its timer would wake ten times a
     * second on the server's cores for nothing).
     */
    ClientResources resources() {
        synchronized (sharedLock) {
            if (resources == null) {
                if (closed) {
                    throw new IllegalStateException("driver closed");
                }
                resources = DefaultClientResources.builder()
                        .commandLatencyRecorder(CommandLatencyRecorder.disabled())
                        .commandLatencyPublisherOptions(DefaultEventPublisherOptions.disabled())
                        .reconnectDelay(() -> Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2,
                                TimeUnit.MILLISECONDS))
                        .build();
            }
            return resources;
        }
    }

    /** Whether Lettuce's resources (and so its threads) exist yet: for tests. */
    boolean lettuceResourcesCreated() {
        synchronized (sharedLock) {
            return resources != null;
        }
    }

    /** Lettuce client options; {@code commandTimeouts}: whether Lettuce itself times commands out. */
    ClientOptions clientOptions(boolean commandTimeouts) {
        return ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .requestQueueSize(settings.maxOutstanding())
                .socketOptions(SocketOptions.builder().connectTimeout(settings.connectTimeout()).tcpNoDelay(true)
                        .keepAlive(true).build())
                .timeoutOptions(commandTimeouts ? TimeoutOptions.enabled(settings.callTimeout()) : TimeoutOptions.create())
                .sslOptions(sslOptions())
                .build();
    }

    private SslOptions sslOptions() {
        SslOptions.Builder b = SslOptions.builder().jdkSslProvider();
        if (tls != null && tls.caCert() != null) {
            b.trustManager(tls.caCert().toFile());
        }
        return b.build();
    }

    /**
     * Opens a client on {@code loop}, which must be an epoll or NIO {@link IoEventLoop}
     * (e.g. a loop of a {@link io.doubleface.loop.LoopGroup}).
     */
    @Override
    public LoopClient<RedisCommand<?>> openOn(EventLoop loop) {
        return io.doubleface.driver.ShardDrivers.narrow(openAny(loop));
    }

    private LoopClient<?> openAny(EventLoop loop) {
        Objects.requireNonNull(loop, "loop");
        requireOpen();
        if (mode == ConnectionMode.NATIVE) {
            PipelinedLoopClient<RedisCommand<?>> n = new PipelinedLoopClient<>(loop, shards, RespProtocol.INSTANCE,
                    settings, Duration.ofMillis(RECONNECT_BACKOFF_MILLIS), description, nativeClients::remove);
            nativeClients.add(n);
            if (closed) {
                nativeClients.remove(n);
                throw new IllegalStateException("redis driver " + description + " is closed");
            }
            return n;
        }
        RedisLoopClient c = mode == ConnectionMode.PER_LOOP
                ? new RedisLoopClient(this, loop, ShardDrivers.socketChannelClass(loop))
                : new RedisLoopClient(this, loop, null);
        loopClients.add(c);
        if (closed) {
            loopClients.remove(c);
            c.close();
            throw new IllegalStateException("redis driver " + description + " is closed");
        }
        return c;
    }

    @Override
    public BlockingClient<RedisCommand<?>> openBlocking() {
        return io.doubleface.driver.ShardDrivers.narrow(openAnyBlocking());
    }

    private BlockingClient<?> openAnyBlocking() {
        requireOpen();
        RedisBlockingClient c = new RedisBlockingClient(this);
        blockingClients.add(c);
        if (closed) {
            blockingClients.remove(c);
            c.close();
            throw new IllegalStateException("redis driver " + description + " is closed");
        }
        return c;
    }

    /**
     * The Redis shards of {@code uri} as a backend of native commands, with the default settings:
     * {@code builder.backend("cache", RedisDriver.of("redis://127.0.0.1:7201-7220"))}. The URI
     * forms and options are those of {@link #open(String, DriverSettings)}.
     *
     * @param uri the shard list, not {@code null}
     * @return the driver of {@link RedisCommand}s; the caller (or the server, see
     *     {@code FanoutServer.Builder#backend}) closes it
     * @throws IllegalArgumentException if {@code uri} is malformed
     * @throws IllegalStateException for {@code redis-cluster://}, if the cluster's masters cannot be found
     */
    public static RedisDriver of(String uri) {
        return of(uri, DriverSettings.DEFAULT);
    }

    /**
     * {@link #of(String)} with {@code settings} (timeouts, outstanding-call bound).
     *
     * @param uri the shard list, not {@code null}
     * @param settings timeouts and outstanding-call bound, not {@code null}
     * @return the driver of {@link RedisCommand}s; the caller (or the server) closes it
     * @throws IllegalArgumentException if {@code uri} is malformed
     * @throws IllegalStateException for {@code redis-cluster://}, if the cluster's masters cannot be found
     */
    public static RedisDriver of(String uri, DriverSettings settings) {
        return open(uri, settings);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("redis driver " + description + " is closed");
        }
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * The shared connection of {@code shard} ({@code connection=shared}), connecting it on first use;
     * after a failed attempt, the same failed future for {@value #RECONNECT_BACKOFF_MILLIS} ms.
     */
    CompletableFuture<StatefulRedisConnection<byte[], byte[]>> sharedConnection(int shard) {
        CompletableFuture<StatefulRedisConnection<byte[], byte[]>> f = shared.get(shard);
        if (f != null && (!f.isCompletedExceptionally() || System.nanoTime() - sharedRetryAt[shard] < 0)) {
            return f;
        }
        synchronized (sharedLock) {
            f = shared.get(shard);
            if (f != null && (!f.isCompletedExceptionally() || System.nanoTime() - sharedRetryAt[shard] < 0)) {
                return f;
            }
            if (closed) {
                return CompletableFuture.failedFuture(new IllegalStateException("driver closed"));
            }
            if (sharedClient == null) {
                sharedClient = RedisClient.create(resources());
                sharedClient.setOptions(clientOptions(true));
            }
            CompletableFuture<StatefulRedisConnection<byte[], byte[]>> nf = sharedClient
                    .connectAsync(ByteArrayCodec.INSTANCE, uris[shard]).toCompletableFuture();
            nf.whenComplete((c, e) -> {
                if (e != null) {
                    synchronized (sharedLock) {
                        sharedRetryAt[shard] = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RECONNECT_BACKOFF_MILLIS);
                    }
                }
            });
            shared.set(shard, nf);
            return nf;
        }
    }

    void closed(RedisLoopClient c) {
        loopClients.remove(c);
    }

    void closed(RedisBlockingClient c) {
        blockingClients.remove(c);
    }

    /**
     * Closes every client this driver opened (loop clients on their loops, waiting up to
     * {@value #CLOSE_WAIT_MILLIS} ms each), the shared connections and the Lettuce resources.
     * Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (RedisBlockingClient c : List.copyOf(blockingClients)) {
            c.close();
        }
        for (RedisLoopClient c : List.copyOf(loopClients)) {
            if (c.loop().inEventLoop()) {
                c.close();
            } else if (ShardDrivers.closeOnLoop(c, Duration.ofMillis(CLOSE_WAIT_MILLIS))) {
                c.awaitShutdown(CLOSE_WAIT_MILLIS);
            } else {
                c.abandon(); // the loop is gone, and its channels with it: release Lettuce's side, do not wait
            }
        }
        loopClients.clear();
        for (PipelinedLoopClient<RedisCommand<?>> c : List.copyOf(nativeClients)) {
            ShardDrivers.closeOnLoop(c, Duration.ofMillis(CLOSE_WAIT_MILLIS));
        }
        nativeClients.clear();
        RedisClient sc;
        DefaultClientResources r;
        synchronized (sharedLock) {
            sc = sharedClient;
            sharedClient = null;
            r = resources;
        }
        if (sc != null) {
            sc.shutdown(0, 2, TimeUnit.SECONDS);
        }
        if (r != null) {
            r.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    @Override
    public String toString() {
        return "RedisDriver[" + description + "]";
    }
}
