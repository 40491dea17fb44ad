package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.FanoutServer;
import io.doubleface.tune.Profile;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import io.doubleface.services.hdsearch.HdSearchData;
import io.doubleface.services.hdsearch.HdSearchReference;
import io.doubleface.services.hdsearch.LshIndex;
import io.doubleface.services.recommend.RecommendData;
import io.doubleface.services.recommend.RecommendReference;
import io.doubleface.services.router.RouterData;
import io.doubleface.services.router.RouterKeys;
import io.doubleface.services.router.RouterReference;
import io.doubleface.services.setalgebra.SetAlgebraData;
import io.doubleface.services.setalgebra.SetAlgebraQuery;
import io.doubleface.services.setalgebra.SetAlgebraReference;
import java.util.List;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@code leaf <μSuite service>} and {@code serve <μSuite service>} started in-process on free ports. */
class MuSuiteCommandsTest {

    private static final Pattern LISTENING =
            Pattern.compile("listening on (\\S+) \\(\\d+ (leaves|redis-server processes)\\)");

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** Waits for a leaf command's listening line; the leaves' URI. */
    static String leavesUri(CliRun leaf, CompletableFuture<Integer> exit) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            Matcher m = LISTENING.matcher(leaf.out());
            if (m.find()) {
                return (m.group(2).equals("leaves") ? "grpc://" : "redis://") + m.group(1);
            }
            if (exit.isDone()) {
                throw new AssertionError("leaf command ended: " + exit.get() + "\n" + leaf.err());
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no listening line: " + leaf.out() + leaf.err());
    }

