package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.FanoutServer;
import io.doubleface.services.social.SocialData;
import io.doubleface.services.social.SocialReference;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code leaf social} and {@code serve social} started in-process on free ports; their help and usage errors. */
class SocialCommandsTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    static final String[] DATA = {"--users", "80", "--followees", "5", "--posts-per-user", "2", "--seed", "3"};

    static HttpResponse<String> send(FanoutServer s, HttpRequest.Builder b, String pathAndQuery) throws Exception {
        return HTTP.send(b.uri(URI.create("http://127.0.0.1:" + s.port() + pathAndQuery)).timeout(Duration.ofSeconds(30))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void leafAndMidTierAnswerAsTheReference(@TempDir Path dir) throws Exception {
        CliRun leaf = new CliRun();
        Path ready = dir.resolve("leaf.json");
        CompletableFuture<Integer> leafExit = leaf.start(MuSuiteCommandsTest.concat(new String[] {"leaf", "social",
            "--redis-shards", "2", "--mongo-shards", "2", "--redis-base-port", "0", "--mongo-base-port", "0",
            "--ready-file", ready.toString()}, DATA));
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(ready) && System.nanoTime() < end && !leafExit.isDone()) {
                Thread.sleep(20);
            }
            assertTrue(Files.exists(ready), "no ready file: " + leaf.out() + leaf.err());
            Map<String, Object> uris = ReadyFile.read(ready);
            assertTrue(leaf.out().contains("serve    doubleface serve social --redis " + uris.get("redis")), leaf.out());
            CliRun mid = new CliRun();
            CompletableFuture<Integer> midExit = mid.start(MuSuiteCommandsTest.concat(new String[] {"serve", "social",
                "--redis", (String) uris.get("redis"), "--mongo", (String) uris.get("mongo"), "--load-data",
                "--server-id", "5", "--config", "type2a-1f2b", "--port", "0", "--admin-port", "-1", "--io-threads",
                "1"}, DATA));
            FanoutServer server = mid.server.get(60, TimeUnit.SECONDS);
            try {
                SocialData d = SocialData.of(3, 80, 5, 2, SocialData.DEFAULT_POPULARITY);
                SocialReference ref = new SocialReference(d);
                for (int u = 0; u < 80; u += 13) {
                    HttpResponse<String> r = send(server, HttpRequest.newBuilder(), "/social/timeline?user=" + u);
                    assertEquals(200, r.statusCode(), r.body());
                    assertEquals(ref.timeline(u, 10).toJson(), r.body());
                }
                HttpResponse<String> posted = send(server, HttpRequest.newBuilder()
                        .POST(HttpRequest.BodyPublishers.ofString("{\"user\":7,\"text\":\"hi\"}")), "/social/posts");
                assertEquals(201, posted.statusCode(), posted.body());
                assertTrue(posted.body().endsWith(",\"followers\":" + d.followers(7).length + "}\n"), posted.body());
                assertEquals(400, send(server, HttpRequest.newBuilder(), "/social/timeline?user=80").statusCode());
                assertTrue(mid.out().contains("config   type2a-1f2b"), mid.out());
                assertTrue(mid.out().contains("posts    ids sequence << 10 | server 5"), mid.out());
                assertTrue(mid.out().contains(", loaded"), mid.out());

                // load-data social puts the seeded data back: the composed post leaves the timelines
                assertTrue(d.followers(7).length > 0, "user 7 has followers in this data");
                int follower = d.followers(7)[0];
                String path = "/social/timeline?user=" + follower;
                String id = posted.body().replaceAll("(?s)^\\{\"id\":(\\d+),.*", "$1");
                String before = send(server, HttpRequest.newBuilder(), path).body();
                assertTrue(before.contains("\"id\":" + id + ","), "post " + id + " on follower " + follower + "'s timeline: "
                        + before);
                CliRun load = new CliRun();
                assertEquals(0, load.run(MuSuiteCommandsTest.concat(new String[] {"load-data", "social", "--redis",
                    (String) uris.get("redis"), "--mongo", (String) uris.get("mongo")}, DATA)), load.err());
                assertTrue(load.out().contains("load-data: social: "), load.out());
                assertEquals(ref.timeline(follower, 10).toJson(), send(server, HttpRequest.newBuilder(), path).body());
            } finally {
                assertEquals(0, mid.stopAndAwait(midExit), mid.err());
            }
        } finally {
            assertEquals(0, leaf.stopAndAwait(leafExit), leaf.err());
        }
    }

    @Test
    void helpShowsExamplesAndExitCodes() {
        for (String cmd : new String[] {"serve", "leaf"}) {
            CliRun r = new CliRun();
            assertEquals(0, r.run(cmd, "social", "--help"));
            assertTrue(r.out().contains("Example:") && r.out().contains("Exit codes:"), r.out());
            assertTrue(r.out().contains("--posts-per-user") && r.out().contains("--popularity"), r.out());
        }
    }

    @Test
    void badOptionsAreUsageErrors(@TempDir Path dir) {
        String[][] bad = {
            {"serve", "social", "--mongo", "mongodb://127.0.0.1:1"},
            {"serve", "social", "--redis", "redis://127.0.0.1:1", "--mongo", "mongodb://127.0.0.1:1", "--users", "1"},
            {"serve", "social", "--redis", "redis://127.0.0.1:1", "--mongo", "mongodb://127.0.0.1:1", "--server-id",
                "1023"},
            {"serve", "social", "--redis", "x", "--mongo", "mongodb://127.0.0.1:1"},
            {"leaf", "social", "--redis-shards", "0"},
            {"leaf", "social", "--followees", "0"},
            {"leaf", "social", "--ready-file", dir.resolve("missing/ready.json").toString()},
            {"load-data", "social", "--mongo", "mongodb://127.0.0.1:1"},
            {"load-data", "social", "--redis", "redis://127.0.0.1:1", "--mongo", "mongodb://127.0.0.1:1", "--records", "5"},
            {"load-data", "redis://127.0.0.1:1", "--users", "5"},
            {"load-data", "social", "--redis", "redis://127.0.0.1:1", "--mongo", "mongodb://127.0.0.1:1", "--users", "1"},
        };
        String[] reasons = {"--redis", "--users: 1", "server-id: 1023", "redis", "--redis-shards: 0",
            "--followees: 0", "does not exist", "needs --redis URI and --mongo URI", "--records is for",
            "--users is for load-data social", "--users: 1"};
        for (int i = 0; i < bad.length; i++) {
            CliRun r = new CliRun();
            assertEquals(DoubleFaceCli.EXIT_USAGE, r.run(bad[i]), String.join(" ", bad[i]) + ": " + r.err());
            assertTrue(r.err().contains(reasons[i]), r.err());
            assertTrue(r.err().lines().count() <= 3, r.err());
        }
    }
}
