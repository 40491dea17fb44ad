package io.doubleface.services.ycsb;

import io.doubleface.mongo.MongoDriver;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.server.FanoutServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A real topology over MongoDB shards: {@link MongoLeafServer} shards (mongo-java-server on
 * ephemeral loopback ports, loaded with {@link TestCluster#RECORDS} records), the YCSB mid-tier
 * over {@link MongoDriver}, and an HTTP client. Expected bodies come from {@link TestCluster}.
 */
final class MongoTestCluster implements AutoCloseable {

    final MongoLeafServer leaf;
    final MongoDriver driver;
    final FanoutServer server;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private MongoTestCluster(int shards, String configuration, Duration deadline, MongoDriver.Options options,
            Map<Integer, InetSocketAddress> replaced, MongoLeafServer sharedLeaf) {
        leaf = sharedLeaf != null ? sharedLeaf : MongoLeafServer.builder().shards(shards).start();
        try {
            if (sharedLeaf == null) {
                MongoRecords.load(leaf.uri(), TestCluster.RECORDS, n -> { });
            }
            List<InetSocketAddress> a = new ArrayList<>(leaf.addresses());
            replaced.forEach(a::set);
            String uri = "mongodb://" + a.stream().map(x -> x.getHostString() + ":" + x.getPort())
                    .collect(Collectors.joining(","));
            driver = MongoDriver.of(uri, options);
            FanoutServer.Builder b = FanoutServer.builder();
            YcsbService.install(b, new MongoRecords(driver, TestCluster.RECORDS), TestCluster.RECORDS, YcsbService.DEFAULT_SCAN_RECORDS, 0, false);
            server = b.port(0).adminPort(0).ioThreads(2).configuration(configuration)
                    .deadline(deadline).start();
        } catch (RuntimeException e) {
            if (sharedLeaf == null) {
                leaf.close();
            }
            throw e;
        }
    }

    /** Generous driver options: tests that are not about timeouts never see one. */
    static MongoDriver.Options generous() {
        return MongoDriver.Options.DEFAULT.withCallTimeout(TestCluster.GENEROUS).withConnectTimeout(Duration.ofSeconds(5));
    }

    static MongoTestCluster start(int shards, String configuration) {
        return new MongoTestCluster(shards, configuration, TestCluster.GENEROUS, generous(), Map.of(), null);
    }

    static MongoTestCluster start(int shards, String configuration, Duration deadline, MongoDriver.Options options,
            Map<Integer, InetSocketAddress> replaced) {
        return new MongoTestCluster(shards, configuration, deadline, options, new HashMap<>(replaced), null);
    }

    HttpResponse<String> get(YcsbQuery q) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + TestCluster.path(q)))
                .timeout(TestCluster.GENEROUS).build(), HttpResponse.BodyHandlers.ofString());
    }

    String expected(YcsbQuery q) {
        return TestCluster.expected(driver.shardCount(), q);
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
