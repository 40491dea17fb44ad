package io.doubleface.server.internal;

import io.doubleface.driver.Transport;
import io.doubleface.api.Backend;
import io.doubleface.api.ErrorEncoder;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.driver.Command;
import io.doubleface.driver.FlushMode;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.internal.engine.AdmissionLimiter;
import io.doubleface.internal.engine.ModelContext;
import io.doubleface.model.Configuration;
import io.doubleface.sched.ReplyOrder;
import io.doubleface.tune.TuneSettings;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http.HttpMethod;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Everything a server is started with: what it serves (backends, HTTP routes, gRPC methods), its
 * listeners, the limits of its upstream connections, its loops and models, the initial values of
 * its run-time knobs and where it reports. Made by {@code FanoutServer.Builder} (through
 * {@link Builder}, where every option is checked as it is set), read by {@link ServerRuntime} and the
 * listeners. Not API.
 *
 * <p>Immutable: the lists are unmodifiable copies, and a builder changed after {@link Builder#build()}
 * does not change the configurations it built. What it holds is the user's (drivers, services,
 * bindings, the meter registry): the configuration does not copy those.
 *
 * @param backends the backends, in the order they were added (index {@code i} at position {@code i})
 * @param ownedDrivers the drivers the server closes when it stops
 * @param routes the HTTP routes, as a template: each server counts on a {@link HttpRouter#fresh()} copy;
 *     empty for no HTTP listener
 * @param grpcMethods the gRPC methods served on {@link #grpcPort()}
 * @param host the address of the HTTP and gRPC listeners
 * @param port the HTTP port (0: any free port)
 * @param grpcPort the gRPC port (0: any free port), -1 for no gRPC listener
 * @param adminHost the address of the admin listener
 * @param adminPort the admin port (0: any free port), -1 for no admin listener
 * @param adminToken the admin credential, or {@code null} for none
 * @param tlsCert the certificate chain (PEM) of every listener, or {@code null} for plain text
 * @param tlsKey the private key (PEM, PKCS#8) of {@code tlsCert}, or {@code null}
 * @param http2 whether the HTTP port serves HTTP/2 too
 * @param http2MaxConcurrentStreams {@code SETTINGS_MAX_CONCURRENT_STREAMS} of an HTTP/2 connection
 * @param limits what one upstream HTTP connection enforces (the gRPC listener reads the body and
 *     header sizes)
 * @param idleTimeout how long an upstream connection may stay idle
 * @param maxConnections most open upstream HTTP connections
 * @param maxConnectionAge most time an upstream HTTP connection lives, or {@code null} for no limit
 * @param maxQueuedBytesTotal most response bytes the server holds for clients that are behind
 * @param errorEncoder the bodies of the answers the framework makes itself
 * @param ioThreads the number of I/O loops
 * @param transport the transport of every loop
 * @param configuration the initial configuration (ignored with {@code tune})
 * @param prepare configurations built at start, parked
 * @param replyOrder makes the DoubleFace reply order of configurations that name none
 * @param deadline the per-request deadline
 * @param queueLimit the bound of each worker pool's queue
 * @param admission admission control, or {@code null} for none
 * @param tune the load adapter's settings, or {@code null} for a static configuration
 * @param flushMode the initial downstream flush mode ({@link ServerKnobs})
 * @param pinCpus the CPUs the loops are pinned to at start, or {@code null} for none ({@link ServerKnobs})
 * @param traceStages trace one request in this many at start (0: off; {@link ServerKnobs})
 * @param meterRegistry the application's meter registry, or {@code null}
 * @param openTelemetry an {@code io.opentelemetry.api.OpenTelemetry}, or {@code null}: held as an
 *     {@code Object} so that a server without one loads no OpenTelemetry class (the dependency is
 *     optional)
 */
public record ServerConfig(
        List<Backend<?>> backends,
        List<ShardDriver<?>> ownedDrivers,
        HttpRouter routes,
        List<GrpcMethod<?, ?, ?, ?>> grpcMethods,
        String host,
        int port,
        int grpcPort,
        String adminHost,
        int adminPort,
        String adminToken,
        Path tlsCert,
        Path tlsKey,
        boolean http2,
        int http2MaxConcurrentStreams,
        ConnectionLimits limits,
        Duration idleTimeout,
        int maxConnections,
        Duration maxConnectionAge,
        long maxQueuedBytesTotal,
        ErrorEncoder errorEncoder,
        int ioThreads,
        Transport transport,
        Configuration configuration,
        List<Configuration> prepare,
        Supplier<? extends ReplyOrder> replyOrder,
        Duration deadline,
        int queueLimit,
        AdmissionLimit admission,
        TuneSettings tune,
        FlushMode flushMode,
        List<Integer> pinCpus,
        int traceStages,
        MeterRegistry meterRegistry,
        Object openTelemetry) {

    /** Default per-request deadline: {@value} ms. */
    public static final long DEFAULT_DEADLINE_MS = 1000;

    /** Default {@link #http2MaxConcurrentStreams()}: {@value}. */
    public static final int DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS = 256;

    /** Default most open upstream HTTP connections: {@value}. */
    public static final int DEFAULT_MAX_CONNECTIONS = 20_000;

    /** Default {@link #maxQueuedBytesTotal()}: {@value} bytes (256 MiB). */
    public static final long DEFAULT_MAX_QUEUED_BYTES_TOTAL = 256L << 20;

    /**
     * Checks what the server cannot start without and copies the lists.
     *
     * @throws IllegalStateException if there is no backend, or neither a route nor a gRPC method
     */
    public ServerConfig {
        if (backends.isEmpty()) {
            throw new IllegalStateException("no backend (call Builder.backend)");
        }
        if (routes.routes().isEmpty() && grpcMethods.isEmpty()) {
            throw new IllegalStateException("nothing to serve (call Builder.route or Builder.grpcMethod)");
        }
        backends = List.copyOf(backends);
        ownedDrivers = List.copyOf(ownedDrivers);
        grpcMethods = List.copyOf(grpcMethods);
        prepare = List.copyOf(prepare);
        pinCpus = pinCpus == null ? null : List.copyOf(pinCpus);
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(adminHost, "adminHost");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        Objects.requireNonNull(errorEncoder, "errorEncoder");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(configuration, "configuration");
        Objects.requireNonNull(replyOrder, "replyOrder");
        Objects.requireNonNull(deadline, "deadline");
        Objects.requireNonNull(flushMode, "flushMode");
    }

    /** {@return whether the listeners serve TLS} */
    public boolean tls() {
        return tlsCert != null;
    }

    /** {@return the configuration the server starts in: the adapter's initial one, else {@link #configuration()}} */
    public Configuration initialConfiguration() {
        return tune != null ? tune.initial() : configuration;
    }

    /**
     * Admission control: a fixed or an adaptive limit of requests in flight.
     *
     * @param adaptive whether the limit adapts (else it is fixed at {@code initial})
     * @param initial the limit at start
     * @param min the lowest the adaptive limit goes
     * @param max the highest the adaptive limit goes
     */
    public record AdmissionLimit(boolean adaptive, int initial, int min, int max) {

        /** {@return the engine's limiter, calling {@code finished} as each admitted request ends} */
        public AdmissionLimiter limiter(Runnable finished) {
            return adaptive ? AdmissionLimiter.adaptive(initial, min, max, finished)
                    : AdmissionLimiter.fixed(initial, finished);
        }
    }

    /**
     * The options of one server as they are set, each checked at once (the messages name the
     * public builder's methods); {@link #build()} takes an immutable copy. Not thread-safe.
     */
    public static final class Builder {
        private final List<Backend<?>> backends = new ArrayList<>();
        private final List<ShardDriver<?>> ownedDrivers = new ArrayList<>();
        private final HttpRouter.Builder routes = new HttpRouter.Builder();
        private final List<GrpcMethod<?, ?, ?, ?>> grpcMethods = new ArrayList<>();
        private String host = "127.0.0.1";
        private int port = 8080;
        private int grpcPort = -1;
        private String adminHost = "127.0.0.1";
        private int adminPort = -1;
        private String adminToken;
        private Path tlsCert;
        private Path tlsKey;
        private boolean http2 = true;
        private int http2MaxConcurrentStreams = DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS;
        private ConnectionLimits limits;
        private Duration idleTimeout;
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private Duration maxConnectionAge;
        private long maxQueuedBytesTotal = DEFAULT_MAX_QUEUED_BYTES_TOTAL;
        private ErrorEncoder errorEncoder = ErrorEncoder.plainText();
        private int ioThreads = Runtime.getRuntime().availableProcessors();
        private Transport transport = Transport.AUTO;
        private Configuration configuration = Configuration.DoubleFace.of();
        private List<Configuration> prepare = List.of();
        private Supplier<? extends ReplyOrder> replyOrder = ReplyOrder.factory("completion-first");
        private Duration deadline = Duration.ofMillis(DEFAULT_DEADLINE_MS);
        private int queueLimit = ModelContext.DEFAULT_QUEUE_LIMIT;
        private AdmissionLimit admission;
        private TuneSettings tune;
        private FlushMode flushMode = FlushMode.PER_ITERATION;
        private List<Integer> pinCpus;
        private int traceStages;
        private MeterRegistry meterRegistry;
        private Object openTelemetry;

        /**
         * @param limits the connection limits until {@link #limits} is called (the public
         *     {@code HttpLimits.DEFAULTS}, which this package does not see)
         * @param idleTimeout the idle timeout until then
         */
        public Builder(ConnectionLimits limits, Duration idleTimeout) {
            limits(limits, idleTimeout);
        }

        /**
         * Adds a backend; see {@code FanoutServer.Builder#backend(String, ShardDriver, boolean)}.
         *
         * @param owner what the backend's {@link Backend#belongsTo} answers {@code true} for (the
         *     public builder)
         */
        public <C extends Command<?>> Backend<C> backend(String name, ShardDriver<C> driver, boolean closeOnStop,
                Object owner) {
            Objects.requireNonNull(driver, "driver");
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("backend name: '" + name + "' (expected: non-empty)");
            }
            for (Backend<?> b : backends) {
                if (b.name().equals(name)) {
                    throw new IllegalArgumentException("backend name: '" + name + "' is taken");
                }
            }
            Backend<C> b = new Backend<>(name, backends.size(), driver, owner);
            backends.add(b);
            if (closeOnStop) {
                ownedDrivers.add(driver);
            }
            return b;
        }

        /** Adds an HTTP route; see {@code FanoutServer.Builder#route}. */
        public <Q, R> Builder route(HttpMethod method, String pattern, FanoutService<Q, ?, R> service,
                HttpBinding<Q, R> binding) {
            if (HttpMethod.HEAD.equals(method) || HttpMethod.CONNECT.equals(method) || HttpMethod.TRACE.equals(method)) {
                throw new IllegalArgumentException("route " + method + " " + pattern + ": " + method
                        + " routes are not supported (use GET, POST, PUT, DELETE or PATCH)");
            }
            routes.add(method, pattern, service, binding);
            return this;
        }

        /** Adds a gRPC method; see {@code FanoutServer.Builder#grpcMethod}. */
        public <Q, R> Builder grpcMethod(FanoutService<Q, ?, R> service, GrpcBinding<Q, R, ?, ?> binding) {
            GrpcMethod<Q, R, ?, ?> m = GrpcMethod.of(service, binding);
            for (GrpcMethod<?, ?, ?, ?> o : grpcMethods) {
                if (o.fullName().equals(m.fullName())) {
                    throw new IllegalArgumentException("grpc method " + m.fullName() + " added twice");
                }
            }
            grpcMethods.add(m);
            return this;
        }

        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        public Builder port(int port) {
            this.port = checkPort("port", port);
            return this;
        }

        public Builder grpcPort(int port) {
            this.grpcPort = checkPort("grpcPort", port);
            return this;
        }

        public Builder adminHost(String host) {
            this.adminHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /** A negative port turns the admin listener off. */
        public Builder adminPort(int port) {
            this.adminPort = port < 0 ? -1 : checkPort("adminPort", port);
            return this;
        }

        public Builder adminToken(String token) {
            if (token != null && token.strip().length() < 16) {
                throw new IllegalArgumentException("adminToken: " + token.strip().length()
                        + " characters (expected: at least 16)");
            }
            this.adminToken = token == null ? null : token.strip();
            return this;
        }

        public Builder tls(Path certificateChainPem, Path privateKeyPem) {
            this.tlsCert = Objects.requireNonNull(certificateChainPem, "certificateChainPem");
            this.tlsKey = Objects.requireNonNull(privateKeyPem, "privateKeyPem");
            return this;
        }

        public Builder http2(boolean on) {
            this.http2 = on;
            return this;
        }

        public Builder http2MaxConcurrentStreams(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("http2MaxConcurrentStreams: " + n + " (expected: >= 1)");
            }
            this.http2MaxConcurrentStreams = n;
            return this;
        }

        public Builder limits(ConnectionLimits limits, Duration idleTimeout) {
            this.limits = Objects.requireNonNull(limits, "limits");
            this.idleTimeout = Objects.requireNonNull(idleTimeout, "idleTimeout");
            return this;
        }

        public Builder maxConnections(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxConnections: " + n + " (expected: > 0)");
            }
            this.maxConnections = n;
            return this;
        }

        public Builder maxConnectionAge(Duration age) {
            if (age != null && (age.isNegative() || age.isZero())) {
                throw new IllegalArgumentException("maxConnectionAge: " + age + " (expected: > 0, or null for none)");
            }
            this.maxConnectionAge = age;
            return this;
        }

        public Builder maxQueuedBytesTotal(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxQueuedBytesTotal: " + bytes + " (expected: > 0)");
            }
            this.maxQueuedBytesTotal = bytes;
            return this;
        }

        public Builder errorEncoder(ErrorEncoder encoder) {
            this.errorEncoder = Objects.requireNonNull(encoder, "encoder");
            return this;
        }

        public Builder ioThreads(int n) {
            if (n < 1 || n > 1024) {
                throw new IllegalArgumentException("ioThreads: " + n + " (expected: 1..1024)");
            }
            this.ioThreads = n;
            return this;
        }

        public Builder transport(Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        public Builder configuration(Configuration configuration) {
            this.configuration = Objects.requireNonNull(configuration, "configuration");
            return this;
        }

        public Builder prepare(List<? extends Configuration> configurations) {
            this.prepare = List.copyOf(configurations);
            return this;
        }

        public Builder replyOrder(Supplier<? extends ReplyOrder> factory) {
            this.replyOrder = Objects.requireNonNull(factory, "factory");
            return this;
        }

        public Builder deadline(Duration deadline) {
            if (deadline == null || deadline.toMillis() < 1) {
                throw new IllegalArgumentException("deadline: " + deadline + " (expected: >= 1 ms)");
            }
            this.deadline = deadline;
            return this;
        }

        public Builder queueLimit(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("queueLimit: " + n + " (expected: > 0)");
            }
            this.queueLimit = n;
            return this;
        }

        /** {@code null}: no admission control. */
        public Builder admission(AdmissionLimit admission) {
            this.admission = admission;
            return this;
        }

        /** {@code null}: no load adapter. */
        public Builder adaptive(TuneSettings settings) {
            this.tune = settings;
            return this;
        }

        public Builder flushMode(FlushMode mode) {
            this.flushMode = Objects.requireNonNull(mode, "flushMode");
            return this;
        }

        public Builder pinIoThreads(List<Integer> cpus) {
            if (cpus != null && cpus.isEmpty()) {
                throw new IllegalArgumentException("pinIoThreads: empty CPU list (expected: 1 or more, or null)");
            }
            this.pinCpus = cpus == null ? null : List.copyOf(cpus);
            return this;
        }

        public Builder traceStages(int oneIn) {
            if (oneIn < 0) {
                throw new IllegalArgumentException("traceStages: " + oneIn + " (expected: 0 = off, 1 = all, N)");
            }
            this.traceStages = oneIn;
            return this;
        }

        public Builder meterRegistry(MeterRegistry registry) {
            this.meterRegistry = registry;
            return this;
        }

        /** @param otel an {@code io.opentelemetry.api.OpenTelemetry}, or {@code null} */
        public Builder openTelemetry(Object otel) {
            this.openTelemetry = otel;
            return this;
        }

        private static int checkPort(String what, int p) {
            if (p < 0 || p > 65535) {
                throw new IllegalArgumentException(what + ": " + p + " (expected: 0..65535)");
            }
            return p;
        }

        /**
         * {@return the options as set now, as an immutable configuration}
         *
         * @throws IllegalStateException if there is no backend, or neither a route nor a gRPC method
         */
        public ServerConfig build() {
            return new ServerConfig(backends, ownedDrivers, routes.build(), grpcMethods, host, port, grpcPort,
                    adminHost, adminPort, adminToken, tlsCert, tlsKey, http2, http2MaxConcurrentStreams, limits,
                    idleTimeout, maxConnections, maxConnectionAge, maxQueuedBytesTotal, errorEncoder, ioThreads,
                    transport, configuration, prepare, replyOrder, deadline, queueLimit, admission, tune, flushMode,
                    pinCpus, traceStages, meterRegistry, openTelemetry);
        }
    }
}
