package io.doubleface.server;

import io.doubleface.api.Internal;
import io.doubleface.driver.Transport;
import io.doubleface.api.Backend;
import io.doubleface.api.ErrorEncoder;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.driver.Command;
import io.doubleface.driver.FlushMode;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.ModelContext;
import io.doubleface.model.Configuration;
import io.doubleface.sched.ReplyOrder;
import io.doubleface.server.internal.FrontendLoopGroup;
import io.doubleface.server.internal.GrpcFanoutHandler;
import io.doubleface.server.internal.GrpcListener;
import io.doubleface.server.internal.NettyDefaults;
import io.doubleface.server.internal.ServerConfig;
import io.doubleface.server.internal.ServerRuntime;
import io.doubleface.tune.LoadAdapter;
import io.doubleface.tune.TuneSettings;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http.HttpMethod;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

// Why this file is longer than 600 lines: FanoutServer.Builder is public API under that name
// (docs/api.md, examples/), so it stays nested here, and most of its length is its Javadoc, the
// reference of every option. Everything else lives in io.doubleface.server.internal: the options
// are stored and checked in ServerConfig.Builder (build() gives the immutable ServerConfig), the
// running server is ServerRuntime (loops, engine, adapter, drain, close), its listeners are
// HttpListener, GrpcListener and AdminListener, its run-time knobs ServerKnobs and its counters
// the ServerStats snapshot. What is left here is the API: each method documents and delegates.

/**
 * A running mid-tier: named backends, HTTP routes (HTTP/1.1 and HTTP/2), optionally gRPC methods
 * ({@link Builder#grpc}), and an admin listener, around one {@link FanoutEngine}.
 *
 * <pre>{@code
 * FanoutServer.Builder b = FanoutServer.builder().port(8080).adminPort(9090);
 * Backend<RedisCommand<?>> cache = b.backend("cache", RedisDriver.of("redis://127.0.0.1:7201-7220"));
 * Backend<MongoCommand<?>> posts = b.backend("posts", MongoDriver.of("mongodb://127.0.0.1:7301-7304"));
 * TimelineService timeline = new TimelineService(cache, posts);
 * b.route(HttpMethod.GET, "/users/{user}/timeline", timeline, new TimelineBinding());
 * try (FanoutServer server = b.configuration("doubleface").start()) {
 *     server.switchTo("type2a-1f2b");   // or PUT /admin/config?name=type2a-1f2b
 *     ...
 * }
 * }</pre>
 *
 * <p>Loops: the I/O loops ({@code io-0 … io-(n-1)}) carry the upstream connections and, under
 * DoubleFace, the downstream ones. Each accepted connection is registered on a frontend loop of
 * the configuration active at accept time and stays there; requests on it use the configuration
 * active when they arrive. The gRPC upstream (grpc-java's {@link NettyServerBuilder}) runs on the
 * same I/O loops: its accepted connections are placed on the active frontends the same way
 * ({@link FrontendLoopGroup}), and its calls are admitted by the same engine on the connection's
 * loop ({@code directExecutor}, see {@link GrpcFanoutHandler}). The admin listener has its own loop ({@code admin-0}), so scraping
 * stats never shows up in the measured loops' counters.
 *
 * <p>Ownership: the server owns its loops; it closes a backend's driver on {@link #close()} unless
 * the builder was told not to ({@link Builder#backend(String, ShardDriver, boolean)}).
 *
 * <p>Threading: thread-safe.
 */
public final class FanoutServer implements AutoCloseable {

    static {
        NettyDefaults.apply(); // before Netty's allocator reads its settings (NettyDefaults)
    }

    /** Most concurrent calls on one gRPC upstream connection (HTTP/2 streams): {@value}. */
    public static final int GRPC_MAX_CONCURRENT_CALLS = GrpcListener.MAX_CONCURRENT_CALLS;

    /** Default per-request deadline: {@value} ms. */
    public static final long DEFAULT_DEADLINE_MS = ServerConfig.DEFAULT_DEADLINE_MS;

    /** Default {@link Builder#http2MaxConcurrentStreams}: {@value}. */
    public static final int DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS = ServerConfig.DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS;

    /** Default most open upstream HTTP connections: {@value}. */
    public static final int DEFAULT_MAX_CONNECTIONS = ServerConfig.DEFAULT_MAX_CONNECTIONS;

    /** Default {@link Builder#maxQueuedBytesTotal}: {@value} bytes (256 MiB). */
    public static final long DEFAULT_MAX_QUEUED_BYTES_TOTAL = ServerConfig.DEFAULT_MAX_QUEUED_BYTES_TOTAL;

