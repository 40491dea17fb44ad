package io.doubleface.services.ycsb;


import io.doubleface.driver.spi.Resilience;
import io.doubleface.driver.spi.ResilientDriver;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.kv.KvRequest;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.server.FanoutServer;
import io.doubleface.server.HttpLimits;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * A real topology for tests: a KV leaf process-equivalent (shards on ephemeral loopback ports),
 * the YCSB mid-tier on an ephemeral port with an admin port, and an HTTP client.
 *
 * <p>Timeouts are generous by default ({@link #GENEROUS}: request deadline and shard call
 * timeout), so a slow machine never turns a correct answer into a 504; tests about deadlines set
 * their own.
 */
final class TestCluster implements AutoCloseable {

    static final int RECORDS = 200;

    /** Deadline, shard call timeout and client guard of tests that are not about timeouts. */
    static final Duration GENEROUS = Duration.ofSeconds(30);

    /** The service the responses are computed with when no network or thread is involved. */

    private static final Map<String, String> EXPECTED = new ConcurrentHashMap<>();

    final KvLeafServer leaf;
    final KvDriver driver;
    final FanoutServer server;
    /** The YCSB service inside the server (possibly wrapped, see {@link Builder#wrap}). */
    final YcsbService service;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private TestCluster(Builder b) {
        leaf = KvLeafServer.builder().shards(b.shards).basePort(0).records(RECORDS).start();
        try {
            List<InetSocketAddress> addresses = new ArrayList<>(leaf.addresses());
            b.replaced.forEach(addresses::set);
            driver = KvDriver.of(addresses, b.driverOptions);
            FanoutServer.Builder sb = FanoutServer.builder();
            ShardDriver<KvRequest> backendDriver = b.resilience == null ? driver
                    : ResilientDriver.wrap(driver, b.resilience);
            service = new YcsbService(sb.backend("records", backendDriver), new KvRecords(driver), RECORDS,
                    YcsbService.DEFAULT_SCAN_RECORDS, b.replyWorkNanos);
            sb.get("/query", b.wrap.apply(service), b.binding.apply(new YcsbBinding(b.shards, RECORDS)))
                    .port(0).adminPort(0).ioThreads(b.ioThreads)
                    .configuration(b.configuration).deadline(b.deadline).limits(b.limits);
            server = b.tweak.apply(sb).start();
        } catch (RuntimeException e) {
            leaf.close();
            throw e;
        }
        if (b.replaced.isEmpty()) { // every shard is up: start warm, as a deployment waiting for /ready does
            try {
                server.awaitReady(Duration.ofSeconds(30));
            } catch (Exception e) {
                server.close();
                leaf.close();
                throw new IllegalStateException("not ready", e);
            }
        }
    }

    /** A cluster of {@code shards} shards starting in {@code configuration}, with the test defaults. */
    static TestCluster start(int shards, String configuration) {
        return builder(shards).configuration(configuration).start();
    }

    /** A cluster with the test defaults, then {@code tweak} applied to the server builder. */
    static TestCluster start(int shards, UnaryOperator<FanoutServer.Builder> tweak) {
        return builder(shards).tweak(tweak).start();
    }

    static Builder builder(int shards) {
        return new Builder(shards);
    }

    /** Options of a test cluster; defaults: 2 I/O loops, {@code doubleface}, generous timeouts. */
    static final class Builder {
        private final int shards;
        private long replyWorkNanos;
        private String configuration = "doubleface";
        private int ioThreads = 2;
        private Duration deadline = GENEROUS;
        private HttpLimits limits = HttpLimits.DEFAULTS;
        private KvDriver.Options driverOptions = KvDriver.Options.DEFAULT.withCallTimeout(GENEROUS)
                .withConnectTimeout(Duration.ofSeconds(5));
        private final Map<Integer, InetSocketAddress> replaced = new HashMap<>();
        private Function<YcsbService, FanoutService<YcsbQuery, byte[], YcsbService.Result>> wrap = s -> s;
        private UnaryOperator<FanoutServer.Builder> tweak = b -> b;
        private UnaryOperator<HttpBinding<YcsbQuery, YcsbService.Result>> binding = b -> b;
        private Resilience<? super KvRequest> resilience;

        private Builder(int shards) {
            this.shards = shards;
        }

        Builder configuration(String name) {
            this.configuration = name;
            return this;
        }

        Builder replyWorkNanos(long nanos) {
            this.replyWorkNanos = nanos;
            return this;
        }

        Builder ioThreads(int n) {
            this.ioThreads = n;
            return this;
        }

        Builder deadline(Duration d) {
            this.deadline = d;
            return this;
        }

        Builder limits(HttpLimits l) {
            this.limits = l;
            return this;
        }

        Builder driverOptions(KvDriver.Options o) {
            this.driverOptions = o;
            return this;
        }

        /** Shard {@code shard} is reached at {@code address} instead of on the cluster's own leaf. */
        Builder shardAt(int shard, InetSocketAddress address) {
            replaced.put(shard, address);
            return this;
        }

        /** The server runs {@code wrap(ycsbService)} instead of the YCSB service itself. */
        Builder wrap(Function<YcsbService, FanoutService<YcsbQuery, byte[], YcsbService.Result>> wrap) {
            this.wrap = wrap;
            return this;
        }

        /** The server uses {@code binding(ycsbBinding)} as its HTTP binding. */
        Builder binding(UnaryOperator<HttpBinding<YcsbQuery, YcsbService.Result>> binding) {
            this.binding = binding;
            return this;
        }

        /** The backend's driver wrapped in a {@link ResilientDriver} with {@code policy}. */
        Builder resilience(Resilience<? super KvRequest> policy) {
            this.resilience = policy;
            return this;
        }

        Builder tweak(UnaryOperator<FanoutServer.Builder> tweak) {
            this.tweak = tweak;
            return this;
        }

        TestCluster start() {
            return new TestCluster(this);
        }
    }

    URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
    }

    URI admin(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.adminPort() + pathAndQuery);
    }

    static String path(YcsbQuery q) {
        return "/query?fanout=" + q.fanout() + "&size=" + q.size().label() + "&key=" + q.key();
    }

    HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(pathAndQuery)).timeout(GENEROUS).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(YcsbQuery q) throws IOException, InterruptedException {
        return get(path(q));
    }

    /**
     * Sends every query, at most {@code inFlight} at a time, and returns the responses in query
     * order. Fails (rather than hangs) if a response takes longer than {@link #GENEROUS}.
     */
    List<HttpResponse<String>> getAll(List<YcsbQuery> queries, int inFlight) throws Exception {
        return getAll(queries, inFlight, GENEROUS);
    }

    /** {@link #getAll(List, int)} with each response due within {@code timeout}. */
    List<HttpResponse<String>> getAll(List<YcsbQuery> queries, int inFlight, Duration timeout) throws Exception {
        return getAll(http, server.port(), queries, inFlight, timeout);
    }

    /** {@link #getAll(List, int, Duration)} to the service on {@code port} through {@code http}. */
    static List<HttpResponse<String>> getAll(HttpClient http, int port, List<YcsbQuery> queries, int inFlight,
            Duration timeout) throws Exception {
        Semaphore permits = new Semaphore(inFlight);
        List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>(queries.size());
        for (YcsbQuery q : queries) {
            if (!permits.tryAcquire(GENEROUS.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("no response within " + GENEROUS + " with " + inFlight + " in flight");
            }
            CompletableFuture<HttpResponse<String>> f = http.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path(q))).timeout(timeout).build(),
                    HttpResponse.BodyHandlers.ofString());
            f.whenComplete((r, e) -> permits.release());
            futures.add(f);
        }
        List<HttpResponse<String>> out = new ArrayList<>(futures.size());
        for (CompletableFuture<HttpResponse<String>> f : futures) {
            out.add(f.get(GENEROUS.toSeconds() * 2, TimeUnit.SECONDS));
        }
        return out;
    }

    HttpResponse<String> adminPut(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(admin(pathAndQuery)).timeout(GENEROUS)
                .PUT(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> adminGet(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(admin(pathAndQuery)).timeout(GENEROUS).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** {@code GET /admin/stats}, parsed. */
    Map<String, Object> stats() throws IOException, InterruptedException {
        HttpResponse<String> r = adminGet("/admin/stats");
        if (r.statusCode() != 200) {
            throw new AssertionError("/admin/stats: " + r.statusCode() + " " + r.body());
        }
        return JsonDoc.object(r.body());
    }

    /** {@code requests.<outcome>} of {@code /admin/stats}. */
    long requests(String outcome) throws IOException, InterruptedException {
        return JsonDoc.path(stats(), "requests", outcome).asLong();
    }

    String expected(int fanout, Size size, long key) {
        return expected(driver.shardCount(), new YcsbQuery(fanout, size, key));
    }

    String expected(YcsbQuery q) {
        return expected(driver.shardCount(), q);
    }

    /**
     * The response the service must give for a query, written from the data ({@link YcsbAnswer}),
     * not with the service's own code. Cached.
     */
    static String expected(int shards, YcsbQuery q) {
        return EXPECTED.computeIfAbsent(shards + "/" + path(q), k -> compute(shards, q));
    }

    private static String compute(int shards, YcsbQuery q) {
        return YcsbAnswer.body(RECORDS, YcsbService.DEFAULT_SCAN_RECORDS, q);
    }

    /** Whether {@code q} calls shard {@code shard} (call i goes to shard {@code (key + i) % shards}). */
    static boolean touches(YcsbQuery q, int shard, int shards) {
        for (int i = 0; i < q.fanout(); i++) {
            if ((q.key() + i) % shards == shard) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            leaf.close();
            http.shutdownNow();
        }
    }
}
