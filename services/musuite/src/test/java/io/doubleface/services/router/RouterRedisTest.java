package io.doubleface.services.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.doubleface.redis.RedisServers;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.musuite.TestServer;
import io.doubleface.services.router.v1.GetRequest;
import io.doubleface.services.router.v1.RouterGrpc;
import io.doubleface.services.router.v1.SetRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Router with real {@code redis-server} processes as its replicas ({@link RouterService#installOnRedis},
 * filled by {@link RouterLoader}): the same answers as {@link RouterReference} under every threading
 * model over HTTP and gRPC, every replica of a group holds exactly the group's keys, and a killed
 * replica costs a failover for gets and a missing replica for sets.
 */
class RouterRedisTest {

    static final int SERVERS = 6;
    static final RouterData DATA = new RouterData(7, 300, 16);
    static final RouterKeys LAYOUT = new RouterKeys(SERVERS, 3);
    static final Redis<String, String> REDIS = Redis.utf8();
    static RedisServers redis;
    static FanoutServer server;
    static ManagedChannel channel;
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    static void start() {
        redis = RedisServers.start(SERVERS, 0, "127.0.0.1");
        RouterLoader.load(redis.uri(), DATA, LAYOUT);
        server = start(redis.uri());
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
    }

    static FanoutServer start(String uri) {
        FanoutServer.Builder b = FanoutServer.builder();
        RouterService.installOnRedis(b, RedisDriver.of(uri, DriverSettings.DEFAULT
                .withCallTimeout(Duration.ofSeconds(2)).withConnectTimeout(Duration.ofSeconds(2))), 3, true);
        return b.grpc(0).port(0).adminPort(-1).ioThreads(2).configuration("doubleface").deadline(TestServer.GENEROUS)
                .start();
    }

    @AfterAll
    static void stop() {
        channel.shutdownNow();
        server.close();
        redis.close();
        HTTP.shutdownNow();
    }

    static HttpResponse<String> get(FanoutServer s, String pathAndQuery) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + pathAndQuery))
                .timeout(TestServer.GENEROUS).build(), HttpResponse.BodyHandlers.ofString());
    }

    static String ok(FanoutServer s, String pathAndQuery) throws Exception {
        HttpResponse<String> r = get(s, pathAndQuery);
        assertEquals(200, r.statusCode(), pathAndQuery + " -> " + r.body());
        return r.body();
    }

    static RouterGrpc.RouterBlockingStub stub() {
        return RouterGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    @Test
    void everyReplicaOfAGroupHoldsExactlyTheGroupsKeys() throws Exception {
        long[] perGroup = new long[LAYOUT.groups()];
        for (int n = 0; n < DATA.keys(); n++) {
            perGroup[LAYOUT.group(RouterData.key(n))]++;
        }
        try (RedisDriver d = RedisDriver.of(redis.uri()); BlockingClient<RedisCommand<?>> c = d.openBlocking()) {
            for (int leaf = 0; leaf < SERVERS; leaf++) {
                RedisCommand<Long> dbsize = REDIS.raw(CommandType.DBSIZE, IntegerOutput::new, a -> {});
                // the tests' own sets add keys; count only the preloaded ones
                long preloaded = 0;
                for (int n = 0; n < DATA.keys(); n++) {
                    if (LAYOUT.group(RouterData.key(n)) == leaf / 3) {
                        Object v = c.call(leaf, REDIS.get(RouterData.key(n)), TimeUnit.SECONDS.toNanos(5));
                        assertEquals(DATA.value(n), v, "server " + leaf + " key " + n);
                        preloaded++;
                    }
                }
                assertEquals(perGroup[leaf / 3], preloaded);
                assertTrue((Long) c.call(leaf, dbsize, TimeUnit.SECONDS.toNanos(5)) >= preloaded);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.musuite.Models#ALL")
    void everyModelAnswersAsTheReferenceOverHttpAndGrpc(String model) throws Exception {
        server.switchTo(model);
        RouterReference ref = new RouterReference(DATA, LAYOUT);
        for (int n = 0; n < 40; n += 3) {
            String key = RouterData.key(n);
            assertEquals(ref.get(key).toJson(), ok(server, RouterService.GET_PATH + "?key=" + key), model + " " + key);
            assertEquals(ref.get(key).toProto(), stub().get(GetRequest.newBuilder().setKey(key).build()));
        }
        assertTrue(ok(server, RouterService.GET_PATH + "?key=absent:" + model).contains("\"found\":false"));
        for (int i = 0; i < 6; i++) {
            String key = model + ":k" + i;
            String value = "v" + i + " é ✓";
            if (i % 2 == 0) {
                assertEquals(ref.set(key, value).toJson(), ok(server, RouterService.SET_PATH + "?key="
                        + RouterRedisTest.enc(key) + "&value=" + enc(value)));
            } else {
                assertEquals(ref.set(key, value).toProto(),
                        stub().set(SetRequest.newBuilder().setKey(key).setValue(value).build()));
            }
            for (int read = 0; read < 3; read++) { // round robin: each replica answers the new value
                assertEquals(ref.get(key).toJson(), ok(server, RouterService.GET_PATH + "?key=" + enc(key)));
            }
        }
    }

    static String enc(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void aKilledReplicaCostsAFailoverForGetsAndIsMissingFromSets() throws Exception {
        try (RedisServers own = RedisServers.start(SERVERS, 0, "127.0.0.1")) {
            RouterLoader.load(own.uri(), DATA, LAYOUT);
            FanoutServer s = start(own.uri());
            try {
                RouterReference ref = new RouterReference(DATA, LAYOUT);
                String key = RouterData.key(5);
                List<Integer> replicas = ref.replicas(key);
                own.kill(replicas.get(0));
                for (int i = 0; i < 6; i++) { // some of these read the killed replica first
                    assertEquals(ref.get(key).toJson(), ok(s, RouterService.GET_PATH + "?key=" + key));
                }
                ref.set(key, "two");
                assertEquals(new RouterResult.Stored(key, replicas.subList(1, 3), List.of(replicas.get(0))).toJson(),
                        ok(s, RouterService.SET_PATH + "?key=" + key + "&value=two"));
                own.kill(replicas.get(1));
                HttpResponse<String> noMajority = get(s, RouterService.SET_PATH + "?key=" + key + "&value=lost");
                assertEquals(503, noMajority.statusCode(), noMajority.body());
                assertTrue(noMajority.body().contains(RouterService.BACKEND), noMajority.body());
            } finally {
                s.close();
            }
        }
    }

    @Test
    void theLoaderRefusesAServerListThatIsNotTheLayout() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RouterLoader.load(redis.uri(), DATA, new RouterKeys(3, 3)));
        assertTrue(e.getMessage().contains("names 6 servers"), e.getMessage());
    }

    @Test
    void anUnknownSchemeIsRefusedWithTheExpectedForms() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RouterService.install(FanoutServer.builder(), "http://127.0.0.1:1", 3, false));
        assertTrue(e.getMessage().contains("redis://"), e.getMessage());
    }
}