    private final ServerRuntime runtime;

    private FanoutServer(ServerRuntime runtime) {
        this.runtime = runtime;
    }

    /**
     * Starts building a server: add backends, then routes or gRPC methods, then {@link Builder#start()}.
     *
     * @return a new builder, with every option at its default
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the bound HTTP upstream port, or -1 without HTTP routes} */
    public int port() {
        return runtime.port();
    }

    /** {@return the server's backends, in the order they were added (an unmodifiable list)} */
    public List<Backend<?>> backends() {
        return runtime.config().backends();
    }

    /** {@return the bound gRPC upstream port, or -1 without a gRPC upstream} */
    public int grpcPort() {
        return runtime.grpcPort();
    }

    /** {@return the bound admin port, or -1 if the admin listener is off} */
    public int adminPort() {
        InetSocketAddress a = runtime.adminAddress();
        return a == null ? -1 : a.getPort();
    }

    /** {@return the admin listener's bound address, or {@code null} if it is off} */
    public InetSocketAddress adminAddress() {
        return runtime.adminAddress();
    }

    /**
     * Traces the stages of one request in {@code oneIn} from now on (0 = off, 1 = all); see
     * {@link Builder#traceStages}. Figures gathered so far are kept. Over the admin listener:
     * {@code PUT /admin/knobs?trace-stages=off|all|sampled:N}.
     *
     * @param oneIn trace one request in this many; 0 = off
     * @throws IllegalArgumentException if {@code oneIn < 0}
     */
    public void traceStages(int oneIn) {
        runtime.knobs().traceStages(oneIn);
    }

    /**
     * Forgets the stage figures gathered so far, so that {@code /admin/stats} and the {@code /metrics}
     * stage summaries cover only what is traced from now on — one window (docs/tracing.md). A
     * request being recorded at this moment may count in some stages' old figures and others' new
     * ones. Does not stall a warm server (the histograms are emptied in place). Over the admin
     * listener: {@code PUT /admin/knobs?reset-stages=true}.
     */
    public void resetStages() {
        runtime.knobs().resetStages();
    }

    /**
     * Sets the downstream flush mode of every loop of this server from now on (see
     * {@link Builder#flushMode}); calls waiting in a batch are flushed by its timer, so none is
     * stranded by the switch.
     *
     * @param policy the policy, not {@code null}
     */
    public void flushMode(FlushMode policy) {
        runtime.knobs().flushMode(policy);
    }

    /** {@return the downstream flush mode of this server's loops} */
    public FlushMode flushMode() {
        return runtime.knobs().flushMode();
    }

    /**
     * Pins the I/O loops (and the loops a configuration adds: Type-2a backend loops, Type-2b reactors)
     * to CPUs, or unpins them: loop {@code i} of each group to {@code cpus.get(i % cpus.size())} (see
     * {@link Builder#pinIoThreads}). Returns when every loop has pinned itself.
     *
     * @param cpus the CPUs, or {@code null} to unpin
     * @throws IllegalArgumentException if the kernel refuses a CPU
     * @throws UnsupportedOperationException if this is not Linux
     */
    public void pinIoThreads(List<Integer> cpus) {
        runtime.knobs().pinIoThreads(cpus);
    }

    /** {@return the CPUs the loops are pinned to, or {@code null} if they are not} */
    public List<Integer> pinnedCpus() {
        return runtime.knobs().pinnedCpus();
    }

    /**
     * Switches the active configuration (see {@link FanoutEngine#switchTo}). Requests admitted from now
     * on use it; requests in flight finish under theirs. Parses the name and goes on as
     * {@link #switchTo(Configuration)}.
     *
     * @param configuration a configuration name, e.g. {@code type2a-1f2b}; see
     *     {@link io.doubleface.model.Configuration}
     * @return the canonical name of the now active configuration
     * @throws IllegalArgumentException if the name is invalid or does not fit this server
     */
    public String switchTo(String configuration) {
        return switchTo(Configuration.parse(configuration));
    }

    /**
     * Switches the active configuration, given as a typed value (e.g.
     * {@code new Configuration.Type2a(1, 2, 0, false, null)}); otherwise as {@link #switchTo(String)}.
     *
     * A configuration running the same threads as the active one under another name (a μTune name
     * and its plain twin, e.g. {@code sdb-1n-8w} and {@code thread-1f-8}) is no switch: the model
     * stays and {@link #configuration()} reports the name given here.
     *
     * @param configuration the configuration, not {@code null}
     * @return the canonical name of the now active configuration
     * @throws IllegalArgumentException if it does not fit this server (e.g. more frontend loops than
     *     I/O loops)
     */
    public String switchTo(Configuration configuration) {
        return runtime.knobs().switchTo(Objects.requireNonNull(configuration, "configuration")).name();
    }

