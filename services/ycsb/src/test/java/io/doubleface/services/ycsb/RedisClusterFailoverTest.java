package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.DriverSettings;
import io.doubleface.redis.RedisServers;
import io.doubleface.server.FanoutServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Redis Cluster master killed while the YCSB mid-tier serves under load, under each of the five
 * threading models: requests touching the dead master's slots fail with a clear 503/504 until its
 * replica is promoted and the driver's slot map follows (no restart), then every request succeeds
 * again; no request ever gets a wrong answer.
 */
class RedisClusterFailoverTest {

    static final long RECORDS = 200;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"doubleface", "type2a-1f1b", "type2b", "type1-8", "thread-8"})
    void aKilledMasterIsFollowedUnderEveryModel(String model) throws Exception {
        try (RedisServers cluster = RedisServers.startCluster(3, 1, 0, "127.0.0.1")) {
            RedisRecords.load(cluster.uri(), RECORDS, n -> { });
            awaitReplicated(cluster);
            DriverSettings settings = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(2))
                    .withConnectTimeout(Duration.ofSeconds(1));
            FanoutServer.Builder b = FanoutServer.builder().port(0).adminPort(-1).ioThreads(2)
                    .deadline(Duration.ofSeconds(3));
            YcsbService.install(b, RecordStores.open(cluster.uri(), settings, RECORDS), RECORDS,
                    YcsbService.DEFAULT_SCAN_RECORDS, 0, false);
            try (FanoutServer server = b.configuration(model).start()) {
                HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(5)).build();
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong ok = new AtomicLong();
                AtomicLong lastFailure = new AtomicLong();
                List<String> bad = new CopyOnWriteArrayList<>();
                Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
                Thread[] clients = new Thread[4];
                for (int c = 0; c < clients.length; c++) {
                    int seed = c;
                    clients[c] = new Thread(() -> {
                        long i = seed;
                        while (!stop.get()) {
                            YcsbQuery q = new YcsbQuery(1 + (int) (i % 3), Size.values()[(int) (i % 3)], (i * 7) % RECORDS);
                            i += clients.length;
                            try {
                                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                        + server.port() + TestCluster.path(q))).timeout(Duration.ofSeconds(10)).build(),
                                        HttpResponse.BodyHandlers.ofString());
                                statuses.computeIfAbsent(r.statusCode(), k -> new AtomicLong()).incrementAndGet();
                                if (r.statusCode() == 200) {
                                    if (r.body().equals(TestCluster.expected(3, q))) {
                                        ok.incrementAndGet();
                                    } else {
                                        bad.add("wrong body for " + q);
                                    }
                                } else if (r.statusCode() == 503 || r.statusCode() == 504) {
                                    lastFailure.set(System.nanoTime());
                                } else {
                                    bad.add(r.statusCode() + " for " + q + ": " + r.body());
                                }
                            } catch (Exception e) {
                                bad.add(q + ": " + e);
                            }
                        }
                    }, "load-" + c);
                    clients[c].start();
                }
                Thread.sleep(500);
                InetSocketAddress dead = cluster.addresses().get(0);
                cluster.kill(0);
                RedisServers.awaitFailover(cluster.addresses().get(1), 0, dead, 30_000);
                long promoted = System.nanoTime();
                // the map follows within a refresh; then a second with no failure at all
                long deadline = promoted + TimeUnit.SECONDS.toNanos(20);
                while (System.nanoTime() - deadline < 0
                        && (lastFailure.get() == 0 || System.nanoTime() - lastFailure.get() < TimeUnit.SECONDS.toNanos(1))) {
                    Thread.sleep(50);
                }
                long okBefore = ok.get();
                Thread.sleep(500);
                stop.set(true);
                for (Thread t : clients) {
                    t.join(15_000);
                }
                assertEquals(List.of(), bad, model + ": wrong answers or unexpected statuses " + statuses);
                assertTrue(System.nanoTime() - lastFailure.get() >= TimeUnit.MILLISECONDS.toNanos(500),
                        model + ": failures go on after the fail-over " + statuses);
                assertTrue(ok.get() > okBefore, model + ": requests succeed after the fail-over " + statuses);
                assertTrue(statuses.getOrDefault(503, new AtomicLong()).get()
                        + statuses.getOrDefault(504, new AtomicLong()).get() > 0,
                        model + ": the outage was seen (requests on the dead master's slots failed) " + statuses);
            }
        }
    }

    /** Until every replica's replication offset equals its master's (so the promoted one has every record). */
    static void awaitReplicated(RedisServers cluster) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        List<InetSocketAddress> all = cluster.addresses();
        for (InetSocketAddress a : all.subList(cluster.masters(), all.size())) {
            while (true) {
                String info = info(a);
                if (info.contains("master_link_status:up") && offset(info, "master_repl_offset") > 0
                        && offset(info, "master_repl_offset") == offset(info, "slave_repl_offset")) {
                    break;
                }
                assertTrue(System.nanoTime() < deadline, "replica " + a + " did not catch up: " + info);
                Thread.sleep(20);
            }
        }
    }

    private static String info(InetSocketAddress a) {
        io.lettuce.core.RedisClient c = io.lettuce.core.RedisClient.create(io.lettuce.core.RedisURI.create(
                a.getHostString(), a.getPort()));
        try (var conn = c.connect()) {
            return conn.sync().info("replication");
        } finally {
            c.shutdown(0, 1, TimeUnit.SECONDS);
        }
    }

    private static long offset(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        return -1;
    }
}
