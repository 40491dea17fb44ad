package io.doubleface.services.ycsb;

import io.doubleface.driver.DriverSettings;
import io.doubleface.redis.RedisDriver;
import io.doubleface.redis.RedisServers;
import io.doubleface.server.FanoutServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The YCSB mid-tier over real {@code redis-server} shards ({@link RedisServers}, loaded with the
 * dataset) through {@link RedisDriver} — the Redis twin of {@link TestCluster}. The servers may
 * outlive one mid-tier: {@link #start(RedisServers, String, String, Duration)} runs a mid-tier
 * over servers the test owns.
 */
final class RedisTestCluster implements AutoCloseable {

    static final int RECORDS = TestCluster.RECORDS;

    final RedisServers servers;
    private final boolean ownsServers;
    final RedisDriver driver;
    final FanoutServer server;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private RedisTestCluster(RedisServers servers, boolean ownsServers, String configuration, String options,
            Duration deadline, Duration callTimeout) {
        this.servers = servers;
        this.ownsServers = ownsServers;
        try {
            DriverSettings settings = DriverSettings.DEFAULT.withCallTimeout(callTimeout)
                    .withConnectTimeout(Duration.ofSeconds(5));
            driver = RedisDriver.of(servers.uri() + options, settings);
            int shards = driver.shardCount();
            FanoutServer.Builder b = FanoutServer.builder();
            YcsbService.install(b, new RedisRecords(driver, RECORDS), RECORDS, YcsbService.DEFAULT_SCAN_RECORDS, 0, false);
            server = b.port(0).adminPort(0).ioThreads(2)
                    .configuration(configuration).deadline(deadline).start();
        } catch (RuntimeException e) {
            if (ownsServers) {
                servers.close();
            }
            throw e;
        }
    }

    /** {@code shards} new loaded servers and a mid-tier over them, generous timeouts. */
    static RedisTestCluster start(int shards, String configuration, String options) {
        RedisServers s = RedisServers.start(shards, 0);
        try {
            RedisRecords.load(s.uri(), RECORDS, n -> { });
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return new RedisTestCluster(s, true, configuration, options, TestCluster.GENEROUS, TestCluster.GENEROUS);
    }

    /** A mid-tier over the test's own {@code servers} (not closed by {@link #close}). */
    static RedisTestCluster start(RedisServers servers, String configuration, String options, Duration deadline) {
        return new RedisTestCluster(servers, false, configuration, options, deadline, deadline);
    }

    URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
    }

    HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(pathAndQuery)).timeout(TestCluster.GENEROUS).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(YcsbQuery q) throws IOException, InterruptedException {
        return get(TestCluster.path(q));
    }

    /** Every query, at most {@code inFlight} at once; responses in query order. */
    List<HttpResponse<String>> getAll(List<YcsbQuery> queries, int inFlight) throws Exception {
        Semaphore permits = new Semaphore(inFlight);
        List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>(queries.size());
        for (YcsbQuery q : queries) {
            if (!permits.tryAcquire(TestCluster.GENEROUS.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("no response within " + TestCluster.GENEROUS);
            }
            CompletableFuture<HttpResponse<String>> f = http.sendAsync(HttpRequest.newBuilder(uri(TestCluster.path(q)))
                    .timeout(TestCluster.GENEROUS).build(), HttpResponse.BodyHandlers.ofString());
            f.whenComplete((r, e) -> permits.release());
            futures.add(f);
        }
        List<HttpResponse<String>> out = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : futures) {
            out.add(f.get(TestCluster.GENEROUS.toSeconds() * 2, TimeUnit.SECONDS));
        }
        return out;
    }

    String expected(YcsbQuery q) {
        return TestCluster.expected(driver.shardCount(), q);
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            http.shutdownNow();
            if (ownsServers) {
                servers.close();
            }
        }
    }
}