    /**
     * {@return whether the server is ready for traffic: every backend's clients of the active
     * configuration have connected to every shard on every loop (warm start, see
     * {@link io.doubleface.driver.spi.LoopClient#connect()}), and no drain has started. What the admin
     * listener's {@code /ready} answers}
     *
     * <p>Readiness covers the first connections: once connected, a shard lost later does not make
     * the server unready (the drivers reconnect on use, and one shard's outage must not take the
     * whole mid-tier out of rotation); only a drain does.
     */
    public boolean isReady() {
        return runtime.isReady();
    }

    /**
     * Waits until the server is ready ({@link #isReady()}): every client of the active
     * configuration connected to every shard. The clients start connecting when the server starts
     * (and when a configuration is prepared or switched to); this only waits for them.
     *
     * @param timeout how long to wait, not {@code null}
     * @throws TimeoutException if not ready in time; its message names every backend and loop
     *     still connecting, with the shard, address and cause of the last failed attempt
     * @throws IllegalStateException if the server is draining or closed
     * @throws InterruptedException if the calling thread is interrupted while waiting
     */
    public void awaitReady(Duration timeout) throws InterruptedException, TimeoutException {
        runtime.awaitReady(timeout);
    }

    /** {@return the configuration requests admitted now run under} */
    public Configuration configuration() {
        return runtime.knobs().configuration();
    }

    /** {@return how many I/O loops the server runs (the builder's {@link Builder#ioThreads})} */
    public int ioThreads() {
        return runtime.ioLoops().size();
    }

    /**
     * {@return the transport the I/O loops use: {@link Transport#EPOLL} or
     * {@link Transport#NIO}, never {@code AUTO} (what {@code AUTO} chose)}
     */
    public Transport transport() {
        return runtime.ioLoops().isEpoll() ? Transport.EPOLL : Transport.NIO;
    }

    /**
     * {@return the {@code /admin/stats} document (JSON): the server's counters, serialised from one
     * snapshot of them — the same document the admin listener serves}
     */
    public String statsJson() {
        return runtime.stats().toJson();
    }

    /**
     * <b>Not API</b> (docs/api.md, "Stability"): the running server's parts — engine, load adapter,
     * loops, run-time knobs, typed stats snapshot, configuration — for doubleface's own tools and
     * tests. The one public method of this class that names an internal type; like Netty's
     * {@code Channel.unsafe()}, what it returns may change in any version, even a patch.
     *
     * @return the server's runtime
     */
    @Internal
    public ServerRuntime internals() {
        return runtime;
    }

    /**
     * Stops gracefully: {@link #stop(Duration, Duration)} with no delay.
     *
     * @param grace how long requests in flight may take to finish, not {@code null}; zero or negative
     *     closes at once
     */
    public void stop(Duration grace) {
        stop(Duration.ZERO, grace);
    }

    /**
     * Stops gracefully. At once the admin listener's {@code /ready} answers {@code 503} and every
     * answer carries {@code Connection: close}; for {@code delay} the server still accepts and
     * serves, so a balancer or Kubernetes that polls {@code /ready} takes it out of rotation before
     * any connection is refused. Then it stops accepting (HTTP listener closed, gRPC {@code GOAWAY}),
     * the load adapter stops switching, idle connections close, a request still arriving on an open
     * connection is served and its answer closes the connection, and the requests in flight finish
     * — each connection closes after its last answer — for up to {@code grace}; then
     * {@link #close()}. Returns when closed. Idempotent; {@code close()} alone drops what is in
     * flight.
     *
     * @param delay how long to keep accepting after {@code /ready} turned {@code 503}, not
     *     {@code null}; zero or negative: none
     * @param grace how long requests in flight may take to finish once the listener is closed, not
     *     {@code null}; zero or negative closes at once
     */
    public void stop(Duration delay, Duration grace) {
        runtime.stop(delay, grace);
    }

    /**
     * Stops listening, closes models, connections and loops; closes the drivers it owns. Requests in
     * flight are dropped (their clients see the connection close): {@link #stop(Duration)} lets
     * them finish first.
     */
    @Override
    public void close() {
        runtime.close();
    }

    /** Server options; every one has a documented default. Not thread-safe. */
    public static final class Builder {
        /** Every option, stored and checked as it is set; {@link #build()} takes the immutable copy. */
        private final ServerConfig.Builder options =
                new ServerConfig.Builder(HttpLimits.DEFAULTS.connectionLimits(), HttpLimits.DEFAULTS.idleTimeout());

