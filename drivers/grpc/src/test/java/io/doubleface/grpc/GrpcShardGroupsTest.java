package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.testing.DnsTestServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A gRPC shard that is a replica group found by DNS SRV (an in-test DNS server): the channel's
 * members follow the records — a member added takes calls, a member removed from the records can
 * be stopped without a failed call.
 */
class GrpcShardGroupsTest {

    static final DriverSettings SETTINGS = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(5))
            .withConnectTimeout(Duration.ofSeconds(2));

    @Test
    void srvMembersFollowTheRecordsWithoutAFailedCall() throws Exception {
        try (DnsTestServer dns = new DnsTestServer();
                TestLeaves a = TestLeaves.start(1, 100, Transport.AUTO);
                TestLeaves b = TestLeaves.start(1, 100, Transport.AUTO)) {
            dns.ttl(1);
            dns.srv("_leaf._tcp.test", new DnsTestServer.Srv("127.0.0.1", a.port(0)));
            try (GrpcDriver driver = GrpcDriver.of("grpc://dns+srv:///_leaf._tcp.test?dns-server=127.0.0.1:"
                    + dns.address().getPort() + "&dns-min-ttl=200ms&dns-refresh=1s", SETTINGS)) {
                assertEquals(1, driver.shardCount());
                BlockingClient<GrpcCall<?, ?>> client = driver.openBlocking();
                for (int i = 0; i < 20; i++) {
                    assertEquals(TestLeaves.reply(0, i, 10), client.call(0, GrpcCall.of(TestLeaves.GET, "k:" + i + ":10"),
                            TimeUnit.SECONDS.toNanos(5)));
                }
                dns.srv("_leaf._tcp.test", new DnsTestServer.Srv("127.0.0.1", a.port(0)),
                        new DnsTestServer.Srv("127.0.0.1", b.port(0)));
                awaitMembers(driver, 2);
                dns.srv("_leaf._tcp.test", new DnsTestServer.Srv("127.0.0.1", b.port(0)));
                awaitMembers(driver, 1);
                Thread.sleep(2 * GroupNameResolver.POLL_MILLIS + 200); // the channel has the new members
                a.stop();
                for (int i = 0; i < 200; i++) {
                    assertEquals(TestLeaves.reply(0, i % 100, 10), client.call(0, GrpcCall.of(TestLeaves.GET,
                            "k:" + (i % 100) + ":10"), TimeUnit.SECONDS.toNanos(5)), "call " + i + " after a left");
                }
                assertTrue((Long) driver.topology().get("member_changes") >= 2, driver.topology().toString());
            }
        }
    }

    private static void awaitMembers(GrpcDriver driver, int n) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (((List<?>) ((Map<?, ?>) ((List<?>) driver.topology().get("shards")).get(0)).get("members")).size() != n) {
            assertTrue(System.nanoTime() < until, "members never became " + n + ": " + driver.topology());
            Thread.sleep(20);
        }
    }
}
