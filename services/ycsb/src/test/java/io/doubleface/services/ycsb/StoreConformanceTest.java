package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.driver.DriverSettings;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.kv.Records;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.redis.RedisServers;
import io.doubleface.server.FanoutServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One conformance body over store × threading model: for every store the CLI can serve
 * ({@link RecordStores#open}: {@code kv://}, {@code redis://} per-loop and shared connections, a
 * {@code redis-cluster://} of 3 masters with a replica each (records stored once, under their
 * natural names, every read routed by key, a SCAN's {@code MGET} split per slot),
 * {@code mongodb://}, {@code mongodb+loop://}, {@code grpc://}, 20 real shards each) and every
 * model, each fanout and size answers byte-identically to {@link #answer}, one request at a time
 * and 120 at once. The expected answer is written here from the data (the records' field values,
 * {@link Records#value}) and the response format as the API documents it, not with the service's
 * own plan, reply decoding or encoder, so a fault those share with the served path still shows.
 */
class StoreConformanceTest {

    static final int SHARDS = 20;
    static final long RECORDS = TestCluster.RECORDS;
    /** Records per {@code large} scan: the servers below are installed with it. */
    static final int SCAN_RECORDS = YcsbService.DEFAULT_SCAN_RECORDS;

    static KvLeafServer kv;
    static RedisServers redis;
    static RedisServers redisCluster;
    static MongoLeafServer mongo;
    static GrpcLeafServer grpc;
    /** A mid-tier per store, by name. */
    static final Map<String, FanoutServer> SERVERS = new LinkedHashMap<>();
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    static List<String> stores() {
        return List.of("kv", "redis", "redis-shared", "redis-cluster", "mongodb", "mongodb+loop", "grpc");
    }

    @BeforeAll
    static void start() {
        kv = KvLeafServer.builder().shards(SHARDS).records((int) RECORDS).start();
        redis = RedisServers.start(SHARDS, 0);
        RedisRecords.load(redis.uri(), RECORDS, n -> { });
        redisCluster = RedisServers.startCluster(3, 1, 0, "127.0.0.1");
        RedisRecords.load(redisCluster.uri(), RECORDS, n -> { });
        mongo = MongoLeafServer.builder().shards(SHARDS).start();
        MongoRecords.load(mongo.uri(), RECORDS, n -> { });
        grpc = GrpcLeafServer.builder().shards(SHARDS).records((int) RECORDS).start();
        Map<String, String> uris = new LinkedHashMap<>();
        uris.put("kv", kv.uri());
        uris.put("redis", redis.uri());
        uris.put("redis-shared", redis.uri() + "?connection=shared");
        uris.put("redis-cluster", redisCluster.uri());
        uris.put("mongodb", mongo.uri());
        uris.put("mongodb+loop", mongo.uri().replace("mongodb://", "mongodb+loop://"));
        uris.put("grpc", grpc.uri());
        DriverSettings settings = DriverSettings.DEFAULT.withCallTimeout(TestCluster.GENEROUS)
                .withConnectTimeout(Duration.ofSeconds(5));
        for (Map.Entry<String, String> e : uris.entrySet()) {
            FanoutServer.Builder b = FanoutServer.builder().port(0).adminPort(-1).ioThreads(2)
                    .deadline(TestCluster.GENEROUS);
            YcsbService.install(b, RecordStores.open(e.getValue(), settings, RECORDS), RECORDS,
                    SCAN_RECORDS, 0, false);
            SERVERS.put(e.getKey(), b.configuration("doubleface").start());
        }
    }

    @AfterAll
    static void stop() {
        SERVERS.values().forEach(FanoutServer::close);
        for (AutoCloseable c : new AutoCloseable[] {grpc, mongo, redis, redisCluster, kv}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    // keep closing the others
                }
            }
        }
    }

    /** The response body for {@code q}, written from the data ({@link YcsbAnswer}). */
    static String answer(YcsbQuery q) {
        return YcsbAnswer.body(RECORDS, SCAN_RECORDS, q);
    }

    static Stream<Arguments> storesAndModels() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (String store : stores()) {
            for (String model : Models.ALL) {
                b.add(Arguments.of(store, model));
            }
        }
        return b.build();
    }

    /** The model each store's server runs; cases come store by store, model by model, so few switches. */
    static final Map<String, String> ACTIVE = new java.util.HashMap<>();

    private static FanoutServer switched(String store, String model) throws Exception {
        FanoutServer server = SERVERS.get(store);
        if (!model.equals(ACTIVE.get(store))) {
            server.switchTo(model);
            ACTIVE.put(store, model);
        }
        return server;
    }

    /**
     * Every fanout and size, three keys each, one request at a time; then 120 mixed requests, 16 at
     * a time. (One invocation per store and model rather than per cell or per part: the leak check
     * after every test runs full GCs, which dominate with this many shards in one JVM.)
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("storesAndModels")
    void everyStoreAndModelGivesTheSameBytesAloneAndUnderConcurrentLoad(String store, String model) throws Exception {
        FanoutServer server = switched(store, model);
        for (int fanout : new int[] {1, 5, 20}) {
            for (Size size : Size.values()) {
                for (long key : new long[] {0, 7, RECORDS - 3}) {
                    YcsbQuery q = new YcsbQuery(fanout, size, key);
                    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + server.port() + TestCluster.path(q))).timeout(TestCluster.GENEROUS).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertEquals(200, r.statusCode(), store + " " + model + " " + q + ": " + r.body());
                    assertEquals(answer(q), r.body(), store + " " + model + " " + q);
                }
            }
        }
        List<YcsbQuery> qs = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            Size size = Size.values()[i % 3];
            int fanout = size == Size.LARGE ? 1 + i % 5 : new int[] {1, 5, 20}[i % 3 == 0 ? 2 : i % 2];
            qs.add(new YcsbQuery(fanout, size, (i * 31L) % RECORDS));
        }
        List<HttpResponse<String>> rs = TestCluster.getAll(HTTP, server.port(), qs, 16, TestCluster.GENEROUS);
        for (int i = 0; i < qs.size(); i++) {
            assertEquals(200, rs.get(i).statusCode(), store + " " + model + " concurrent " + qs.get(i) + ": " + rs.get(i).body());
            assertEquals(answer(qs.get(i)), rs.get(i).body(), store + " " + model + " concurrent " + qs.get(i));
        }
    }
}