        private Builder() {}

        /**
         * Adds a backend: {@code driver} over its own shard list, under {@code name}. The server
         * closes the driver when it stops.
         *
         * @param <C> the driver's command type: the commands the backend accepts
         * @param name unique among this server's backends; used in logs, stats and failure messages
         * @param driver the driver, not {@code null}
         * @return the handle services pass to {@link io.doubleface.api.FanoutPlan#call}
         * @throws IllegalArgumentException if the name is empty or taken
         */
        public <C extends Command<?>> Backend<C> backend(String name, ShardDriver<C> driver) {
            return backend(name, driver, true);
        }

        /**
         * Adds a backend, as {@link #backend(String, ShardDriver)}; {@code closeOnStop}: whether the
         * server closes the driver when it stops (pass {@code false} to share one driver).
         *
         * @param <C> the driver's command type: the commands the backend accepts
         * @param name unique among this server's backends; used in logs, stats and failure messages
         * @param driver the driver, not {@code null}
         * @param closeOnStop whether the server closes {@code driver} when it stops
         * @return the handle services pass to {@link io.doubleface.api.FanoutPlan#call}
         * @throws IllegalArgumentException if the name is empty or taken
         */
        public <C extends Command<?>> Backend<C> backend(String name, ShardDriver<C> driver, boolean closeOnStop) {
            return options.backend(name, driver, closeOnStop, this);
        }

        /**
         * Serves {@code service} on HTTP {@code method} and {@code pattern}: literal segments and
         * whole-segment variables, e.g. {@code /users/{user}/timeline} (read them with
         * {@link io.doubleface.api.HttpRequestView#pathParam}). A path no route matches gets
         * {@code 404}; a path matched only with other methods, {@code 405} with {@code Allow}.
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param method the HTTP method
         * @param pattern the path pattern, starting with {@code /}; no empty segments, each variable
         *     named once
         * @param service the service that runs the route's requests
         * @param binding decodes the route's requests and encodes their responses
         * @return this builder
         * @throws IllegalArgumentException for a malformed pattern, a route added twice, or
         *     {@code HEAD}, {@code CONNECT} or {@code TRACE} (answers to them follow rules of
         *     their own that a fanout route has no use for)
         */
        public <Q, R> Builder route(HttpMethod method, String pattern, FanoutService<Q, ?, R> service,
                HttpBinding<Q, R> binding) {
            options.route(method, pattern, service, binding);
            return this;
        }

        /**
         * {@link #route} with {@code GET}.
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param pattern the path pattern, as for {@link #route}
         * @param service the service that runs the route's requests
         * @param binding decodes the route's requests and encodes their responses
         * @return this builder
         * @throws IllegalArgumentException for a malformed pattern or a route added twice
         */
        public <Q, R> Builder get(String pattern, FanoutService<Q, ?, R> service, HttpBinding<Q, R> binding) {
            return route(HttpMethod.GET, pattern, service, binding);
        }

        /**
         * {@link #route} with {@code POST}.
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param pattern the path pattern, as for {@link #route}
         * @param service the service that runs the route's requests
         * @param binding decodes the route's requests and encodes their responses
         * @return this builder
         * @throws IllegalArgumentException for a malformed pattern or a route added twice
         */
        public <Q, R> Builder post(String pattern, FanoutService<Q, ?, R> service, HttpBinding<Q, R> binding) {
            return route(HttpMethod.POST, pattern, service, binding);
        }

        /**
         * Sets the address to listen on, for HTTP and gRPC; default {@code 127.0.0.1}.
         *
         * @param host a host name or IP address, not {@code null}; e.g. {@code 0.0.0.0} for every interface
         * @return this builder
         */
        public Builder host(String host) {
            options.host(host);
            return this;
        }

        /**
         * Sets the HTTP upstream port; default 8080.
         *
         * @param port {@code 0 .. 65535}; 0 = any free port (read it with {@link FanoutServer#port()})
         * @return this builder
         * @throws IllegalArgumentException if {@code port} is out of range
         */
        public Builder port(int port) {
            options.port(port);
            return this;
        }

        /**
         * Starts a gRPC upstream on {@code port} (0 = any free port) serving the methods added with
         * {@link #grpcMethod}, on the same I/O loops and through the same engine as HTTP (default: no
         * gRPC upstream). Request messages are limited by {@link HttpLimits#maxBodySize()}, headers
         * by {@link HttpLimits#maxHeaderSize()}, idle connections by {@link HttpLimits#idleTimeout()}.
         *
         * @param port {@code 0 .. 65535}; 0 = any free port (read it with {@link FanoutServer#grpcPort()})
         * @return this builder
         * @throws IllegalArgumentException if {@code port} is out of range
         */
        public Builder grpc(int port) {
            options.grpcPort(port);
            return this;
        }