    static String get(FanoutServer server, String pathAndQuery, int status) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                + pathAndQuery)).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(status, r.statusCode(), r.body());
        return r.body();
    }

    /** What a test checks against a running mid-tier (and its own output). */
    @FunctionalInterface
    interface Check {
        void check(FanoutServer server, CliRun mid, CliRun leaf) throws Exception;
    }

    /**
     * Runs {@code doubleface leaf ...} (with {@code --base-port 0}), then {@code doubleface serve ...}
     * over the leaves it printed (with {@code --port 0 --admin-port -1 --io-threads 1} and 30 s timeouts), runs
     * {@code check}, and stops both, each of which must exit 0.
     */
    static void withLeavesAndMidTier(String[] leafArgs, String[] serveArgs, Check check) throws Exception {
        CliRun leaf = new CliRun();
        CompletableFuture<Integer> leafExit = leaf.start(concat(leafArgs, new String[] {"--base-port", "0"}));
        try {
            String uri = leavesUri(leaf, leafExit);
            CliRun mid = new CliRun();
            // generous timeouts: a cold leaf on a busy 2-core machine may take over the default 1 s
            CompletableFuture<Integer> midExit = mid.start(concat(serveArgs, new String[] {"--leaves", uri,
                "--port", "0", "--admin-port", "-1", "--io-threads", "1", "--call-timeout", "30s", "--deadline",
                "30s"}));
            FanoutServer server = mid.server.get(30, TimeUnit.SECONDS);
            try {
                check.check(server, mid, leaf);
            } finally {
                assertEquals(0, mid.stopAndAwait(midExit), mid.err());
            }
        } finally {
            assertEquals(0, leaf.stopAndAwait(leafExit), leaf.err());
        }
    }

    @Test
    void hdsearchLeavesAndMidTierAnswerAsTheReference() throws Exception {
        String[] data = {"--points", "600", "--dims", "8", "--clusters", "6", "--seed", "5"};
        withLeavesAndMidTier(concat(new String[] {"leaf", "hdsearch", "--leaves", "3"}, data),
                concat(new String[] {"serve", "hdsearch", "--lsh-bits", "6", "--config", "type2b"}, data),
                (server, mid, leaf) -> {
                    HdSearchData d = HdSearchData.of(5, 600, 8, 6);
                    HdSearchReference ref = new HdSearchReference(d, LshIndex.build(d, LshIndex.DEFAULT_TABLES, 6,
                            LshIndex.DEFAULT_SEED));
                    for (int j = 0; j < 5; j++) {
                        assertEquals(ref.search(d.query(j), 4).toJson(), get(server, "/hdsearch?query=" + j + "&k=4",
                                200));
                    }
                    assertTrue(get(server, "/hdsearch?k=4", 400).contains("exactly one of query"));
                    assertTrue(mid.out().contains("config   type2b"), mid.out());
                    assertTrue(mid.out().contains("(3 leaves)"), mid.out());
                });
    }

    @Test
    void routerLeavesAndMidTierSetAndGet() throws Exception {
        withLeavesAndMidTier(new String[] {"leaf", "router", "--leaves", "6", "--replicas", "3", "--keys", "50",
            "--value-size", "8", "--seed", "3"}, new String[] {"serve", "router"}, (server, mid, leaf) -> {
                assertTrue(leaf.out().contains("2 groups of 3 replicas"), leaf.out());
                RouterReference ref = new RouterReference(new RouterData(3, 50, 8), new RouterKeys(6, 3));
                assertEquals(ref.get("key:7").toJson(), get(server, "/router/get?key=key:7", 200));
                assertEquals(ref.set("user:1", "hello").toJson(), get(server, "/router/set?key=user:1&value=hello",
                        200));
                assertEquals(ref.get("user:1").toJson(), get(server, "/router/get?key=user:1", 200));
                assertTrue(get(server, "/router/get", 400).contains("key: missing"));
            });
    }

    @Test
    void routerOverRedisReplicasSetsAndGetsAsOverGrpcLeaves() throws Exception {
        withLeavesAndMidTier(new String[] {"leaf", "router", "--store", "redis", "--leaves", "6", "--replicas", "3",
            "--keys", "50", "--value-size", "8", "--seed", "3"}, new String[] {"serve", "router"},
            (server, mid, leaf) -> {
                assertTrue(leaf.out().contains("(6 redis-server processes): 2 groups of 3 replicas"), leaf.out());
                assertTrue(mid.out().contains("(6 redis servers)"), mid.out());
                RouterReference ref = new RouterReference(new RouterData(3, 50, 8), new RouterKeys(6, 3));
                for (int n = 0; n < 50; n += 7) {
                    assertEquals(ref.get("key:" + n).toJson(), get(server, "/router/get?key=key:" + n, 200));
                }
                assertEquals(ref.set("user:1", "hello").toJson(), get(server, "/router/set?key=user:1&value=hello",
                        200));
                assertEquals(ref.get("user:1").toJson(), get(server, "/router/get?key=user:1", 200));
            });
    }

    @Test
    void setalgebraLeavesAndMidTierAnswerAsTheReference() throws Exception {
        String[] corpus = {"--docs", "800", "--vocabulary", "200", "--stop-words", "10", "--seed", "9"};
        withLeavesAndMidTier(concat(new String[] {"leaf", "setalgebra", "--leaves", "2"}, corpus),
                concat(new String[] {"serve", "setalgebra"}, corpus), (server, mid, leaf) -> {
                    SetAlgebraData d = SetAlgebraData.of(9, 800, 200, 10);
                    SetAlgebraReference ref = new SetAlgebraReference(d);
                    for (int j = 0; j < 5; j++) {
                        SetAlgebraQuery q = new SetAlgebraQuery(d.query(j), List.of(), 20);
                        assertEquals(ref.search(q, 2, List.of()).toJson(), get(server, "/setalgebra?limit=20&query="
                                + j, 200));
                    }
                    assertTrue(get(server, "/setalgebra?terms=w0", 400).contains("only stop words"));
                });
    }

    @Test
    void setalgebraUnderTheLoadAdapterStartsOnItsProfilesChoiceAndAnswersAsTheReference(@TempDir Path dir)
            throws Exception {
        Path profile = dir.resolve("setalgebra.json");
        Profile.builder().service("setalgebra")
                .point("sip", new Profile.Point(100, 50, 100, 200, 100, 0.5, false))
                .point("adb", new Profile.Point(100, 80, 300, 600, 100, 0.2, false))
                .point("adb", new Profile.Point(5000, 90, 400, 800, 5000, 1.0, false))
                .build().write(profile);
        String[] corpus = {"--docs", "800", "--vocabulary", "200", "--stop-words", "10", "--seed", "9"};
        withLeavesAndMidTier(concat(new String[] {"leaf", "setalgebra", "--leaves", "2"}, corpus),
                concat(new String[] {"serve", "setalgebra", "--config", "adaptive", "--profile", profile.toString(),
                    "--prepare", "sip"}, corpus), (server, mid, leaf) -> {
                    assertNotNull(server.internals().adapter());
                    // the peak-sustaining configuration first, as under serve ycsb
                    assertEquals("adb-1n-4w-4r", server.configuration().name());
                    assertTrue(mid.out().contains("adapter  adaptive, detector ring-16, profile " + profile
                            + " (2 configurations)"), mid.out());
                    SetAlgebraData d = SetAlgebraData.of(9, 800, 200, 10);
                    SetAlgebraReference ref = new SetAlgebraReference(d);
                    for (int j = 0; j < 5; j++) {
                        SetAlgebraQuery q = new SetAlgebraQuery(d.query(j), List.of(), 20);
                        assertEquals(ref.search(q, 2, List.of()).toJson(), get(server, "/setalgebra?limit=20&query="
                                + j, 200));
                    }
                });
    }

    @Test
    void recommendLeavesAndMidTierAnswerAsTheReference() throws Exception {
        String[] ratings = {"--users", "60", "--items", "80", "--ratings", "1500", "--seed", "4"};
        withLeavesAndMidTier(concat(new String[] {"leaf", "recommend", "--leaves", "2"}, ratings),
                concat(new String[] {"serve", "recommend", "--config", "thread-4"}, ratings), (server, mid, leaf) -> {
                    RecommendReference ref = new RecommendReference(RecommendData.of(4, 60, 80, 1500), 2);
                    for (int u = 0; u < 5; u++) {
                        assertEquals(ref.predict(u, u + 1, List.of()).toJson(), get(server, "/recommend?user=" + u
                                + "&item=" + (u + 1), 200));
                    }
                    assertTrue(get(server, "/recommend?user=60&item=1", 400).contains("user: 60"));
                });
    }

    @Test
    void badDataParametersAreUsageErrors() {
        CliRun rc = new CliRun();
        assertEquals(DoubleFaceCli.EXIT_USAGE, rc.run("serve", "recommend", "--leaves", "grpc://127.0.0.1:1",
                "--users", "0"));
        assertTrue(rc.err().contains("--users: 0"), rc.err());
        CliRun sa = new CliRun();
        assertEquals(DoubleFaceCli.EXIT_USAGE, sa.run("leaf", "setalgebra", "--stop-words", "-1", "--base-port", "0"));
        assertTrue(sa.err().contains("--stop-words: -1"), sa.err());
        CliRun l = new CliRun();
        assertEquals(DoubleFaceCli.EXIT_USAGE, l.run("leaf", "router", "--leaves", "4", "--base-port", "0"));
        assertTrue(l.err().contains("leaves: 4"), l.err());
        CliRun r = new CliRun();
        assertEquals(DoubleFaceCli.EXIT_USAGE, r.run("leaf", "hdsearch", "--dims", "0", "--base-port", "0"));
        assertTrue(r.err().contains("dims: 0"), r.err());
        CliRun s = new CliRun();
        assertEquals(DoubleFaceCli.EXIT_USAGE, s.run("serve", "hdsearch", "--port", "0"));
        assertTrue(s.err().contains("--leaves"), s.err());
        CliRun p = new CliRun();
        assertEquals(DoubleFaceCli.EXIT_USAGE, p.run("serve", "router", "--leaves", "grpc://127.0.0.1:1-3",
                "--profile", "p.json"));
        assertTrue(p.err().contains("--profile applies only to --config adaptive"), p.err());
        CliRun m = new CliRun();
        assertEquals(DoubleFaceCli.EXIT_USAGE, m.run("serve", "router", "--leaves", "grpc://127.0.0.1:1-3",
                "--config", "adaptive", "--profile", "/no/such/profile.json"));
        assertTrue(m.err().contains("--profile: cannot read /no/such/profile.json"), m.err());
    }

    static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
