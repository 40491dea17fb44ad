package example.timeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.redis.RedisServers;
import io.doubleface.server.FanoutServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The timeline service end to end: real redis-server shards, mongo-java-server shards, every model. */
@Timeout(300)
class TimelineTest {

    static final List<String> MODELS = List.of("doubleface", "type2a-1f2b", "type2b", "type1-8", "thread-8",
            "thread-virtual", "doubleface-fifo");

    static RedisServers redis;
    static MongoLeafServer mongo;
    static FanoutServer server;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** Post ids per user, oldest first, as the POSTs answered them. */
    static final Map<Long, List<Long>> POSTED = new HashMap<>();

    @BeforeAll
    static void start() throws Exception {
        redis = RedisServers.start(2, 0);
        mongo = MongoLeafServer.builder().shards(2).start();
        FanoutServer.Builder b = FanoutServer.builder().port(0).ioThreads(2).deadline(Duration.ofSeconds(5));
        TimelineApp.install(b, redis.uri(), mongo.uri());
        server = b.configuration("doubleface").start();
        for (int i = 0; i < 30; i++) {
            long user = 1 + i % 3;
            HttpResponse<String> r = post("/users/" + user + "/posts", "{\"text\":\"post " + i + " of " + user + "\"}");
            assertEquals(201, r.statusCode(), r.body());
            POSTED.computeIfAbsent(user, u -> new ArrayList<>()).add(Json.MAPPER.readTree(r.body()).get("id").asLong());
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (mongo != null) {
            mongo.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    static HttpResponse<String> get(FanoutServer s, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> post(String path, String json) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The ids the timeline of {@code user} must list with {@code limit}: newest first. */
    static List<Long> expected(long user, int limit) {
        List<Long> ids = new ArrayList<>(POSTED.get(user));
        java.util.Collections.reverse(ids);
        return ids.subList(0, Math.min(limit, ids.size()));
    }

    /** Checks one timeline answer completely; returns null if right, else what is wrong. */
    static String check(long user, int limit, HttpResponse<String> r) throws Exception {
        if (r.statusCode() != 200) {
            return r.statusCode() + " " + r.body();
        }
        JsonNode t = Json.MAPPER.readTree(r.body());
        List<Long> ids = new ArrayList<>();
        for (JsonNode p : t.get("posts")) {
            ids.add(p.get("id").asLong());
            if (p.get("author").asLong() != user || !p.get("text").asText().endsWith(" of " + user)) {
                return "wrong post " + p;
            }
        }
        if (!ids.equals(expected(user, limit)) || t.get("missing").size() != 0) {
            return "ids " + ids + " (expected " + expected(user, limit) + "), missing " + t.get("missing");
        }
        return null;
    }

    @Test
    void timelinesAreRightUnderEveryModel() throws Exception {
        for (String model : MODELS) {
            server.switchTo(model);
            for (long user = 1; user <= 3; user++) {
                for (int limit : new int[] {1, 4, 10, 50}) {
                    String wrong = check(user, limit, get(server, "/users/" + user + "/timeline?limit=" + limit));
                    assertEquals(null, wrong, model + " user " + user + " limit " + limit);
                }
            }
            HttpResponse<String> none = get(server, "/users/99/timeline"); // never posted: 404, a JSON body
            assertEquals(404, none.statusCode(), none.body());
            assertEquals("application/json", none.headers().firstValue("content-type").orElse(""));
            JsonNode error = Json.MAPPER.readTree(none.body());
            assertEquals("no timeline for user 99", error.get("error").asText());
            assertEquals(404, error.get("status").asInt());
        }
    }

    @Test
    void everyAnswerIsRightWhileTheModelIsSwitchedUnderLoad() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger answered = new AtomicInteger();
        List<String> wrong = new CopyOnWriteArrayList<>();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            long user = 1 + c % 3;
            clients.add(Thread.ofPlatform().start(() -> {
                while (!stop.get()) {
                    try {
                        String w = check(user, 10, get(server, "/users/" + user + "/timeline"));
                        if (w != null) {
                            wrong.add(w);
                        }
                        answered.incrementAndGet();
                    } catch (Exception e) {
                        wrong.add(e.toString());
                    }
                }
            }));
        }
        for (int i = 0; i < 3 * MODELS.size(); i++) {
            server.switchTo(MODELS.get(i % MODELS.size()));
            Thread.sleep(150);
        }
        stop.set(true);
        for (Thread t : clients) {
            t.join(30_000);
        }
        server.switchTo("doubleface");
        assertEquals(List.of(), wrong);
        assertTrue(answered.get() > 50, "answered " + answered.get());
    }

    @Test
    void badInputGetsAReason() throws Exception {
        HttpResponse<String> badJson = post("/users/1/posts", "{\"text\": ");
        assertEquals(400, badJson.statusCode());
        assertTrue(badJson.body().startsWith("malformed request body: Unexpected end-of-input"), badJson.body());
        HttpResponse<String> empty = post("/users/1/posts", "{\"text\": \"\"}");
        assertEquals(400, empty.statusCode());
        assertEquals("text: missing or empty\n", empty.body());
        HttpResponse<String> longText = post("/users/1/posts", "{\"text\": \"" + "x".repeat(300) + "\"}");
        assertEquals("text: 300 characters (expected: at most 280)\n", longText.body());
        HttpResponse<String> limit = get(server, "/users/1/timeline?limit=0");
        assertEquals(400, limit.statusCode());
        assertEquals("limit: 0 (expected: 1..100)\n", limit.body());
        HttpResponse<String> user = get(server, "/users/bob/timeline");
        assertEquals("user: 'bob' (expected: a number)\n", user.body());
        assertEquals(404, get(server, "/users/1").statusCode());
        HttpResponse<String> wrongMethod = get(server, "/users/1/posts");
        assertEquals(405, wrongMethod.statusCode());
        assertEquals("POST", wrongMethod.headers().firstValue("allow").orElse(""));
    }

    @Test
    void aMongoShardDownGivesTheOtherShardsPostsAndNamesTheMissingShard() throws Exception {
        // bound but never listening, and held for the whole test: a connection there is refused, and no
        // server started meanwhile can be given the port (closing a probe socket first allowed both)
        try (java.net.Socket held = new java.net.Socket()) {
            held.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            int dead = held.getLocalPort();
            String posts = "mongodb://127.0.0.1:" + mongo.port(0) + ",127.0.0.1:" + dead;
            FanoutServer.Builder b = FanoutServer.builder().port(0).ioThreads(2).deadline(Duration.ofSeconds(3));
            TimelineApp.install(b, redis.uri(), posts);
            try (FanoutServer partial = b.configuration("doubleface").start()) {
                for (String model : List.of("doubleface", "type2a-1f2b", "thread-8")) {
                    partial.switchTo(model);
                    long user = 1;
                    HttpResponse<String> r = get(partial, "/users/" + user + "/timeline?limit=10");
                    assertEquals(200, r.statusCode(), model + " " + r.body());
                    JsonNode t = Json.MAPPER.readTree(r.body());
                    List<Long> expectedOnShard0 = new ArrayList<>();
                    for (long id : expected(user, 10)) {
                        if (io.doubleface.api.ShardRouting.jump(id, 2) == 0) {
                            expectedOnShard0.add(id);
                        }
                    }
                    List<Long> got = new ArrayList<>();
                    t.get("posts").forEach(p -> got.add(p.get("id").asLong()));
                    assertEquals(expectedOnShard0, got, model);
                    assertEquals(1, t.get("missing").size(), model + " " + r.body());
                    assertEquals("posts", t.get("missing").get(0).get("backend").asText());
                    assertEquals(1, t.get("missing").get(0).get("shard").asInt());
                    // the same words under every model, whatever the driver said (that is in the log)
                    assertEquals("backend posts: shard 1 unavailable", t.get("missing").get(0).get("reason").asText());
                }
            }
        }
    }

    static HttpResponse<String> ready(FanoutServer s) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.adminPort() + "/ready"))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void readyOnlyOnceConnectedAndNoLongerFromTheStartOfADrain() throws Exception {
        // a MongoDB shard whose port is bound but never listens: the server cannot become ready
        try (java.net.Socket held = new java.net.Socket()) {
            held.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            String posts = "mongodb://127.0.0.1:" + mongo.port(0) + ",127.0.0.1:" + held.getLocalPort();
            FanoutServer.Builder b = FanoutServer.builder().port(0).adminPort(0).ioThreads(2);
            TimelineApp.install(b, redis.uri(), posts);
            try (FanoutServer waiting = b.configuration("doubleface").start()) {
                HttpResponse<String> r = ready(waiting);
                assertEquals(503, r.statusCode(), r.body());
                JsonNode why = Json.MAPPER.readTree(r.body());
                assertEquals(false, why.get("ready").asBoolean());
                assertEquals("connecting", why.get("reason").asText());
                assertEquals("posts", why.get("waiting").get(0).get("backend").asText(), r.body());
                java.util.concurrent.TimeoutException e = org.junit.jupiter.api.Assertions.assertThrows(
                        java.util.concurrent.TimeoutException.class, () -> waiting.awaitReady(Duration.ofMillis(500)));
                assertTrue(e.getMessage().contains("posts"), e.getMessage());
            }
        }
        FanoutServer.Builder b = FanoutServer.builder().port(0).adminPort(0).ioThreads(2);
        TimelineApp.install(b, redis.uri(), mongo.uri());
        FanoutServer s = b.configuration("doubleface").start();
        try {
            s.awaitReady(Duration.ofSeconds(30));
            HttpResponse<String> r = ready(s);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(true, Json.MAPPER.readTree(r.body()).get("ready").asBoolean());
            assertEquals(null, check(1, 4, get(s, "/users/1/timeline?limit=4")), "connected: serves");
            // a drain keeps accepting for a while after /ready turned 503, so a balancer sees it first
            Thread drain = Thread.ofPlatform().start(() -> s.stop(Duration.ofSeconds(2), Duration.ofSeconds(5)));
            HttpResponse<String> draining;
            do {
                draining = ready(s);
            } while (draining.statusCode() == 200);
            assertEquals(503, draining.statusCode(), draining.body());
            assertEquals("draining", Json.MAPPER.readTree(draining.body()).get("reason").asText());
            assertEquals(null, check(2, 4, get(s, "/users/2/timeline?limit=4")), "still served while draining");
            drain.join(30_000);
        } finally {
            s.close();
        }
    }
}