        /**
         * {@link #grpc(int)} and {@link #grpcMethod} in one call.
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param port the gRPC port, {@code 0 .. 65535}; 0 = any free port
         * @param service the service that runs the method's calls
         * @param binding the unary method, and how to decode its requests and encode its replies
         * @return this builder
         * @throws IllegalArgumentException if the port is out of range, or the method is not unary or
         *     was added already
         */
        public <Q, R> Builder grpc(int port, FanoutService<Q, ?, R> service, GrpcBinding<Q, R, ?, ?> binding) {
            return grpc(port).grpcMethod(service, binding);
        }

        /**
         * Serves {@code service} on the unary gRPC method of {@code binding} (methods of several
         * services of the user's {@code .proto} files may be added; each method once).
         *
         * @param <Q> the decoded request
         * @param <R> the response
         * @param service the service that runs the method's calls
         * @param binding the unary method, and how to decode its requests and encode its replies
         * @return this builder
         * @throws IllegalArgumentException if the method is not unary or was added already
         */
        public <Q, R> Builder grpcMethod(FanoutService<Q, ?, R> service, GrpcBinding<Q, R, ?, ?> binding) {
            options.grpcMethod(service, binding);
            return this;
        }

        /**
         * Address of the admin listener (default {@code 127.0.0.1}, whatever {@link #host} says). Any
         * other than a loopback address needs an {@link #adminToken}, which every admin request must
         * then carry.
         *
         * @param host a host name or IP address, not {@code null}
         * @return this builder
         */
        public Builder adminHost(String host) {
            options.adminHost(host);
            return this;
        }

        /**
         * Serves HTTP, gRPC and the admin listener over TLS with this certificate chain and private
         * key (PEM files; the key PKCS#8, unencrypted). OpenSSL (BoringSSL) is used when
         * {@code io.netty:netty-tcnative-boringssl-static} is on the class path, the JDK's TLS
         * otherwise; ALPN offers {@code h2} and {@code http/1.1} (HTTP; {@code http/1.1} alone with
         * {@link #http2} off or on the admin listener) and {@code h2} (gRPC). The handshake must
         * finish within Netty's default 10 s. Default: plain text. The files are read when the
         * server starts: a missing or malformed file fails {@link #start()} with the file named.
         *
         * @param certificateChainPem the server certificate first, then its intermediates
         * @param privateKeyPem the certificate's private key
         * @return this builder
         */
        public Builder tls(Path certificateChainPem, Path privateKeyPem) {
            options.tls(certificateChainPem, privateKeyPem);
            return this;
        }

        /**
         * Serves HTTP/2 on the HTTP port next to HTTP/1.1 (default: on): in plain text a connection
         * that starts with the HTTP/2 client preface (prior knowledge, {@code curl
         * --http2-prior-knowledge}) or whose first request asks for {@code Upgrade: h2c} (a request
         * with a body is answered over HTTP/1.1 instead); with {@link #tls} a connection whose client
         * chose {@code h2} by ALPN. The same routes, limits ({@link HttpLimits}) and error answers
         * ({@link #errorEncoder}) as HTTP/1.1; each stream runs on its connection's loop. See
         * docs/http2.md.
         *
         * @param on {@code false} for HTTP/1.1 only (ALPN then offers {@code http/1.1} alone)
         * @return this builder
         */
        public Builder http2(boolean on) {
            options.http2(on);
            return this;
        }

        /**
         * Most streams a client may have open at once on one HTTP/2 connection ({@code
         * SETTINGS_MAX_CONCURRENT_STREAMS}); default {@value FanoutServer#DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS}.
         * It plays the part {@link HttpLimits#maxPipelined()} plays for HTTP/1.1.
         *
         * @param n streams, {@code 1 .. 2^31-1}
         * @return this builder
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Builder http2MaxConcurrentStreams(int n) {
            options.http2MaxConcurrentStreams(n);
            return this;
        }

        /**
         * The admin credential: with it, {@code PUT /admin/config} (and every admin request when the
         * listener is not on loopback) needs {@code Authorization: Bearer <token>}, else {@code 401}.
         * At least 16 characters. Default: none (loopback only; state changes by local {@code PUT}).
         *
         * @param token the token, at least 16 characters after stripping surrounding white space
         *     (which is dropped); {@code null} for none
         * @return this builder
         * @throws IllegalArgumentException if the token is shorter than 16 characters
         */
        public Builder adminToken(String token) {
            options.adminToken(token);
            return this;
        }

