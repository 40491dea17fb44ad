package io.doubleface.kv;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.DnsTestServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shards as replica groups over real KV leaves: members found by DNS (an in-test DNS server whose
 * records change under load: SRV with ports, A records on one port), from a watched file, or listed
 * ({@code a|b}); a member added gets calls within a re-resolution, one removed is drained with no
 * failed call, an unresolvable name fails the open, a dead member's calls go to the live one.
 */
class KvShardGroupsTest {

    static final int RECORDS = 100;
    static final KvDriver.Options OPTIONS = KvDriver.Options.DEFAULT.withCallTimeout(Duration.ofSeconds(2))
            .withConnectTimeout(Duration.ofSeconds(1)).withReconnectBackoff(Duration.ofMillis(50));

    static long events(KvLeafServer leaf) {
        return leaf.loopGroup().events();
    }

    /** Reads on one loop, two every millisecond, each reply compared with the records; counts and keeps failures. */
    static final class Load implements ReplyListener {
        final EventLoop loop;
        final LoopClient<KvRequest> client;
        final AtomicLong ok = new AtomicLong();
        final List<String> bad = new CopyOnWriteArrayList<>();
        private final java.util.Map<Integer, KvRequest> sent = new java.util.HashMap<>();
        private int next;
        private io.netty.util.concurrent.ScheduledFuture<?> task;

        Load(EventLoop loop, KvDriver driver) {
            this.loop = loop;
            this.client = driver.openOn(loop);
        }

        void start() {
            task = loop.scheduleAtFixedRate(() -> {
                for (int j = 0; j < 2; j++) { // 2,000 calls/s: under load, and within the bound of outstanding calls on a busy machine
                    int tag = ++next;
                    KvRequest r = KvRequest.readRecord(tag % RECORDS);
                    sent.put(tag, r);
                    client.send(0, r, this, tag);
                }
            }, 0, 1, TimeUnit.MILLISECONDS);
        }

        @Override
        public void onReply(int tag, Object reply) {
            KvRequest r = sent.remove(tag);
            ByteBuf want = Unpooled.buffer();
            Records.writeReply(r, RECORDS, want);
            try {
                if (ByteBufUtil.equals(want, (ByteBuf) reply)) {
                    ok.incrementAndGet();
                } else {
                    bad.add("wrong reply to " + r);
                }
            } finally {
                want.release();
                ReferenceCountUtil.release(reply);
            }
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            sent.remove(tag);
            bad.add(cause.kind() + " " + cause.getMessage());
        }

        void stop() throws InterruptedException {
            loop.submit(() -> task.cancel(false)).syncUninterruptibly();
            for (int i = 0; i < 300 && loop.submit(sent::size).syncUninterruptibly().getNow() > 0; i++) {
                Thread.sleep(10);
            }
            assertEquals(0, (int) loop.submit(sent::size).syncUninterruptibly().getNow(), "calls without an outcome");
        }
    }

    /** A read through the driver's blocking face (the thread models) answers the record's bytes. */
    static void assertBlockingRead(KvDriver driver, int shard) throws Exception {
        BlockingClient<KvRequest> blocking = driver.openBlocking();
        ByteBuf r = (ByteBuf) blocking.call(shard, KvRequest.readField(7, 3), TimeUnit.SECONDS.toNanos(5));
        ByteBuf want = Unpooled.buffer();
        Records.writeReply(KvRequest.readField(7, 3), RECORDS, want);
        try {
            assertTrue(ByteBufUtil.equals(want, r));
        } finally {
            want.release();
            r.release();
        }
    }

