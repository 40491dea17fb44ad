package io.doubleface.services.ycsb;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.kv.KvLeafServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Shard failures under every model: a shard killed mid-run gives 503 naming the shard to the
 * requests that need it (and 200 to the others), and recovers when the shard comes back; a shard
 * that accepts connections but never answers gives 504 within the deadline, never a hang.
 *
 * <p>The faulty shard is the last one ({@link #FAULTY}); the cluster's leaf serves the others.
 */
class ShardFailureTest {

    static final int SHARDS = 20;
    static final int FAULTY = SHARDS - 1;

    static final List<String> MODELS = Models.ALL;

    /** Queries that call the faulty shard: fanout 1 on it, fanout 5 ending on it, fanout 20. */
    static final List<YcsbQuery> TOUCHING = List.of(
            new YcsbQuery(1, Size.SMALL, FAULTY),
            new YcsbQuery(5, Size.MEDIUM, FAULTY - 4),
            new YcsbQuery(20, Size.SMALL, 3),
            new YcsbQuery(2, Size.LARGE, FAULTY + SHARDS)); // key 39: shards 19 and 0

    /** Queries that avoid it. */
    static final List<YcsbQuery> AVOIDING = List.of(
            new YcsbQuery(1, Size.SMALL, 0),
            new YcsbQuery(5, Size.MEDIUM, 10),
            new YcsbQuery(19, Size.SMALL, 0),
            new YcsbQuery(3, Size.LARGE, 20 + 16)); // key 36: shards 16, 17, 18

    static {
        for (YcsbQuery q : TOUCHING) {
            assertTrue(TestCluster.touches(q, FAULTY, SHARDS), q.toString());
        }
        for (YcsbQuery q : AVOIDING) {
            assertTrue(!TestCluster.touches(q, FAULTY, SHARDS), q.toString());
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void killedShardGives503NamingItAndRecoversWhenItReturns(String model) throws Exception {
        KvLeafServer b = KvLeafServer.builder().shards(1).basePort(0).records(TestCluster.RECORDS).start();
        int port = b.port(0);
        try (TestCluster cluster = TestCluster.builder(SHARDS).configuration(model)
                .shardAt(FAULTY, new InetSocketAddress("127.0.0.1", port)).start()) {
            assertAllGood(cluster, TOUCHING);
            assertAllGood(cluster, AVOIDING);

            b.close(); // kill the shard mid-run: its connections drop, its port refuses

            for (int round = 0; round < 2; round++) {
                for (YcsbQuery q : TOUCHING) {
                    HttpResponse<String> r = cluster.get(q);
                    assertEquals(503, r.statusCode(), model + " " + q + ": " + r.body());
                    assertTrue(r.body().contains("shard " + FAULTY), "reason should name shard " + FAULTY + ": " + r.body());
                    assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("text/plain"), r.headers().toString());
                }
                assertAllGood(cluster, AVOIDING);
            }

            b = KvLeafServer.builder().shards(1).basePort(port).records(TestCluster.RECORDS).start();
            for (YcsbQuery q : TOUCHING) {
                HttpResponse<String> r = eventually200(cluster, q);
                assertEquals(cluster.expected(q), r.body(), model + " " + q + " after the shard came back");
            }
            assertAllGood(cluster, AVOIDING);
            assertEquals(0, cluster.requests("internal_error"));
            assertEquals(0, cluster.requests("timeout"), "a dead shard is unavailable, not slow");
        } finally {
            b.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void shardThatStopsAnsweringGives504AndOthersKeepWorking(String model) throws Exception {
        try (BlackHole hole = new BlackHole();
                TestCluster cluster = TestCluster.builder(SHARDS).configuration(model)
                        .deadline(Duration.ofMillis(300))
                        .shardAt(FAULTY, hole.address()).start()) {
            assertAllGood(cluster, AVOIDING);
            // The touching requests and the avoiding ones at once: the avoiding ones must not wait
            // for the hole. Four requests wait on it, fewer than the 8 threads of the blocking
            // models, so a blocking pool that is not full still serves the rest (a full one would
            // rightly queue them past the deadline: that is the thread-per-request trade-off).
            List<YcsbQuery> mixed = new ArrayList<>(TOUCHING);
            mixed.addAll(AVOIDING);
            List<HttpResponse<String>> rs = cluster.getAll(mixed, mixed.size(), Duration.ofSeconds(10));
            for (int i = 0; i < mixed.size(); i++) {
                YcsbQuery q = mixed.get(i);
                HttpResponse<String> r = rs.get(i);
                if (TestCluster.touches(q, FAULTY, SHARDS)) {
                    assertEquals(504, r.statusCode(), model + " " + q + ": " + r.body());
                    assertTrue(!r.body().isBlank(), "504 with a reason");
                } else {
                    assertEquals(200, r.statusCode(), model + " " + q + ": " + r.body());
                    assertEquals(cluster.expected(q), r.body());
                }
            }
            assertAllGood(cluster, AVOIDING);
            assertTrue(hole.received() > 0, "the black hole was called");
            assertEquals(0, cluster.requests("internal_error"));
        }
    }

    static void assertAllGood(TestCluster cluster, List<YcsbQuery> qs) throws Exception {
        for (YcsbQuery q : qs) {
            HttpResponse<String> r = cluster.get(q);
            assertEquals(200, r.statusCode(), q + ": " + r.body());
            assertEquals(cluster.expected(q), r.body(), q.toString());
        }
    }

    /** Retries {@code q} until it succeeds (the driver may be in its reconnect backoff); bounded. */
    static HttpResponse<String> eventually200(TestCluster cluster, YcsbQuery q) throws Exception {
        HttpResponse<String> r = null;
        for (int attempt = 0; attempt < 100; attempt++) {
            r = cluster.get(q);
            if (r.statusCode() == 200) {
                return r;
            }
            assertEquals(503, r.statusCode(), "while the shard reconnects: " + r.body());
            Thread.sleep(50);
        }
        throw new AssertionError(q + " still fails after the shard came back: " + r.statusCode() + " " + r.body());
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void closingTheServerWithRequestsStuckOnASilentShardDoesNotHang(String model) throws Exception {
        try (BlackHole hole = new BlackHole()) {
            TestCluster cluster = TestCluster.builder(SHARDS).configuration(model)
                    .shardAt(FAULTY, hole.address()).start(); // generous deadline: the requests stay stuck
            List<Thread> clients = new ArrayList<>();
            List<String> outcomes = new CopyOnWriteArrayList<>();
            try {
                for (YcsbQuery q : TOUCHING) {
                    RawHttp c = new RawHttp(cluster.server.port());
                    c.write(RawHttp.get(TestCluster.path(q)));
                    clients.add(Thread.ofPlatform().name("stuck-" + q.key()).start(() -> {
                        try (c) {
                            RawHttp.Response r = c.read();
                            outcomes.add(r == null ? "closed" : Integer.toString(r.status()));
                        } catch (IOException | AssertionError e) {
                            outcomes.add("closed: " + e.getMessage());
                        }
                    }));
                }
                long guard = System.nanoTime() + TestCluster.GENEROUS.toNanos();
                while (hole.received() == 0) {
                    assertTrue(System.nanoTime() - guard < 0, "no call reached the silent shard");
                    Thread.sleep(5);
                }
            } finally {
                Thread closer = Thread.ofPlatform().name("closer").start(cluster::close);
                closer.join(TestCluster.GENEROUS.toMillis());
                assertTrue(!closer.isAlive(), model + ": server close hangs with requests in flight");
            }
            for (Thread c : clients) {
                c.join(TestCluster.GENEROUS.toMillis());
                assertTrue(!c.isAlive(), model + ": a client was left waiting after the server closed");
            }
            assertEquals(TOUCHING.size(), outcomes.size(), outcomes.toString());
            for (String o : outcomes) {
                assertTrue(!o.equals("200"), model + ": a request on the silent shard succeeded: " + outcomes);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void shardKilledUnderConcurrentLoadFailsOnlyTheRequestsThatNeedIt(String model) throws Exception {
        KvLeafServer b = KvLeafServer.builder().shards(1).basePort(0).records(TestCluster.RECORDS).start();
        int clients = 8;
        int afterKill = 10; // requests each client sends once the shard is dead
        List<YcsbQuery> mix = new ArrayList<>(TOUCHING);
        mix.addAll(AVOIDING);
        try (TestCluster cluster = TestCluster.builder(SHARDS).configuration(model)
                .shardAt(FAULTY, new InetSocketAddress("127.0.0.1", b.port(0))).start()) {
            java.util.concurrent.atomic.AtomicLong answered = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicBoolean killed = new java.util.concurrent.atomic.AtomicBoolean();
            List<String> errors = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < clients; t++) {
                final int client = t;
                threads.add(Thread.ofPlatform().name("load-" + t).start(() -> {
                    try (RawHttp c = new RawHttp(cluster.server.port())) {
                        int sinceKill = 0;
                        for (int i = client; sinceKill < afterKill && errors.isEmpty(); i++) {
                            boolean deadBefore = killed.get();
                            YcsbQuery q = mix.get(i % mix.size());
                            RawHttp.Response r = c.exchange(RawHttp.get(TestCluster.path(q)));
                            answered.incrementAndGet();
                            boolean touches = TestCluster.touches(q, FAULTY, SHARDS);
                            if (r.status() == 200) {
                                if (touches && deadBefore) {
                                    errors.add(q + " succeeded although shard " + FAULTY + " was dead");
                                } else if (!cluster.expected(q).equals(r.text())) {
                                    errors.add(q + ": wrong body");
                                }
                            } else if (!(touches && r.status() == 503 && r.text().contains("shard " + FAULTY))) {
                                errors.add(q + " -> " + r);
                            }
                            if (deadBefore) {
                                sinceKill++;
                            }
                        }
                    } catch (Throwable e) {
                        errors.add("client " + client + ": " + e);
                    }
                }));
            }
            long guard = System.nanoTime() + TestCluster.GENEROUS.toNanos();
            while (answered.get() < 10L * clients && errors.isEmpty()) {
                assertTrue(System.nanoTime() - guard < 0, "no progress before the kill");
                Thread.sleep(2);
            }
            b.close(); // mid-run, with requests in flight
            killed.set(true);
            for (Thread t : threads) {
                t.join(TestCluster.GENEROUS.toMillis());
                assertTrue(!t.isAlive(), model + ": " + t.getName() + " hangs");
            }
            assertTrue(errors.isEmpty(), model + ": " + errors);
            Map<String, Object> stats = cluster.stats();
            assertEquals(answered.get(), JsonDoc.path(stats, "requests", "ok").asLong()
                    + JsonDoc.path(stats, "requests", "unavailable").asLong(), "every request answered once, ok or 503");
        } finally {
            b.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"thread-1", "type1-1"})
    void fullWorkerQueueGives503OverloadedAtOnce(String model) throws Exception {
        try (BlackHole hole = new BlackHole();
                TestCluster cluster = TestCluster.builder(SHARDS).configuration(model)
                        .shardAt(FAULTY, hole.address()).tweak(b -> b.queueLimit(1)).start()) {
            YcsbQuery stuck = new YcsbQuery(1, Size.SMALL, FAULTY);
            RawHttp first = new RawHttp(cluster.server.port());
            RawHttp second = new RawHttp(cluster.server.port());
            try (first; second) {
                first.write(RawHttp.get(TestCluster.path(stuck))); // occupies the only thread
                long guard = System.nanoTime() + TestCluster.GENEROUS.toNanos();
                while (hole.received() == 0) {
                    assertTrue(System.nanoTime() - guard < 0, "the first request never reached the shard");
                    Thread.sleep(5);
                }
                second.write(RawHttp.get(TestCluster.path(stuck))); // fills the queue
                guard = System.nanoTime() + TestCluster.GENEROUS.toNanos();
                while (JsonDoc.path(cluster.stats(), "requests", "admitted").asLong() < 2) {
                    assertTrue(System.nanoTime() - guard < 0, "the second request was never admitted");
                    Thread.sleep(5);
                }
                HttpResponse<String> r = cluster.get(new YcsbQuery(1, Size.SMALL, 0));
                assertEquals(503, r.statusCode(), model + ": " + r.body());
                assertTrue(r.body().contains("overloaded"), r.body());
                assertEquals("1", r.headers().firstValue("retry-after").orElse(null), "Retry-After of an overload refusal");
                assertEquals(1, cluster.requests("overloaded"));
                assertEquals(0, cluster.requests("unavailable"));
            }
        }
    }
}