        /**
         * Most open upstream HTTP connections (default {@value FanoutServer#DEFAULT_MAX_CONNECTIONS});
         * one more is closed as soon as it is accepted and counted ({@code connections_refused} in
         * {@code /admin/stats}). Keep it below the process's file-descriptor limit.
         *
         * @param n most open connections, {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Builder maxConnections(int n) {
            options.maxConnections(n);
            return this;
        }

        /**
         * Most response bytes the whole server holds for HTTP clients that are behind (default
         * {@value FanoutServer#DEFAULT_MAX_QUEUED_BYTES_TOTAL}, 256 MiB). A client is behind while
         * its connection holds more unread bytes than the high water mark (1 MiB); past this bound
         * the connection whose answer would go over is closed as a slow reader (counted in
         * {@code /admin/stats} {@code connections.slow_readers_closed_server_bound}), so many
         * clients that each stay under {@link HttpLimits#maxQueuedBytes()} cannot together exhaust
         * direct memory. Connections that keep up hold less than the high water mark each: the
         * whole server's queued bytes stay under this bound plus one high water mark per connection
         * ({@link #maxConnections}). gRPC upstream calls are bounded by HTTP/2 flow control and
         * the most concurrent streams per connection.
         *
         * @param bytes the bound, {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code bytes < 1}
         */
        public Builder maxQueuedBytesTotal(long bytes) {
            options.maxQueuedBytesTotal(bytes);
            return this;
        }

        /**
         * Sends OpenTelemetry spans: one {@code SERVER} span per upstream request (HTTP route or
         * gRPC method; its parent read from the request's W3C {@code traceparent} and
         * {@code tracestate} headers or metadata by {@code otel}'s propagators), with events
         * {@code planned} and {@code merged}, and one {@code CLIENT} child span per shard call
         * (backend, shard and round as attributes; an error status with the reason when the call
         * failed). Default: none, and then no OpenTelemetry class is loaded — the
         * {@code io.opentelemetry:opentelemetry-api} dependency is optional. Give it the
         * {@code OpenTelemetry} your application configures (an SDK with an OTLP exporter to Jaeger
         * or any collector: docs/tracing.md). The shard calls themselves do not carry the trace
         * context to the shards.
         *
         * @param otel the OpenTelemetry instance, or {@code null} for none
         * @return this builder
         */
        public Builder openTelemetry(io.opentelemetry.api.OpenTelemetry otel) {
            options.openTelemetry(otel);
            return this;
        }

        /**
         * How shard connections of pipelined drivers (KV, native RESP, the YCSB OP_MSG driver) are
         * flushed: at the end of each loop iteration (the default, {@link FlushMode#PER_ITERATION}),
         * per call, or in batches bounded by a count and a delay (docs/tracing.md, "Knobs"). Switch it
         * at run time with {@link FanoutServer#flushMode(FlushMode)}.
         *
         * @param policy the policy, not {@code null}
         * @return this builder
         */
        public Builder flushMode(FlushMode policy) {
            options.flushMode(policy);
            return this;
        }

        /**
         * Pins loop {@code i} of the I/O group (and of the groups a configuration adds) to CPU
         * {@code cpus.get(i % cpus.size())} with {@code sched_setaffinity} (Linux; docs/tracing.md,
         * "Knobs"). Default: not pinned. Switch at run time with {@link FanoutServer#pinIoThreads}.
         *
         * @param cpus the CPUs, at least one, or {@code null} for no pinning
         * @return this builder
         * @throws IllegalArgumentException if {@code cpus} is empty
         */
        public Builder pinIoThreads(List<Integer> cpus) {
            options.pinIoThreads(cpus);
            return this;
        }

        /**
         * Traces the stages of one request in {@code oneIn} (1 = every request; 0, the default, =
         * off, which costs one branch per request): the time from admission to the plan (the hop
         * to the planning thread), the plan, the first reply, the last reply, the merge, and the
         * whole request, per configuration, with mean, standard deviation, C² and percentiles in
         * {@code /admin/stats} under {@code stages} (the variability method of "Where the tail
         * comes from"; docs/tracing.md). Switch it at run time with {@link FanoutServer#traceStages}.
         *
         * @param oneIn trace one request in this many; 0 = off, 1 = all
         * @return this builder
         * @throws IllegalArgumentException if {@code oneIn < 0}
         */
        public Builder traceStages(int oneIn) {
            options.traceStages(oneIn);
            return this;
        }

