package io.doubleface.grpc;

import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.DriverClients;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.UriOptions;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ShardAddresses;
import io.doubleface.driver.spi.ShardGroups;
import io.doubleface.driver.spi.ShardDriver;
import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.handler.ssl.SslContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoop;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandle;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver of gRPC leaves, on grpc-java's Netty transport running on <em>our</em> event loops:
 * it sends unary calls of your own services' methods ({@link GrpcCall}, any
 * {@code MethodDescriptor}), e.g. {@code builder.backend("leaves", GrpcDriver.of("grpc://h:9001-9004"))}.
 *
 * <ul>
 *   <li>{@link #openOn(EventLoop)} gives a {@link LoopClient} with one {@link ManagedChannel} per
 *       shard built with {@code NettyChannelBuilder.eventLoopGroup(loop)} (the channel type matching
 *       the loop's transport, epoll or NIO) and {@code directExecutor()}: the HTTP/2 connection is
 *       registered on that loop, and every call callback, deadline timer and reconnect runs there.
 *       DoubleFace opens one per shared I/O loop, Type-2a/2b one per backend loop;
 *   <li>{@link #openBlocking()} gives a {@link BlockingClient} of blocking calls over one channel
 *       per shard on a small loop group of its own ({@value #BLOCKING_LOOP_GROUP_NAME}), for the
 *       thread-per-request and Type-1 models.
 * </ul>
 *
 * <p>Off-loop hops: grpc-java may deliver a callback on a thread other than the client's loop
 * (it does not on the paths we know of, see {@code docs/grpc.md}); the loop client then hops onto
 * its loop and counts the hop in {@link #offLoopHops()}.
 *
 * <p>Threading: the factories, {@link #openOn}, {@link #openBlocking} and {@link #close} are
 * thread-safe. The driver closes every client it opened in {@link #close()}; it never shuts down
 * an event loop it was given.
 */
public final class GrpcDriver implements ShardDriver<GrpcCall<?, ?>> {

    private static final Logger log = LoggerFactory.getLogger(GrpcDriver.class);

    /** URI scheme of shard lists, without {@code ://} (as {@code MongoDriver.SCHEME}): {@value}. */
    public static final String SCHEME = "grpc";

    /** Name of the blocking client's loop group: {@value}. */
    public static final String BLOCKING_LOOP_GROUP_NAME = "grpc-blk";

    /**
     * After a call failed with {@code UNAVAILABLE}, gRPC waits with exponential backoff (1 s up to
     * 2 min) before it reconnects; a send to a shard in that state resets the backoff at most once
     * per {@value} ms, so a shard that returns is used again within about that long while a dead
     * one is not hammered with connection attempts.
     */
    public static final long RECONNECT_BACKOFF_MILLIS = 100;

    /** Longest {@link #close()} waits for each loop client to close on its loop: {@value} ms. */
    static final long CLOSE_WAIT_MILLIS = 5_000;

    /**
     * Scheme of shard lists over TLS: {@value}; option {@code cacert=PEM} (the certificate
     * authorities to trust; default the JDK's). The leaf's certificate must name the address the
     * URI gives (a SAN IP for {@code 127.0.0.1}).
     */
    public static final String TLS_SCHEME = "grpcs";

    private final List<InetSocketAddress> shards;
    /** The shards as replica groups (DNS names, a file, {@code a|b} lists); {@code null} for a fixed list. */
    private final ShardGroups groups;
    private final DriverSettings settings;
    private final SslContext ssl; // null: plaintext
    private final String description;
    /** The driver's open/closed state and its clients; a client's {@code close()} forgets itself here. */
    final DriverClients clients;
    private final DriverClients.Registry<GrpcLoopClient> loopClients;
    private final DriverClients.Registry<GrpcBlockingClient> blockingClients;
    private final LongAdder offLoopHops = new LongAdder();

    /**
     * A driver of {@code shards} (shard i at index i).
     *
     * @param shards the leaf addresses, at least one
     * @param settings timeouts and the outstanding-call bound
     * @deprecated use {@link #of(List, DriverSettings)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public GrpcDriver(List<InetSocketAddress> shards, DriverSettings settings) {
        this(shards, settings, null, null, null);
    }

    /** The one constructor: {@code ssl} {@code null} for plaintext, {@code groups} for a fixed list. */
    private GrpcDriver(List<InetSocketAddress> shards, DriverSettings settings, SslContext ssl, String description,
            ShardGroups groups) {
        if (shards == null || shards.isEmpty()) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: at least one address)");
        }
        for (InetSocketAddress a : shards) {
            Objects.requireNonNull(a, "shard address");
        }
        this.shards = List.copyOf(shards);
        this.settings = Objects.requireNonNull(settings, "settings");
        this.ssl = ssl;
        this.groups = groups;
        this.description = description != null ? description : describe(this.shards);
        this.clients = new DriverClients("grpc driver " + this.description);
        this.loopClients = clients.registry();
        this.blockingClients = clients.registry();
    }

    /**
     * A driver of the leaves {@code shards} (shard i at index i). Connects nothing yet.
     *
     * @param shards the leaf addresses, at least one
     * @param settings timeouts and the outstanding-call bound
     * @return a driver of {@link GrpcCall}s; the caller closes it
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     */
    public static GrpcDriver of(List<InetSocketAddress> shards, DriverSettings settings) {
        return new GrpcDriver(shards, settings, null, null, null);
    }

    /**
     * The gRPC leaves of {@code uri} as a backend of unary calls of your own service, with the
     * default settings: {@code builder.backend("leaves", GrpcDriver.of("grpc://127.0.0.1:9001-9004"))}.
     *
     * @param uri the shard list, {@code grpc://host:first-last} or {@code grpc://host:port,host:port,...}
     * @return a driver of {@link GrpcCall}s
     * @throws IllegalArgumentException if {@code uri} is not a shard list ({@link #parse})
     */
    public static GrpcDriver of(String uri) {
        return of(uri, DriverSettings.DEFAULT);
    }

    /**
     * {@link #of(String)} with {@code settings} (call timeout, connect timeout, outstanding-call bound).
     *
     * @param uri the shard list
     * @param settings the driver settings
     * @return a driver of {@link GrpcCall}s
     */
    public static GrpcDriver of(String uri, DriverSettings settings) {
        Objects.requireNonNull(uri, "uri");
        if (uri.startsWith("grpc://") && ShardGroups.isGroupList(uri)) {
            ShardGroups g = ShardGroups.open("grpc", uri);
            List<InetSocketAddress> first = new java.util.ArrayList<>();
            for (List<InetSocketAddress> m : g.current().members()) {
                first.add(m.get(0));
            }
            return new GrpcDriver(first, settings, null, g.describe(), g);
        }
        if (!uri.startsWith(TLS_SCHEME + "://")) {
            return of(parse(uri), settings);
        }
        UriOptions o = UriOptions.parse("grpc shard URI", uri).requireKnown(Set.of("cacert"), "cacert=PEM");
        List<InetSocketAddress> shards = ShardAddresses.parse(TLS_SCHEME, o.base());
        java.io.File caCert = null;
        if (o.get("cacert") != null) {
            caCert = new java.io.File(o.get("cacert"));
            if (!caCert.canRead()) {
                throw o.error("cacert file " + caCert + " is not readable");
            }
        }
        SslContext ssl;
        try {
            ssl = caCert == null ? GrpcSslContexts.forClient().build()
                    : GrpcSslContexts.forClient().trustManager(caCert).build();
        } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("grpc shard URI '" + uri + "': " + e.getMessage(), e);
        }
        return new GrpcDriver(shards, settings, ssl, ShardAddresses.describe(TLS_SCHEME, shards)
                + uri.substring(o.base().length()), null);
    }

    /**
     * Reads a shard list: {@code grpc://host:first-last} (a port range) or
     * {@code grpc://host:port,host:port,...} ({@link ShardAddresses#parse}).
     *
     * @param uri the shard list
     * @return the addresses, shard i at index i
     * @throws IllegalArgumentException if {@code uri} is not such a list
     */
    public static List<InetSocketAddress> parse(String uri) {
        return ShardAddresses.parse("grpc", uri);
    }

    /** The compact shard list of {@code shards}. */
    static String describe(List<InetSocketAddress> shards) {
        return ShardAddresses.describe("grpc", shards);
    }

    @Override
    public int shardCount() {
        return shards.size();
    }

    @Override
    public String describe() {
        return description;
    }

    /** For replica groups, their members now and the resolutions counted ({@link ShardGroups#topology()}); else empty. */
    @Override
    public java.util.Map<String, Object> topology() {
        return groups == null ? java.util.Map.of() : groups.topology();
    }

    /** {@return the shard addresses, indexed by shard} */
    public List<InetSocketAddress> shards() {
        return shards;
    }

    /** {@return the settings this driver was built with} */
    public DriverSettings settings() {
        return settings;
    }

    /** {@return the callbacks that grpc-java delivered off the client's loop and that were handed to it} */
    public long offLoopHops() {
        return offLoopHops.sum();
    }

    void countOffLoopHop() {
        offLoopHops.increment();
    }

    /** {@return where {@code shard} is, for messages: its address, or its group} */
    String where(int shard) {
        if (groups != null) {
            return "shard-" + shard + " of " + groups.describe();
        }
        InetSocketAddress a = shards.get(shard);
        return a.getHostString() + ":" + a.getPort();
    }

    /**
     * A channel to {@code shard} whose connection lives on {@code group} (one loop, or a group whose
     * {@code next()} picks one), callbacks run on the transport thread ({@code directExecutor}).
     */
    ManagedChannel newChannel(int shard, EventLoopGroup group, Class<? extends SocketChannel> channelType) {
        NettyChannelBuilder b;
        if (groups != null) {
            // the shard's members from the groups, balanced round-robin by grpc-java (GroupNameResolver)
            b = NettyChannelBuilder.forTarget(GroupNameResolver.SCHEME + ":///shard-" + shard)
                    .nameResolverFactory(new GroupNameResolver.Factory(groups, shard))
                    .defaultLoadBalancingPolicy("round_robin");
        } else {
            b = NettyChannelBuilder.forAddress(shards.get(shard));
        }
        if (ssl != null) {
            b.sslContext(ssl);
        } else {
            b.usePlaintext();
        }
        return b.eventLoopGroup(group)
                .channelType(channelType, InetSocketAddress.class)
                .directExecutor()
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        (int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis()))
                .withOption(ChannelOption.TCP_NODELAY, true)
                .build();
    }

    /**
     * Opens a client on {@code loop}, which must be an epoll or NIO {@link IoEventLoop} (e.g. a loop
     * of a {@link io.doubleface.internal.loop.LoopGroup}).
     */
    @Override
    public LoopClient<GrpcCall<?, ?>> openOn(EventLoop loop) {
        return io.doubleface.driver.spi.ShardDrivers.narrow(openAny(loop));
    }

    private LoopClient<?> openAny(EventLoop loop) {
        Objects.requireNonNull(loop, "loop");
        clients.requireOpen();
        return loopClients.add(new GrpcLoopClient(this, loop, ShardDrivers.socketChannelClass(loop)));
    }

    @Override
    public BlockingClient<GrpcCall<?, ?>> openBlocking() {
        return io.doubleface.driver.spi.ShardDrivers.narrow(openAnyBlocking());
    }

    private BlockingClient<?> openAnyBlocking() {
        clients.requireOpen();
        return blockingClients.add(new GrpcBlockingClient(this), GrpcBlockingClient::close);
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
        blockingClients.closeAll(GrpcBlockingClient::close);
        DriverClients.closeOnLoops(loopClients, Duration.ofMillis(CLOSE_WAIT_MILLIS));
        if (groups != null) {
            groups.close();
        }
    }

    @Override
    public String toString() {
        return "GrpcDriver[" + description + "]";
    }
}
