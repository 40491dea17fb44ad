package io.doubleface.server.internal;

import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.internal.engine.AdmissionLimiter;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.ModelContext;
import io.doubleface.internal.engine.OtelTracing;
import io.doubleface.internal.engine.RouteStats;
import io.doubleface.internal.engine.ThreadingModel;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.tune.LoadAdapter;
import io.netty.handler.ssl.SslContext;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running server, behind the public {@code FanoutServer}: its I/O loops, engine, load adapter,
 * run-time knobs ({@link ServerKnobs}), counters ({@link ServerMetrics}, {@link ServerStats}) and
 * listeners ({@link HttpListener}, {@link GrpcListener}, {@link AdminListener}), started from one
 * {@link ServerConfig}; the drain and the close. Not API: {@code FanoutServer.internals()} hands it
 * to doubleface's own tools and tests, which read the parts the public API does not name.
 *
 * <p>Ownership: owns its loops, engine, adapter and listeners; closes the drivers the configuration
 * says it owns ({@link ServerConfig#ownedDrivers()}).
 *
 * <p>Threading: thread-safe.
 */
public final class ServerRuntime implements AutoCloseable {

    /**
     * The log of the server's life (listening, draining, closing) and of its listeners and knobs:
     * under {@code io.doubleface.server.FanoutServer}, the category it has always had.
     */
    static final Logger LOG = LoggerFactory.getLogger("io.doubleface.server.FanoutServer");

    private final ServerConfig config;
    private final LoopGroup io;
    private final FanoutEngine engine;
    private final LoadAdapter adapter;
    private final ServerKnobs knobs;
    private final ServerMetrics metrics;
    private final HttpListener http;   // null without HTTP routes
    private final GrpcListener grpc;   // null without a gRPC port
    private final AdminListener admin; // null when the admin listener is off
    private volatile boolean closing;
    /** Counted down when {@link #close()} has finished: a second {@link #stop} waits for it. */
    private final CountDownLatch terminated = new CountDownLatch(1);
    private boolean closed; // under this

    private ServerRuntime(ServerConfig config) throws InterruptedException {
        this.config = config;
        // TLS first: a bad certificate fails start() before any thread or port is taken
        SslContext httpTls = !config.tls() ? null : Tls.http(config.tlsCert(), config.tlsKey(), config.http2());
        SslContext adminTls = !config.tls() ? null : config.http2() ? Tls.http(config.tlsCert(), config.tlsKey()) : httpTls;
        SslContext grpcTls = !config.tls() || config.grpcMethods().isEmpty() ? null
                : Tls.grpc(config.tlsCert(), config.tlsKey());
        this.io = new LoopGroup("io", config.ioThreads(), config.transport());
        FanoutEngine eng = null;
        LoadAdapter tuner = null;
        HttpListener h = null;
        GrpcListener g = null;
        try {
            ServerKnobs.Loops loopKnobs = new ServerKnobs.Loops(config.flushMode(), config.pinCpus());
            loopKnobs.applyTo(io);
            ModelContext ctx = new ModelContext(io, config.backends(), config.replyOrder(), config.queueLimit());
            ctx.onLoopGroupStarted(loopKnobs::applyTo);
            ServerConfig.AdmissionLimit adm = config.admission();
            Function<Runnable, AdmissionLimiter> limiter = adm == null ? null : adm::limiter;
            eng = new FanoutEngine(ctx, config.initialConfiguration(),
                    TimeUnit.MILLISECONDS.toNanos(config.deadline().toMillis()), limiter);
            eng.stages().every(config.traceStages());
            if (config.openTelemetry() != null) {
                eng.openTelemetry(OtelTracing.of(config.openTelemetry()));
            }
            this.engine = eng;
            eng.prepare(config.prepare());
            if (config.tune() != null) {
                tuner = LoadAdapter.attach(eng, config.tune());
            }
            this.adapter = tuner;
            List<RouteStats> routeStats = new ArrayList<>();
            if (!config.routes().routes().isEmpty()) {
                HttpRouter router = config.routes().fresh(); // route stats of this server's own
                router.routes().forEach(r -> routeStats.add(r.stats()));
                h = HttpListener.start(config, router, eng, io, httpTls);
            }
            if (config.grpcPort() >= 0) {
                g = GrpcListener.start(config, eng, io, grpcTls);
                routeStats.addAll(g.routeStats());
            }
            this.metrics = new ServerMetrics(eng, this::loopGroups, tuner, routeStats, config.backends(),
                    config.meterRegistry());
            this.knobs = new ServerKnobs(eng, loopKnobs, this::loopGroups, metrics::registerLoops);
            this.admin = config.adminPort() < 0 ? null : AdminListener.start(config, adminTls, eng, metrics, knobs);
            this.http = h;
            this.grpc = g;
        } catch (RuntimeException | InterruptedException e) {
            if (g != null) {
                g.close();
            }
            if (tuner != null) {
                tuner.close();
            }
            if (h != null) {
                h.close();
            }
            if (eng != null) {
                eng.close();
            }
            io.close();
            throw e;
        }
        metrics.registerLoops(); // the loops built so far; later ones on each switch
        String scheme = httpTls == null ? "http://" : "https://";
        LOG.info("listening on {}{} (admin {}), {} I/O loops ({}), configuration {}{}, backends {}",
                http == null ? "" : scheme + config.host() + ":" + port(),
                grpc == null ? "" : (http == null ? "" : " and ") + "grpc://" + config.host() + ":" + grpcPort(),
                admin == null ? "off" : scheme + config.adminHost() + ":" + adminAddress().getPort(),
                io.size(), io.isEpoll() ? "epoll" : "nio", engine.active().name(),
                adapter == null ? "" : " (" + config.tune().strategy().label() + ", " + adapter.detector().describe() + ", "
                        + (config.tune().profile() == null ? "no profile" : "profile") + ")",
                config.backends());
    }

    /**
     * Starts loops, engine, models and listeners from {@code config}.
     *
     * @return the running server; the caller closes it
     * @throws IllegalStateException if a port cannot be bound, or a TLS file cannot be read
     * @throws IllegalArgumentException if the configuration does not fit (e.g. too many frontends)
     * @throws InterruptedException if interrupted while binding
     */
    public static ServerRuntime start(ServerConfig config) throws InterruptedException {
        return new ServerRuntime(Objects.requireNonNull(config, "config"));
    }

    // ---- the parts ----

    /** {@return the configuration the server was started with} */
    public ServerConfig config() {
        return config;
    }

    /** {@return the engine that admits and runs the server's requests} */
    public FanoutEngine engine() {
        return engine;
    }

    /** {@return the load adapter, or {@code null} if the server runs a static configuration} */
    public LoadAdapter adapter() {
        return adapter;
    }

    /** {@return the I/O loops (owned by the server: do not close them)} */
    public LoopGroup ioLoops() {
        return io;
    }

    /** {@return every loop group of the server now: the I/O loops, then the built configurations' own} */
    public List<LoopGroup> loopGroups() {
        List<LoopGroup> all = new ArrayList<>();
        all.add(io);
        for (ThreadingModel m : engine.models()) {
            for (LoopGroup g : m.ownLoopGroups()) {
                if (!all.contains(g)) {
                    all.add(g);
                }
            }
        }
        return all;
    }

    /** {@return what the server lets be changed while it runs} */
    public ServerKnobs knobs() {
        return knobs;
    }

    /** {@return the counters now ({@code /admin/stats} is this, serialised)} */
    public ServerStats stats() {
        return metrics.snapshot();
    }

    // ---- the listeners ----

    /** {@return the bound HTTP port, or -1 without HTTP routes} */
    public int port() {
        return http == null ? -1 : http.port();
    }

    /** {@return the bound gRPC port, or -1 without a gRPC listener} */
    public int grpcPort() {
        return grpc == null ? -1 : grpc.port();
    }

    /** {@return the admin listener's bound address, or {@code null} if it is off} */
    public InetSocketAddress adminAddress() {
        return admin == null ? null : admin.address();
    }

    // ---- readiness ----

    /** {@return whether every client of the active configuration is connected, and no drain has started} */
    public boolean isReady() {
        return !closing && !engine.isDraining() && engine.isConnected();
    }

    /**
     * Waits until {@link #isReady()}.
     *
     * @throws TimeoutException if not ready in time; its message names every client still connecting
     * @throws IllegalStateException if the server is draining or closed
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitReady(Duration timeout) throws InterruptedException, TimeoutException {
        long end = System.nanoTime() + Objects.requireNonNull(timeout, "timeout").toNanos();
        for (;;) {
            if (closing || engine.isDraining()) {
                throw new IllegalStateException("the server is " + (closing ? "closed" : "draining")
                        + ": it will not be ready again");
            }
            if (engine.isConnected()) {
                return;
            }
            try {
                engine.whenConnected().get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                throw new IllegalStateException("waiting for the connections failed", e.getCause());
            } catch (TimeoutException e) {
                if (engine.isConnected()) {
                    return;
                }
                List<String> waiting = new ArrayList<>();
                for (FanoutEngine.Waiting w : engine.waiting()) {
                    waiting.add(w.toString());
                }
                throw new TimeoutException("not ready after " + timeout.toMillis() + " ms: "
                        + waiting.size() + " clients of configuration " + engine.active().name()
                        + " not connected: " + String.join("; ", waiting));
            }
        }
    }

    // ---- the drain and the close ----

    /**
     * Drains, then closes: {@code /ready} turns {@code 503} at once; after {@code delay} the
     * listeners stop accepting, the adapter stops switching, idle connections close and the
     * requests in flight finish for up to {@code grace}; then {@link #close()}. Returns when closed.
     * Idempotent (a second call waits for the first).
     */
    public void stop(Duration delay, Duration grace) {
        Objects.requireNonNull(delay, "delay");
        Objects.requireNonNull(grace, "grace");
        boolean first;
        synchronized (this) {
            first = !closing && !engine.isDraining();
            if (first) {
                engine.startDrain();
            }
        }
        if (!first) {
            awaitTerminated(); // another stop (or close) is under way: return when it is done
            return;
        }
        if (delay.toNanos() > 0) {
            LOG.info("draining: /ready answers 503; still accepting for {} ms", delay.toMillis());
            try {
                Thread.sleep(delay.toMillis(), (int) (delay.toNanos() % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long end = System.nanoTime() + grace.toNanos();
        LOG.info("draining: {} requests in flight, grace {} ms", engine.inFlight(), grace.toMillis());
        if (adapter != null) {
            adapter.close();
        }
        if (http != null) {
            http.stopAccepting();
        }
        if (grpc != null) {
            grpc.shutdown(); // GOAWAY: open calls finish, new ones go elsewhere
        }
        if (http != null) {
            http.drain();
        }
        try {
            // until every request is answered and every connection has written its last answer
            // and closed (an answer is written after its request leaves the engine's count)
            while ((engine.inFlight() > 0 || openConnections() > 0) && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            if (grpc != null) {
                grpc.awaitTermination(end - System.nanoTime());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long left = engine.inFlight();
        if (left > 0 || openConnections() > 0) {
            LOG.warn("grace of {} ms over with {} requests in flight, {} connections open; closing", grace.toMillis(),
                    left, openConnections());
        } else {
            LOG.info("drained");
        }
        close();
    }

    private int openConnections() {
        return http == null ? 0 : http.openConnections();
    }

    /**
     * Stops listening, closes models, connections and loops, and the drivers the server owns.
     * Requests in flight are dropped. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closing = true;
        if (adapter != null) {
            adapter.close();
        }
        if (http != null) {
            http.stopAccepting();
        }
        if (grpc != null) {
            grpc.close(); // ends open calls with CANCELLED / UNAVAILABLE
        }
        if (http != null) {
            http.close();
        }
        if (admin != null) {
            admin.close();
        }
        engine.close();
        for (ShardDriver<?> d : config.ownedDrivers()) {
            try {
                d.close();
            } catch (RuntimeException e) {
                LOG.warn("closing driver {} failed", d.describe(), e);
            }
        }
        if (admin != null) {
            admin.closeLoop();
        }
        io.close();
        terminated.countDown();
    }

    private void awaitTerminated() {
        try {
            terminated.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
