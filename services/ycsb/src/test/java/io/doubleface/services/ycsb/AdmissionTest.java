package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.Admission;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Admission control over real sockets: with the limit reached, one more request is refused at once
 * with {@code 503} and {@code Retry-After: 1} while the admitted ones are still in flight; when
 * they are answered, requests are admitted again; refusals are counted. The adaptive limit admits
 * ordinary load and reports its limit.
 */
@Timeout(60)
class AdmissionTest {

    @Test
    void aFixedLimitRefusesTheNextRequestAtOnceAndAdmitsAgainWhenTheFirstAreAnswered() throws Exception {
        // thread-8 with 400 ms of work per reply: a fanout-1 request is in flight for about 400 ms
        try (TestCluster c = TestCluster.builder(4).configuration("thread-8")
                .replyWorkNanos(TimeUnit.MILLISECONDS.toNanos(400))
                .tweak(b -> b.admission(Admission.fixed(2))).start();
                RawHttp a = new RawHttp(c.server.port());
                RawHttp b = new RawHttp(c.server.port());
                RawHttp third = new RawHttp(c.server.port())) {
            YcsbQuery q1 = new YcsbQuery(1, Size.SMALL, 3);
            YcsbQuery q2 = new YcsbQuery(1, Size.SMALL, 4);
            a.write(RawHttp.get(TestCluster.path(q1)));
            b.write(RawHttp.get(TestCluster.path(q2)));
            for (int i = 0; i < 1000 && c.server.internals().engine().inFlight() < 2; i++) {
                Thread.sleep(2); // until both are admitted
            }
            assertEquals(2, c.server.internals().engine().inFlight());

            third.write(RawHttp.get(TestCluster.path(new YcsbQuery(1, Size.SMALL, 5))));
            RawHttp.Response refused = third.read();
            // refused while the two admitted requests are still in flight, not after them
            assertEquals(2, c.server.internals().engine().inFlight(), "the refusal waited for the requests in flight");
            assertEquals(503, refused.status(), refused.toString());
            assertEquals("1", refused.header("retry-after"));
            assertEquals("overloaded: 2 requests in flight (limit 2); retry later\n", refused.text());

            RawHttp.Response r1 = a.read();
            RawHttp.Response r2 = b.read();
            assertEquals(200, r1.status(), r1.toString());
            assertEquals(c.expected(q1), r1.text());
            assertEquals(200, r2.status(), r2.toString());
            assertEquals(c.expected(q2), r2.text());

            // the connection that was refused stays usable, and the places are free again
            YcsbQuery q3 = new YcsbQuery(1, Size.SMALL, 6);
            third.write(RawHttp.get(TestCluster.path(q3)));
            RawHttp.Response again = third.read();
            assertEquals(200, again.status(), again.toString());
            assertEquals(c.expected(q3), again.text());

            assertEquals(1, c.requests("overloaded"));
            assertEquals(3, c.requests("ok"));
            java.util.Map<String, Object> stats = c.stats();
            assertEquals("fixed", JsonDoc.path(stats, "admission", "mode").asString());
            assertEquals(2, JsonDoc.path(stats, "admission", "limit").asLong());
            assertEquals(1, JsonDoc.path(stats, "admission", "refused").asLong());
            assertEquals(0, JsonDoc.path(stats, "admission", "in_flight").asLong());
        }
    }

    @Test
    void theAdaptiveLimitAdmitsOrdinaryLoadAndReportsItsLimit() throws Exception {
        try (TestCluster c = TestCluster.builder(4).configuration("doubleface")
                .tweak(b -> b.admission(Admission.adaptive(10, 5, 50))).start();
                RawHttp client = new RawHttp(c.server.port())) {
            for (int i = 0; i < 200; i++) {
                YcsbQuery q = new YcsbQuery(4, Size.SMALL, i);
                client.write(RawHttp.get(TestCluster.path(q)));
                RawHttp.Response r = client.read();
                assertEquals(200, r.status(), r.toString());
                assertEquals(c.expected(q), r.text());
            }
            java.util.Map<String, Object> stats = c.stats();
            assertEquals("adaptive", JsonDoc.path(stats, "admission", "mode").asString());
            long limit = JsonDoc.path(stats, "admission", "limit").asLong();
            // one request at a time: Gradient2 changes its limit only when at least half of it is
            // in flight (else the load is app-limited), so it stays at the initial 10
            assertEquals(10, limit, "adaptive limit");
            assertEquals(0, JsonDoc.path(stats, "admission", "refused").asLong());
            assertEquals(200, c.requests("ok"));
        }
    }

    @Test
    void aGrpcCallOverTheLimitGetsResourceExhausted() throws Exception {
        try (io.doubleface.kv.KvLeafServer leaf = io.doubleface.kv.KvLeafServer.builder().shards(2).start()) {
            io.doubleface.server.FanoutServer.Builder b = io.doubleface.server.FanoutServer.builder().port(0).grpc(0)
                    .adminPort(-1).admission(Admission.fixed(1));
            YcsbService.install(b, new KvRecords(new io.doubleface.kv.KvDriver(leaf.addresses())), leaf.records(), 10,
                    TimeUnit.MILLISECONDS.toNanos(400), true);
            try (io.doubleface.server.FanoutServer server = b.configuration("thread-8").start()) {
                io.grpc.ManagedChannel channel = io.grpc.netty.NettyChannelBuilder
                        .forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
                try {
                    io.doubleface.services.ycsb.v1.QueryRequest q = io.doubleface.services.ycsb.v1.QueryRequest
                            .newBuilder().setFanout(1).setSize("small").setKey(1).build();
                    com.google.common.util.concurrent.ListenableFuture<io.doubleface.services.ycsb.v1.QueryReply> slow =
                            io.doubleface.services.ycsb.v1.FanoutServiceGrpc.newFutureStub(channel).query(q);
                    for (int i = 0; i < 1000 && server.internals().engine().inFlight() == 0; i++) {
                        Thread.sleep(2); // until the first call is admitted
                    }
                    assertEquals(1, server.internals().engine().inFlight());
                    io.grpc.StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(
                            io.grpc.StatusRuntimeException.class,
                            () -> io.doubleface.services.ycsb.v1.FanoutServiceGrpc.newBlockingStub(channel)
                                    .withDeadlineAfter(10, TimeUnit.SECONDS).query(q));
                    assertEquals(io.grpc.Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.toString());
                    assertTrue(e.getStatus().getDescription().startsWith("overloaded"), e.toString());
                    assertEquals(1, server.internals().engine().inFlight(), "refused while the first call was still in flight");
                    assertTrue(slow.get(10, TimeUnit.SECONDS).getBody().size() > 0);
                    assertEquals(1, server.internals().stats().admission().refused());
                } finally {
                    channel.shutdownNow();
                }
            }
        }
    }

    @Test
    void parseReadsEveryFormAndRejectsTheRest() {
        assertEquals(Admission.unlimited(), Admission.parse("off"));
        assertEquals(Admission.fixed(250), Admission.parse("250"));
        assertEquals(Admission.adaptive(), Admission.parse("adaptive"));
        assertEquals(Admission.adaptive(50, 10, 500), Admission.parse("adaptive:50:10:500"));
        for (String bad : new String[] {"", "0", "-3", "fast", "adaptive:1:2", "adaptive:5:10:8"}) {
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> Admission.parse(bad), bad);
            assertTrue(e.getMessage().contains("admission") || e.getMessage().contains("maxInFlight"), e.getMessage());
        }
    }
}
