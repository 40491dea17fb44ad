package io.doubleface.redis;

import io.doubleface.driver.spi.PipelinedLoopClient;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.DriverClients;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.UriOptions;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ShardAddresses;
import io.doubleface.driver.spi.ShardGroups;
import io.doubleface.driver.spi.ShardDriver;
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
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
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
 * {@code redis://host:port,host:port}), or, for a Redis Cluster ({@code redis-cluster://seed,seed}),
 * the {@code i}-th master of the cluster's slot map — where calls routed by key
 * ({@link #shardFor}) go wherever the cluster keeps the key ({@link RedisClusterLoopClient}:
 * the cluster's own slot map, {@code MOVED}/{@code ASK}, refreshes, fail-overs, replicas). It sends
 * {@link RedisCommand}s, built with {@link Redis}.
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

        /** {@return the URI spelling: {@code per-loop}, {@code shared} or {@code native}} */
        public String label() {
            return UriOptions.label(this);
        }

    }

    /** Where a {@code redis-cluster://} backend sends read-only commands ({@code ?read-from=}). */
    public enum ReadFrom {
        /** Every command to the master owning the slot (the default). */
        MASTER,
        /** Reads to a replica of the slot's master when it has a healthy one, else to the master. */
        REPLICA_PREFERRED,
        /** Reads to a replica of the slot's master only; none healthy fails the call {@code UNAVAILABLE}. */
        REPLICA;

        /** {@return the URI spelling: {@code master}, {@code replica-preferred} or {@code replica}} */
        public String label() {
            return UriOptions.label(this);
        }

    }

    /** Scheme of a Redis Cluster backend: {@value}. */
    public static final String CLUSTER_SCHEME = "redis-cluster";

    /**
     * Scheme of shard lists over TLS: {@value}. Options {@code cacert=PEM} (the certificate
     * authorities to trust; default the JDK's) and {@code verify=full|ca|none} (default {@code full}:
     * chain and host name or IP).
     */
    public static final String TLS_SCHEME = "rediss";

    private final List<InetSocketAddress> shards;
    /** The slot map of a {@code redis-cluster://} backend; {@code null} for standalone shards. */
    private final RedisClusterTopology cluster;
    /**
     * Standalone shards that are replica groups or DNS names ({@code redis://m|r,…},
     * {@code redis://dns:///…}; native connections); {@code null} for a fixed list of single servers.
     */
    private final ShardGroups groups;
    private final ReadFrom readFrom;
    /** The driver's open/closed state and its clients; a client's {@code close()} forgets itself here. */
    final DriverClients clients;
    private final DriverClients.Registry<RedisClusterLoopClient> clusterClients;
    private final DriverClients.Registry<BlockingClient<RedisCommand<?>>> clusterBlocking;
    /** The loop of the cluster's blocking clients, created on first use under {@link #sharedLock}. */
    private io.doubleface.driver.spi.DriverLoops blockingLoop;
    private final DriverSettings settings;
    private final ConnectionMode mode;
    private final Tls tls; // null: plain TCP
    private final String description;
    /** Created on first use ({@link #resources()}), under {@link #sharedLock}. */
    private DefaultClientResources resources;
    private final RedisURI[] uris;
    private final DriverClients.Registry<RedisLoopClient> loopClients;
    private final DriverClients.Registry<PipelinedLoopClient<RedisCommand<?>>> nativeClients;
    private final DriverClients.Registry<RedisBlockingClient> blockingClients;
    private final LongAdder offLoopCompletions = new LongAdder();
    private final Object sharedLock = new Object();
    private RedisClient sharedClient; // guarded by sharedLock
    private final AtomicReferenceArray<CompletableFuture<StatefulRedisConnection<byte[], byte[]>>> shared;
    private final long[] sharedRetryAt; // guarded by sharedLock

    /**
     * A driver of standalone {@code shards} (shard i at index i), per-loop connections. Connects
     * nothing yet: connections are made when clients first use a shard.
     *
     * @param shards the {@code redis-server} addresses, at least one; copied
     * @param settings timeouts and outstanding-call bound, not {@code null}
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     * @throws NullPointerException if {@code settings} is {@code null}
     * @deprecated use {@link #of(List, DriverSettings)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public RedisDriver(List<InetSocketAddress> shards, DriverSettings settings) {
        this(shards, settings, ConnectionMode.PER_LOOP, null, null, null, ReadFrom.MASTER, null);
    }

    /**
     * A driver of standalone {@code shards} (shard i at index i), per-loop connections. Connects
     * nothing yet: connections are made when clients first use a shard.
     *
     * @param shards the {@code redis-server} addresses, at least one; copied
     * @param settings timeouts and outstanding-call bound, not {@code null}
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     * @throws NullPointerException if {@code settings} is {@code null}
     */
    public static RedisDriver of(List<InetSocketAddress> shards, DriverSettings settings) {
        return new RedisDriver(shards, settings, ConnectionMode.PER_LOOP, null, null, null, ReadFrom.MASTER, null);
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
     * @param description for {@link #describe()}, or {@code null} for the {@code redis://} list
     * @param cluster the slot map of a cluster whose masters are {@code shards}, or {@code null}
     * @param groups the replica groups whose first members are {@code shards} (native connections
     *     only), or {@code null}
     */
    RedisDriver(List<InetSocketAddress> shards, DriverSettings settings, ConnectionMode mode, Tls tls,
            String description, RedisClusterTopology cluster, ReadFrom readFrom, ShardGroups groups) {
        if (shards == null || shards.isEmpty()) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: at least one address)");
        }
        this.shards = List.copyOf(shards);
        this.cluster = cluster;
        this.groups = groups;
        this.readFrom = Objects.requireNonNull(readFrom, "readFrom");
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
        this.clients = new DriverClients("redis driver " + this.description);
        this.clusterClients = clients.registry();
        this.clusterBlocking = clients.registry();
        this.loopClients = clients.registry();
        this.nativeClients = clients.registry();
        this.blockingClients = clients.registry();
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
    public static RedisDriver of(String uri, DriverSettings settings) {
        Objects.requireNonNull(uri, "uri");
        UriOptions o = UriOptions.parse("redis shard URI", uri);
        String base = o.base();
        boolean secure = base.startsWith(TLS_SCHEME + "://");
        boolean isCluster = base.startsWith(CLUSTER_SCHEME + "://");
        ConnectionMode mode = isCluster ? ConnectionMode.NATIVE : ConnectionMode.PER_LOOP;
        boolean modeGiven = false;
        boolean grouped = !isCluster && !secure && ShardGroups.isGroupList(base);
        Map<String, String> names = new LinkedHashMap<>();
        ReadFrom readFrom = ReadFrom.MASTER;
        Duration refresh = Duration.ofSeconds(RedisClusterTopology.DEFAULT_REFRESH_SECONDS);
        Duration floor = Duration.ofMillis(RedisClusterTopology.DEFAULT_FLOOR_MILLIS);
        java.nio.file.Path caCert = null;
        SslVerifyMode verify = SslVerifyMode.FULL;
        List<String> kept = new java.util.ArrayList<>();
        for (Map.Entry<String, String> option : o.entries()) {
            String k = option.getKey();
            String v = option.getValue();
            String kv = k + "=" + v;
            switch (k) {
                case "connection" -> {
                    mode = UriOptions.choice(k, v, ConnectionMode.class);
                    modeGiven = true;
                    if (isCluster && mode == ConnectionMode.SHARED) {
                        throw o.error("a Redis Cluster runs on per-loop node connections: connection=native (the default for "
                                + CLUSTER_SCHEME
                                + "://) or connection=per-loop (Lettuce's), not shared");
                    }
                    if (mode != (isCluster ? ConnectionMode.NATIVE : ConnectionMode.PER_LOOP)) {
                        kept.add(kv);
                    }
                }
                case "read-from", "refresh", "refresh-floor" -> {
                    if (!isCluster) {
                        throw o.error(k + " needs " + CLUSTER_SCHEME + "://");
                    }
                    switch (k) {
                        case "read-from" -> readFrom = UriOptions.choice(k, v, ReadFrom.class);
                        case "refresh" -> refresh = duration(o, k, v, false);
                        default -> floor = duration(o, k, v, true);
                    }
                    kept.add(kv);
                }
                case "dns-refresh", "dns-min-ttl", "dns-server" -> {
                    if (!grouped) {
                        throw o.error(k + " is for replica groups and DNS names (redis://dns:///name:port, "
                                + "redis://host:port|host:port)");
                    }
                    names.put(k, v);
                    kept.add(kv);
                }
                case "cacert" -> {
                    if (!secure) {
                        throw o.error("cacert needs " + TLS_SCHEME + "://");
                    }
                    caCert = java.nio.file.Path.of(v);
                    if (!java.nio.file.Files.isReadable(caCert)) {
                        throw o.error("cacert file " + v
                                + " is not readable");
                    }
                    kept.add(kv);
                }
                case "verify" -> {
                    if (!secure) {
                        throw o.error("verify needs " + TLS_SCHEME + "://");
                    }
                    verify = switch (v) {
                        case "full" -> SslVerifyMode.FULL;
                        case "ca" -> SslVerifyMode.CA;
                        case "none" -> SslVerifyMode.NONE;
                        default -> throw o.error("verify=" + v + " (expected: full, ca or none)");
                    };
                    kept.add(kv);
                }
                default -> throw o.unknown(k, "connection=per-loop|shared|native"
                        + (secure ? ", cacert=PEM, verify=full|ca|none"
                        : isCluster ? ", read-from=master|replica-preferred|replica, refresh=DURATION, "
                        + "refresh-floor=DURATION" : "; rediss:// adds cacert=PEM, verify=full|ca|none; "
                        + CLUSTER_SCHEME + ":// adds read-from, refresh, refresh-floor; groups and DNS names add "
                        + "dns-refresh, dns-min-ttl, dns-server"));
            }
        }
        String suffix = kept.isEmpty() ? "" : "?" + String.join("&", kept);
        if (isCluster) {
            List<InetSocketAddress> seeds = ShardAddresses.parse(CLUSTER_SCHEME, base);
            if (mode == ConnectionMode.PER_LOOP && readFrom != ReadFrom.MASTER) {
                throw o.error("read-from=" + readFrom.label()
                        + " needs connection=native (its replica connections start with READONLY)");
            }
            RedisClusterTopology t = RedisClusterTopology.open(seeds, settings.connectTimeout(), refresh, floor);
            List<InetSocketAddress> masters = new java.util.ArrayList<>();
            for (RedisClusterMap.Node n : t.current().masters()) {
                masters.add(n.address());
            }
            return new RedisDriver(masters, settings, mode, null, base + suffix + " ("
                    + masters.size() + " masters at start)", t, readFrom, null);
        }
        if (secure && mode == ConnectionMode.NATIVE) {
            throw o.error("connection=native speaks plain TCP (use connection=per-loop or shared with "
                    + TLS_SCHEME + "://)");
        }
        if (secure) {
            List<InetSocketAddress> shards = ShardAddresses.parse(TLS_SCHEME, base);
            return new RedisDriver(shards, settings, mode, new Tls(caCert, verify),
                    ShardAddresses.describe(TLS_SCHEME, shards) + suffix, null, ReadFrom.MASTER, null);
        }
        if (grouped) {
            if (modeGiven && mode != ConnectionMode.NATIVE) {
                throw o.error("replica groups and DNS names run on native connections (connection=native, "
                        + "their default), not connection=" + mode.label());
            }
            ShardGroups g = ShardGroups.parse("redis", base, names);
            List<InetSocketAddress> first = new java.util.ArrayList<>();
            for (List<InetSocketAddress> members : g.current().members()) {
                first.add(members.get(0));
            }
            return new RedisDriver(first, settings, ConnectionMode.NATIVE, null, g.describe() + suffix, null,
                    ReadFrom.MASTER, g);
        }
        return new RedisDriver(ShardAddresses.parse("redis", base), settings, mode, null, null, null, ReadFrom.MASTER,
                null);
    }

    /** {@code 250ms}, {@code 30s}, {@code 2m}: a positive duration (zero allowed if {@code zeroOk}). */
    private static Duration duration(UriOptions o, String key, String v, boolean zeroOk) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,9})(ms|s|m)").matcher(v);
        if (!m.matches()) {
            throw o.error(key + "=" + v
                    + " (expected: a duration such as 250ms, 30s or 2m)");
        }
        long n = Long.parseLong(m.group(1));
        Duration d = switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            default -> Duration.ofMinutes(n);
        };
        if (d.isZero() && !zeroOk) {
            throw o.error(key + "=" + v + " (expected: > 0)");
        }
        return d;
    }

    @Override
    public int shardCount() {
        return shards.size();
    }

    @Override
    public String describe() {
        return description;
    }

    /**
     * The shard addresses, indexed by shard: the list given, or for a cluster the masters of its
     * current slot map (which may have changed since the driver opened: a fail-over promotes a replica).
     *
     * @return an unmodifiable list
     */
    public List<InetSocketAddress> shards() {
        if (cluster != null) {
            List<InetSocketAddress> now = new java.util.ArrayList<>();
            for (RedisClusterMap.Node n : cluster.current().masters()) {
                now.add(n.address());
            }
            return List.copyOf(now);
        }
        return shards;
    }

    /** {@return whether this is a {@code redis-cluster://} backend (calls routed by key, {@link #shardFor})} */
    public boolean isCluster() {
        return cluster != null;
    }

    /** {@return where a cluster backend sends read-only commands ({@code ?read-from=}; {@link ReadFrom#MASTER} if not a cluster)} */
    public ReadFrom readFrom() {
        return readFrom;
    }

    /**
     * For a {@code redis-cluster://} backend, the shard (master index in the cluster's current slot
     * map, bounded by {@link #shardCount()}) that owns the slot of the command's first key. The call
     * itself is routed again by the loop client when it is sent, so a map that changed between plan
     * and send costs nothing but the accounting.
     *
     * @throws UnsupportedOperationException for standalone shards ({@code redis://}), which are
     *     addressed by index
     * @throws IllegalArgumentException if the command carries no key
     */
    @Override
    public int shardFor(RedisCommand<?> command) {
        if (cluster == null) {
            return ShardDriver.super.shardFor(command);
        }
        RedisCommand.MultiKey multi = command.multiKey();
        int slot = multi != null ? (command.keySlots().length == 0 ? RedisCommand.NO_KEY : command.keySlots()[0])
                : command.slot();
        if (slot < 0) {
            throw new IllegalArgumentException(command.type() + " carries no key to route by: address it by shard "
                    + "(call(backend, shard, …)) or send it to every master (broadcast)");
        }
        RedisClusterMap.Node owner = cluster.current().owner(slot);
        int index = owner == null ? 0 : owner.index();
        return index < 0 ? 0 : Math.min(index, shards.size() - 1);
    }

    /**
     * For a {@code redis-cluster://} backend, the cluster as the driver sees it now:
     * {@code slot_map_version}, {@code served_slots}, {@code refreshes} (and {@code changes},
     * {@code refresh_failures}, {@code refresh_requests}), {@code moved_redirects},
     * {@code ask_redirects}, {@code last_refresh_epoch_ms}, {@code read_from} and the masters with
     * their slot ranges and replicas; empty for standalone shards.
     */
    @Override
    public Map<String, Object> topology() {
        if (groups != null) {
            return groups.topology();
        }
        if (cluster == null) {
            return Map.of();
        }
        RedisClusterMap m = cluster.current();
        RedisClusterTopology.Stats st = cluster.stats();
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("slot_map_version", st.version());
        t.put("served_slots", st.servedSlots());
        t.put("refreshes", st.refreshes());
        t.put("changes", st.changes());
        t.put("refresh_failures", st.failures());
        t.put("refresh_requests", st.refreshRequests());
        t.put("moved_redirects", st.movedRedirects());
        t.put("ask_redirects", st.askRedirects());
        t.put("last_refresh_epoch_ms", st.lastRefreshMillis());
        if (!st.lastError().isEmpty()) {
            t.put("last_refresh_error", st.lastError());
        }
        t.put("read_from", readFrom.label());
        List<Object> masters = new java.util.ArrayList<>();
        for (int i = 0; i < m.masters().size(); i++) {
            Map<String, Object> mm = new LinkedHashMap<>();
            mm.put("address", m.masters().get(i).toString());
            List<Object> ranges = new java.util.ArrayList<>();
            for (int[] r : m.rangesOf(i)) {
                ranges.add(List.of(r[0], r[1]));
            }
            mm.put("slots", ranges);
            List<Object> replicas = new java.util.ArrayList<>();
            for (RedisClusterMap.Node r : m.replicasOf(i)) {
                replicas.add(r.toString());
            }
            mm.put("replicas", replicas);
            masters.add(mm);
        }
        t.put("masters", masters);
        return t;
    }

    /** The cluster's topology (tests). */
    RedisClusterTopology clusterTopology() {
        return cluster;
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
                if (clients.isClosed()) {
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
     * (e.g. a loop of a {@link io.doubleface.internal.loop.LoopGroup}).
     */
    @Override
    public LoopClient<RedisCommand<?>> openOn(EventLoop loop) {
        return io.doubleface.driver.spi.ShardDrivers.narrow(openAny(loop));
    }

    private LoopClient<?> openAny(EventLoop loop) {
        Objects.requireNonNull(loop, "loop");
        clients.requireOpen();
        if (cluster != null) {
            return clusterClients.add(new RedisClusterLoopClient(this, cluster, loop));
        }
        if (mode == ConnectionMode.NATIVE) {
            return nativeClients.add(groups != null
                    ? new PipelinedLoopClient<>(loop, groups, RespProtocol.INSTANCE, settings,
                            Duration.ofMillis(RECONNECT_BACKOFF_MILLIS), description, nativeClients::remove)
                    : new PipelinedLoopClient<>(loop, shards, RespProtocol.INSTANCE, settings,
                            Duration.ofMillis(RECONNECT_BACKOFF_MILLIS), description, nativeClients::remove));
        }
        return loopClients.add(mode == ConnectionMode.PER_LOOP
                ? new RedisLoopClient(this, loop, ShardDrivers.socketChannelClass(loop))
                : new RedisLoopClient(this, loop, null), RedisLoopClient::close);
    }

    @Override
    public BlockingClient<RedisCommand<?>> openBlocking() {
        return io.doubleface.driver.spi.ShardDrivers.narrow(openAnyBlocking());
    }

    private BlockingClient<?> openAnyBlocking() {
        clients.requireOpen();
        if (cluster != null || groups != null) {
            EventLoop loop;
            synchronized (sharedLock) {
                if (blockingLoop == null) {
                    blockingLoop = io.doubleface.driver.spi.DriverLoops.open(cluster != null ? "rcluster-blk" : "rgroups-blk", 1,
                            io.doubleface.driver.Transport.AUTO);
                }
                loop = blockingLoop.loops().get(0);
            }
            LoopClient<RedisCommand<?>> lc = ShardDrivers.narrow(
                    cluster != null ? new RedisClusterLoopClient(this, cluster, loop) : openAny(loop));
            java.util.concurrent.atomic.AtomicReference<BlockingClient<RedisCommand<?>>> self =
                    new java.util.concurrent.atomic.AtomicReference<>();
            BlockingClient<RedisCommand<?>> c = ShardDrivers.blockingOver(lc, () -> clusterBlocking.remove(self.get()));
            self.set(c);
            return clusterBlocking.add(c, BlockingClient::close);
        }
        return blockingClients.add(new RedisBlockingClient(this), RedisBlockingClient::close);
    }

    /**
     * The Redis shards of {@code uri} as a backend of native commands, with the default settings:
     * {@code builder.backend("cache", RedisDriver.of("redis://127.0.0.1:7201-7220"))}. The URI
     * forms and options are those of {@link #of(String, DriverSettings)}.
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
     * {@link #of(String, DriverSettings)}.
     *
     * @param uri the shard list, not {@code null}
     * @param settings timeouts and outstanding-call bound, not {@code null}
     * @return the driver; the caller closes it
     * @deprecated use {@link #of(String, DriverSettings)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static RedisDriver open(String uri, DriverSettings settings) {
        return of(uri, settings);
    }

    boolean isClosed() {
        return clients.isClosed();
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
            if (clients.isClosed()) {
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

    /**
     * Closes every client this driver opened (loop clients on their loops, waiting up to
     * {@value #CLOSE_WAIT_MILLIS} ms each), the shared connections and the Lettuce resources.
     * Idempotent.
     */
    @Override
    public void close() {
        if (!clients.close()) {
            return;
        }
        blockingClients.closeAll(RedisBlockingClient::close);
        loopClients.closeAll(c -> {
            if (c.loop().inEventLoop()) {
                c.close();
            } else if (ShardDrivers.closeOnLoop(c, Duration.ofMillis(CLOSE_WAIT_MILLIS))) {
                c.awaitShutdown(CLOSE_WAIT_MILLIS);
            } else {
                c.abandon(); // the loop is gone, and its channels with it: release Lettuce's side, do not wait
            }
        });
        clusterBlocking.closeAll(BlockingClient::close);
        DriverClients.closeOnLoops(clusterClients, Duration.ofMillis(CLOSE_WAIT_MILLIS));
        io.doubleface.driver.spi.DriverLoops bl;
        synchronized (sharedLock) {
            bl = blockingLoop;
            blockingLoop = null;
        }
        if (bl != null) {
            bl.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (groups != null) {
            groups.close();
        }
        DriverClients.closeOnLoops(nativeClients, Duration.ofMillis(CLOSE_WAIT_MILLIS));
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
