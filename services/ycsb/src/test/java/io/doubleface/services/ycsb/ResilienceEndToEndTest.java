package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.Resilience;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.kv.KvRequest;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * A backend behind a {@link io.doubleface.driver.spi.ResilientDriver}, over real sockets, under every
 * model: a killed shard opens its circuit after two failures, then requests that need it get 503
 * without a connection attempt while the others get 200; when the shard is back, the
 * probe after the open period closes the circuit; {@code /metrics} counts it all.
 */
class ResilienceEndToEndTest {

    static final int SHARDS = 4;
    static final int FAULTY = 3;
    static final List<String> MODELS = Models.ALL;

    static final YcsbQuery TOUCHING = new YcsbQuery(1, Size.SMALL, FAULTY);
    static final YcsbQuery AVOIDING = new YcsbQuery(3, Size.SMALL, 0);

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void killedShardOpensItsCircuitAndTheProbeClosesIt(String model) throws Exception {
        KvLeafServer shard = KvLeafServer.builder().shards(1).basePort(0).records(TestCluster.RECORDS).start();
        int port = shard.port(0);
        Resilience<KvRequest> policy = Resilience.<KvRequest>none().idempotent(r -> true)
                .circuitBreaker(2, Duration.ofMillis(400));
        try (TestCluster cluster = TestCluster.builder(SHARDS).configuration(model).resilience(policy)
                .shardAt(FAULTY, new InetSocketAddress("127.0.0.1", port)).start()) {
            ShardFailureTest.assertAllGood(cluster, List.of(TOUCHING, AVOIDING));
            shard.close();

            int failures = 0;
            HttpResponse<String> r;
            // two failures open it; a reconnect backoff of the driver may fail a call or two more fast
            do {
                r = cluster.get(TOUCHING);
                assertEquals(503, r.statusCode(), model + ": " + r.body());
                // the same words whether the connection was refused or the circuit is open: the
                // driver's detail is in the log and the failure's cause, never in the answer
                assertEquals("backend records: shard " + FAULTY + " unavailable\n", r.body(), model);
                failures++;
            } while (!cluster.adminGet("/metrics").body().contains(
                    "doubleface_backend_circuit_open{backend=\"records\"} 1.0") && failures < 20);
            ShardFailureTest.assertAllGood(cluster, List.of(AVOIDING));
            String metrics = cluster.adminGet("/metrics").body();
            assertTrue(metrics.contains("doubleface_backend_circuit_opened_total{backend=\"records\"} 1.0"), metrics);
            assertTrue(metrics.contains("doubleface_backend_circuit_open{backend=\"records\"} 1.0"), metrics);

            shard = KvLeafServer.builder().shards(1).basePort(port).records(TestCluster.RECORDS).start();
            Thread.sleep(500); // past the open period: the next call is the probe
            HttpResponse<String> back = ShardFailureTest.eventually200(cluster, TOUCHING);
            assertEquals(cluster.expected(TOUCHING), back.body());
            assertTrue(cluster.adminGet("/metrics").body()
                    .contains("doubleface_backend_circuit_open{backend=\"records\"} 0.0"));
        } finally {
            shard.close();
        }
    }
}