    static void awaitTrue(java.util.function.BooleanSupplier c, String what) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!c.getAsBoolean()) {
            assertTrue(System.nanoTime() < until, "not within 15 s: " + what);
            Thread.sleep(20);
        }
    }

    @Test
    void srvMembersAddedAndRemovedUnderLoadLoseNoCall() throws Exception {
        try (DnsTestServer dns = new DnsTestServer();
                KvLeafServer a = KvLeafServer.builder().shards(1).records(RECORDS).start();
                KvLeafServer b = KvLeafServer.builder().shards(1).records(RECORDS).start();
                LoopGroup group = new LoopGroup("kvgroups", 1, Transport.AUTO)) {
            dns.ttl(1);
            dns.srv("_kv._tcp.leaves.test", new DnsTestServer.Srv("127.0.0.1", a.port(0)));
            String uri = "kv://dns+srv:///_kv._tcp.leaves.test?dns-server=127.0.0.1:" + dns.address().getPort()
                    + "&dns-min-ttl=200ms&dns-refresh=1s";
            try (KvDriver driver = KvDriver.of(uri, OPTIONS)) {
                assertEquals(1, driver.shardCount());
                Load load = new Load(group.loops().get(0), driver);
                load.start();
                Thread.sleep(300);
                long bBefore = events(b);
                dns.srv("_kv._tcp.leaves.test", new DnsTestServer.Srv("127.0.0.1", a.port(0)),
                        new DnsTestServer.Srv("127.0.0.1", b.port(0)));
                long resolutionsBefore = (Long) driver.topology().get("resolutions");
                awaitTrue(() -> events(b) > bBefore + 100, "the added member serves calls");
                long resolutionsToCalls = (Long) driver.topology().get("resolutions") - resolutionsBefore;
                // one resolution may have been under way when the records changed; the next one sees b
                assertTrue(resolutionsToCalls <= 2, "the added member got calls after " + resolutionsToCalls
                        + " resolutions (expected: within one re-resolution)");
                // a leaves: drained, not failed
                dns.srv("_kv._tcp.leaves.test", new DnsTestServer.Srv("127.0.0.1", b.port(0)));
                awaitTrue(() -> ((List<?>) ((Map<?, ?>) ((List<?>) driver.topology().get("shards")).get(0)).get("members"))
                        .size() == 1, "the removal seen");
                Thread.sleep(OPTIONS.callTimeout().toMillis() + 1500); // the drain grace
                a.close(); // a call still sent to a would now fail
                Thread.sleep(500);
                load.stop();
                assertEquals(List.of(), load.bad, "failed or wrong calls");
                assertTrue(load.ok.get() > 1000, "answers: " + load.ok.get());
                assertTrue((Long) driver.topology().get("member_changes") >= 2, driver.topology().toString());
            }
        }
    }

    @Test
    void aRecordsGiveTheMembersOfOneShardOnOnePort() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = probe.getLocalPort();
        }
        try (DnsTestServer dns = new DnsTestServer();
                KvLeafServer a = KvLeafServer.builder().host("127.0.0.2").basePort(port).shards(1).records(RECORDS).start();
                KvLeafServer b = KvLeafServer.builder().host("127.0.0.3").basePort(port).shards(1).records(RECORDS).start();
                LoopGroup group = new LoopGroup("kvgroups", 1, Transport.AUTO)) {
            dns.a("leaves.test", InetAddress.getByName("127.0.0.2"), InetAddress.getByName("127.0.0.3"));
            try (KvDriver driver = KvDriver.of("kv://dns:///leaves.test:" + port + "?dns-server=127.0.0.1:"
                    + dns.address().getPort(), OPTIONS)) {
                long a0 = events(a);
                long b0 = events(b);
                Load load = new Load(group.loops().get(0), driver);
                load.start();
                awaitTrue(() -> events(a) > a0 + 50 && events(b) > b0 + 50, "both members serve calls");
                load.stop();
                assertEquals(List.of(), load.bad);
                // the blocking face (thread models) reaches the group too
                assertBlockingRead(driver, 0);
            }
        }
    }

    @Test
    void aNameThatDoesNotResolveFailsTheOpenWithTheName() {
        try (DnsTestServer dns = new DnsTestServer()) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> KvDriver.of(
                    "kv://dns:///nowhere.test:7101?dns-server=127.0.0.1:" + dns.address().getPort(), OPTIONS));
            assertTrue(e.getMessage().contains("nowhere.test"), e.getMessage());
            IllegalArgumentException noPort = assertThrows(IllegalArgumentException.class,
                    () -> KvDriver.of("kv://dns:///nowhere.test", OPTIONS));
            assertTrue(noPort.getMessage().contains("has no port"), noPort.getMessage());
            IllegalArgumentException opt = assertThrows(IllegalArgumentException.class,
                    () -> KvDriver.of("kv://dns:///x.test:1?dns-ttl=1s", OPTIONS));
            assertTrue(opt.getMessage().contains("unknown option 'dns-ttl'"), opt.getMessage());
        }
    }

    @Test
    void aDeadMemberOfAStaticGroupLeavesItsCallsToTheLiveOne() throws Exception {
        // a port bound but never listening, held for the whole test: connections to it are refused
        try (java.net.Socket dead = new java.net.Socket();
                KvLeafServer live = KvLeafServer.builder().shards(1).records(RECORDS).start();
                LoopGroup group = new LoopGroup("kvgroups", 1, Transport.AUTO)) {
            dead.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            int deadPort = dead.getLocalPort();
            try (KvDriver driver = KvDriver.of("kv://127.0.0.1:" + deadPort + "|127.0.0.1:" + live.port(0), OPTIONS)) {
                Load load = new Load(group.loops().get(0), driver);
                load.start();
                Thread.sleep(500);
                load.stop();
                assertEquals(List.of(), load.bad, "every call answered by the live member");
                assertTrue(load.ok.get() > 100);
            }
        }
    }

    @Test
    void aPortRangeOnANameIsOneShardPerPort() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = probe.getLocalPort();
        }
        try (DnsTestServer dns = new DnsTestServer();
                KvLeafServer a = KvLeafServer.builder().host("127.0.0.2").basePort(port).shards(2).records(RECORDS).start();
                KvLeafServer b = KvLeafServer.builder().host("127.0.0.3").basePort(port).shards(2).records(RECORDS).start()) {
            dns.a("leaves.test", InetAddress.getByName("127.0.0.2"), InetAddress.getByName("127.0.0.3"));
            try (KvDriver driver = KvDriver.of("kv://dns:///leaves.test:" + port + "-" + (port + 1)
                    + "?dns-server=127.0.0.1:" + dns.address().getPort(), OPTIONS)) {
                assertEquals(2, driver.shardCount());
                List<?> shards = (List<?>) driver.topology().get("shards");
                for (int s = 0; s < 2; s++) {
                    assertEquals(List.of("127.0.0.2:" + (port + s), "127.0.0.3:" + (port + s)),
                            ((List<?>) ((Map<?, ?>) shards.get(s)).get("members")).stream().map(String::valueOf)
                                    .map(m -> m.replaceFirst("^[^/]*/", "")).sorted().toList(),
                            "shard " + s + ": " + shards.get(s));
                }
                assertBlockingRead(driver, 1);
            }
        }
    }

    @Test
    void aMemberThatStopsAnsweringIsSetAsideAfterFailuresInARow() throws Exception {
        // a member that accepts connections (the kernel's backlog) but never answers: every call to it times out
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                KvLeafServer live = KvLeafServer.builder().shards(1).records(RECORDS).start();
                LoopGroup group = new LoopGroup("kvgroups", 1, Transport.AUTO);
                KvDriver driver = KvDriver.of("kv://127.0.0.1:" + silent.getLocalPort() + "|127.0.0.1:" + live.port(0),
                        OPTIONS.withCallTimeout(Duration.ofMillis(200)))) {
            EventLoop loop = group.loops().get(0);
            LoopClient<KvRequest> client = driver.openOn(loop);
            int calls = 60;
            int failed = 0;
            int lastFailure = -1;
            for (int i = 0; i < calls; i++) { // one call at a time: both members have none outstanding at each choice
                io.doubleface.testing.Outcomes out = new io.doubleface.testing.Outcomes(loop, 1);
                KvRequest r = KvRequest.readRecord(i % RECORDS);
                loop.execute(() -> client.send(0, r, out, 0));
                out.await();
                if (out.replied(0)) {
                    ReferenceCountUtil.release(out.value(0));
                } else {
                    assertEquals(ShardException.Kind.TIMEOUT, out.kind(0), () -> String.valueOf(out.failure(0)));
                    failed++;
                    lastFailure = i;
                }
            }
            assertEquals(io.doubleface.driver.spi.PipelinedLoopClient.EJECT_AFTER_FAILURES, failed,
                    "the silent member's calls until it was set aside");
            assertTrue(lastFailure < 2 * io.doubleface.driver.spi.PipelinedLoopClient.EJECT_AFTER_FAILURES,
                    "every call after the silent member was set aside went to the live one (last failure: call " + lastFailure + ")");
            assertEquals(1L, driver.topology().get("member_ejections"), "topology: " + driver.topology());
        }
    }

    @Test
    void aWatchedFileMovesTheShardToItsNewMember(@TempDir Path dir) throws Exception {
        try (KvLeafServer a = KvLeafServer.builder().shards(1).records(RECORDS).start();
                KvLeafServer b = KvLeafServer.builder().shards(1).records(RECORDS).start();
                LoopGroup group = new LoopGroup("kvgroups", 1, Transport.AUTO)) {
            Path f = dir.resolve("shards.json");
            Files.writeString(f, "{\"shards\": [[\"127.0.0.1:" + a.port(0) + "\"]]}");
            try (KvDriver driver = KvDriver.of("kv://file:" + f, OPTIONS)) {
                Load load = new Load(group.loops().get(0), driver);
                load.start();
                Thread.sleep(200);
                long b0 = events(b);
                Files.writeString(f, "{\"shards\": [[\"127.0.0.1:" + b.port(0) + "\"]]}");
                Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
                awaitTrue(() -> events(b) > b0 + 100, "the new member serves calls");
                load.stop();
                assertEquals(List.of(), load.bad);
                // a file whose shard count changes is refused: the groups stay
                Files.writeString(f, "{\"shards\": [[\"127.0.0.1:1\"], [\"127.0.0.1:2\"]]}");
                Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 10000));
                awaitTrue(() -> String.valueOf(driver.topology().get("last_resolution_error")).contains("2 shards"),
                        "the bad file reported");
                assertEquals(1, driver.shardCount());
            }
        }
    }
}