        /**
         * Also registers every doubleface meter (requests by outcome, per-route latency, loops,
         * admission, backends' resilience, …) in the application's registry, so they leave with the
         * application's own metrics (Prometheus, OTLP, JMX, whatever it has configured). The admin
         * {@code /metrics} endpoint serves them either way, in Prometheus text, plus the active
         * configuration and per-thread-group CPU and context switches, which are only there.
         * Default: none.
         *
         * @param registry the application's registry, or {@code null} for none
         * @return this builder
         */
        public Builder meterRegistry(MeterRegistry registry) {
            options.meterRegistry(registry);
            return this;
        }

        /**
         * The bodies of the HTTP answers the framework makes itself — {@code 400}, {@code 404},
         * {@code 405}, {@code 408}, {@code 413}, {@code 414}, {@code 431}, {@code 500}, {@code 503},
         * {@code 504} — (default {@link ErrorEncoder#plainText()}; {@link ErrorEncoder#json()},
         * {@link ErrorEncoder#problemDetails()} or your own). gRPC calls carry the same message as
         * their status description.
         *
         * @param encoder the encoder, not {@code null}
         * @return this builder
         */
        public Builder errorEncoder(ErrorEncoder encoder) {
            options.errorEncoder(encoder);
            return this;
        }

        /**
         * Most time an upstream HTTP connection lives (default: no limit): after it, the first answer
         * that leaves nothing in flight on the connection carries {@code Connection: close} and the
         * connection closes, so clients reconnect (and spread over new instances behind a balancer).
         *
         * @param age the most time, {@code > 0}; {@code null} for no limit
         * @return this builder
         * @throws IllegalArgumentException if {@code age} is zero or negative
         */
        public Builder maxConnectionAge(Duration age) {
            options.maxConnectionAge(age);
            return this;
        }

        /**
         * Sets the admin port; default: no admin listener.
         *
         * @param port {@code 0 .. 65535}; 0 = any free port (read it with {@link FanoutServer#adminPort()});
         *     negative = no admin listener
         * @return this builder
         * @throws IllegalArgumentException if {@code port > 65535}
         */
        public Builder adminPort(int port) {
            options.adminPort(port);
            return this;
        }

        /**
         * Sets the number of I/O loops; default: the number of CPUs.
         *
         * @param n the number of I/O loops, {@code 1 .. 1024}
         * @return this builder
         * @throws IllegalArgumentException if {@code n} is out of range
         */
        public Builder ioThreads(int n) {
            options.ioThreads(n);
            return this;
        }

        /**
         * Sets the transport of all loops; default {@link Transport#AUTO}: epoll if available.
         *
         * @param transport the transport, not {@code null}
         * @return this builder
         */
        public Builder transport(Transport transport) {
            options.transport(transport);
            return this;
        }

        /**
         * Sets the initial configuration; default {@code doubleface}. Ignored with {@link #adaptive}.
         *
         * @param name a configuration name, e.g. {@code type2a-1f2b}; see {@link io.doubleface.model.Configuration}
         * @return this builder
         * @throws IllegalArgumentException if the name is not a valid configuration
         */
        public Builder configuration(String name) {
            return configuration(Configuration.parse(name));
        }

        /**
         * Sets the initial configuration as a typed value, e.g. {@code Configuration.DoubleFace.of()}
         * or {@code new Configuration.Type1(0, 16, false)}. Ignored with {@link #adaptive}.
         *
         * @param configuration the configuration, not {@code null}
         * @return this builder
         */
        public Builder configuration(Configuration configuration) {
            options.configuration(Objects.requireNonNull(configuration, "configuration"));
            return this;
        }

        /**
         * Sets the DoubleFace reply order of configurations that name none; default
         * {@code completion-first}.
         *
         * @param order {@code fifo}, {@code completion-first} (alias {@code cf}) or
         *     {@code completion-first-arrival} (alias {@code cfa}); case-insensitive
         * @return this builder
         * @throws IllegalArgumentException if the order is unknown
         */
        public Builder replyOrder(String order) {
            options.replyOrder(ReplyOrder.factory(order));
            return this;
        }

        /**
         * Sets your own DoubleFace reply order for configurations that name none: the order in
         * which each loop processes the replies of one iteration. The factory is called once per loop
         * (an instance is used by that loop's thread only) each time a DoubleFace configuration is
         * built, so instances may keep scratch state without synchronisation.
         *
         * @param factory makes one reply order per loop; must not return {@code null}
         * @return this builder
         */
        public Builder replyOrder(Supplier<? extends ReplyOrder> factory) {
            options.replyOrder(factory);
            return this;
        }

        /**
         * Sets the DoubleFace reply order by name.
         *
         * @param order as {@link #replyOrder(String)}
         * @return this builder
         * @deprecated "policy" names the failure policy alone; use {@link #replyOrder(String)}
         */
        @Deprecated(since = "0.1", forRemoval = true)
        public Builder policy(String order) {
            return replyOrder(order);
        }

        /**
         * Sets the per-request deadline, over all rounds; default {@value #DEFAULT_DEADLINE_MS} ms. A request
         * not answered by then gets {@code 504} (gRPC {@code DEADLINE_EXCEEDED}).
         *
         * @param deadline the deadline, at least 1 ms (used with millisecond precision)
         * @return this builder
         * @throws IllegalArgumentException if {@code deadline} is {@code null} or under 1 ms
         */
        public Builder deadline(Duration deadline) {
            options.deadline(deadline);
            return this;
        }

        /**
         * Sets the HTTP limits (some also bound the gRPC upstream, see {@link #grpc(int)}); default
         * {@link HttpLimits#DEFAULTS}.
         *
         * @param limits the limits, not {@code null}
         * @return this builder
         */
        public Builder limits(HttpLimits limits) {
            Objects.requireNonNull(limits, "limits");
            options.limits(limits.connectionLimits(), limits.idleTimeout());
            return this;
        }

        /**
         * Sets admission control (load shedding): how many requests may be in flight before new
         * ones are refused at once with {@code 503} and {@code Retry-After: 1} (gRPC
         * {@code RESOURCE_EXHAUSTED}); default {@link Admission#unlimited()}. On a network, set
         * {@link Admission#fixed(int)} or {@link Admission#adaptive()}: without a limit an
         * overload shows as queueing and late answers instead of fast refusals.
         *
         * @param admission the setting, not {@code null}
         * @return this builder
         */
        public Builder admission(Admission admission) {
            options.admission(switch (Objects.requireNonNull(admission, "admission").kind()) {
                case UNLIMITED -> null;
                case FIXED -> new ServerConfig.AdmissionLimit(false, admission.limit(), admission.min(), admission.max());
                case ADAPTIVE -> new ServerConfig.AdmissionLimit(true, admission.limit(), admission.min(), admission.max());
            });
            return this;
        }

        /**
         * Sets the bound of each worker pool's queue; default {@value ModelContext#DEFAULT_QUEUE_LIMIT}. A
         * request that finds the queue full gets {@code 503}.
         *
         * @param n queued requests per pool, {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Builder queueLimit(int n) {
            options.queueLimit(n);
            return this;
        }

        /**
         * Runs the load adapter ({@link LoadAdapter}) instead of a static configuration: the
         * server starts in the adapter's initial configuration and the adapter switches from
         * there; {@link #configuration} is ignored. Default: off.
         *
         * @param settings the adapter's settings; {@code null} turns the adapter off again
         * @return this builder
         */
        public Builder adaptive(TuneSettings settings) {
            options.adaptive(settings);
            return this;
        }

        /**
         * Configurations to build at start, parked, so that switching to them later creates no
         * thread (default: none — a configuration is then built on its first switch).
         *
         * @param configurations configuration names (see {@link io.doubleface.model.Configuration}), not
         *     {@code null}; replaces the list given before
         * @return this builder
         * @throws IllegalArgumentException if a name is not a valid configuration
         */
        public Builder prepare(List<String> configurations) {
            List<Configuration> parsed = new ArrayList<>();
            for (String name : configurations) {
                parsed.add(Configuration.parse(name));
            }
            options.prepare(parsed);
            return this;
        }

        /**
         * Configurations to build at start, parked, given as typed values; otherwise as
         * {@link #prepare(List)}.
         *
         * @param configurations the configurations; replaces the list given before
         * @return this builder
         */
        public Builder prepare(Configuration... configurations) {
            for (Configuration c : configurations) {
                Objects.requireNonNull(c, "configuration");
            }
            options.prepare(List.of(configurations));
            return this;
        }

        /**
         * {@return the options as set now, as the immutable configuration a server starts from}
         * Later changes to this builder do not change it.
         *
         * @throws IllegalStateException if no backend was added, or neither a route nor a gRPC method
         */
        ServerConfig build() {
            return options.build();
        }

        /**
         * Starts loops, models and listeners.
         *
         * @return the running server; the caller closes it ({@link FanoutServer#close()} or
         *     {@link FanoutServer#stop(Duration)})
         * @throws IllegalStateException if no backend was added, neither a route nor a gRPC method was
         *     added, or a port cannot be bound
         * @throws IllegalArgumentException if the configuration does not fit (e.g. too many frontends)
         */
        public FanoutServer start() {
            try {
                return new FanoutServer(ServerRuntime.start(build()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting", e);
            }
        }
    }
}
