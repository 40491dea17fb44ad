package io.doubleface.services.social;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.doubleface.services.social.v1.ComposeRequest;
import io.doubleface.services.social.v1.TimelineRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * The social network over three real {@code redis-server} shards and two mongo-java-server shards
 * answers exactly as {@link SocialReference} under every threading model, over HTTP and gRPC,
 * before and after posts; a post reaches every follower's timeline once; bad input is 400 /
 * {@code INVALID_ARGUMENT}.
 */
class SocialTest {

    static final SocialData DATA = SocialData.of(7, 200, 10, 3, 0.9);
    static final SocialReference REFERENCE = new SocialReference(DATA);
    /** Two posts in a row get the same time: the timelines' tie order (id string, greatest first) is checked too. */
    static final AtomicLong TICKS = new AtomicLong();
    /**
     * Small batches: a post of a popular author takes several EVAL calls per round and several
     * rounds, so the multi-round path runs under every model.
     */
    static final ComposeService.Settings SETTINGS = new ComposeService.Settings(new PostIds(7, 1),
            () -> SocialData.EPOCH_MILLIS + 1_000_000_000L + TICKS.getAndIncrement() / 2 * 1_000, 3, 2);
    static SocialCluster cluster;
    static int celebrity;

    @BeforeAll
    static void start() {
        cluster = new SocialCluster(DATA, 3, 2, SETTINGS, SocialCluster.GENEROUS, SocialCluster.GENEROUS);
        for (int u = 0; u < DATA.users(); u++) {
            if (DATA.followers(u).length > DATA.followers(celebrity).length) {
                celebrity = u;
            }
        }
        assertTrue(DATA.followers(celebrity).length > 3 * 2 * 3, "weak fanout: " + DATA);
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    /** Checks a compose-post answer, records the post in the reference and returns it. */
    static Post composed(int author, String text, HttpResponse<String> r) {
        assertEquals(201, r.statusCode(), r.body());
        JsonObject o = JsonParser.parseString(r.body()).getAsJsonObject();
        Post p = new Post(o.get("id").getAsLong(), author, o.get("ts").getAsLong(), text);
        assertEquals(REFERENCE.compose(p).toJson(), r.body());
        REFERENCE.composed(p);
        return p;
    }

    static String json(int user, String text) {
        StringBuilder sb = new StringBuilder("{\"user\":").append(user).append(",\"text\":");
        return io.doubleface.services.musuite.Json.quote(sb, text).append('}').toString();
    }

    static void assertTimeline(int user, int limit) throws Exception {
        HttpResponse<String> r = cluster.timeline(user, limit);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(REFERENCE.timeline(user, limit).toJson(), r.body(), "user " + user + " limit " + limit);
    }

    /** Every follower of {@code p}'s author lists it exactly once (and as the reference says); its author does not. */
    static void assertOnEveryFollowersTimelineOnce(Post p) throws Exception {
        for (int f : DATA.followers(p.author())) {
            HttpResponse<String> r = cluster.timeline(f, TimelineService.MAX_LIMIT);
            assertEquals(REFERENCE.timeline(f, TimelineService.MAX_LIMIT).toJson(), r.body(), "follower " + f);
            int times = 0;
            for (var post : JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonArray("posts")) {
                times += post.getAsJsonObject().get("id").getAsLong() == p.id() ? 1 : 0;
            }
            assertEquals(1, times, "post " + p.id() + " on the timeline of follower " + f);
        }
        assertTrue(!cluster.timeline(p.author(), TimelineService.MAX_LIMIT).body().contains("\"id\":" + p.id() + ","),
                "a post on its author's own home timeline");
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.social.Models#ALL")
    void everyModelAnswersAsTheReferenceOverHttpAndGrpc(String model) throws Exception {
        cluster.server.switchTo(model);
        for (int u = 0; u < DATA.users(); u += 9) {
            for (int limit : new int[] {1, 10, 100}) {
                assertTimeline(u, limit);
            }
            assertEquals(REFERENCE.timeline(u, 10).toProto(), cluster.stub().readHomeTimeline(
                    TimelineRequest.newBuilder().setUser(u).build()), model + " grpc user " + u);
        }
        // three posts, one per way of posting: JSON body, query parameters, gRPC
        String text = model + ": \"hello\" from the celebrity, café 🙂";
        Post a = composed(celebrity, text, cluster.post(SocialService.POSTS_PATH, json(celebrity, text)));
        int other = (model.hashCode() & 0x7fff) % DATA.users();
        String text2 = model + " & a + b = c";
        Post b = composed(other, text2, cluster.post(SocialService.POSTS_PATH + "?user=" + other + "&text="
                + URLEncoder.encode(text2, StandardCharsets.UTF_8), ""));
        int third = DATA.followees(celebrity)[0];
        String text3 = model + " over grpc";
        var reply = cluster.stub().composePost(ComposeRequest.newBuilder().setUser(third).setText(text3).build());
        Post c = new Post(reply.getId(), third, reply.getTs(), text3);
        assertEquals(REFERENCE.compose(c).toProto(), reply);
        REFERENCE.composed(c);
        for (Post p : List.of(a, b, c)) {
            assertOnEveryFollowersTimelineOnce(p);
        }
        assertEquals(REFERENCE.timeline(celebrity, 100).toProto(), cluster.stub().readHomeTimeline(
                TimelineRequest.newBuilder().setUser(celebrity).setLimit(100).build()));
    }

    @Test
    void postsFromManyClientsWhileTheModelSwitchesAreAllOnTheirTimelinesOnce() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<String> wrong = new CopyOnWriteArrayList<>();
        List<Post> posted = new CopyOnWriteArrayList<>();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            int client = c;
            clients.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; !stop.get(); i++) {
                    int author = i % 3 == 0 ? celebrity : (client * 53 + i * 31) % DATA.users();
                    String text = "client " + client + " post " + i;
                    try {
                        HttpResponse<String> r = cluster.post(SocialService.POSTS_PATH, json(author, text));
                        if (r.statusCode() != 201) {
                            wrong.add(r.statusCode() + " " + r.body());
                            continue;
                        }
                        JsonObject o = JsonParser.parseString(r.body()).getAsJsonObject();
                        posted.add(new Post(o.get("id").getAsLong(), author, o.get("ts").getAsLong(), text));
                        // reads meanwhile: answered, well-formed (their contents are checked below)
                        HttpResponse<String> t = cluster.timeline(author, 10);
                        if (t.statusCode() != 200) {
                            wrong.add("timeline: " + t.statusCode() + " " + t.body());
                        }
                    } catch (Exception e) {
                        wrong.add(e.toString());
                    }
                }
            }));
        }
        for (int i = 0; i < 2 * Models.ALL.size(); i++) {
            cluster.server.switchTo(Models.ALL.get(i % Models.ALL.size()));
            Thread.sleep(100);
        }
        stop.set(true);
        for (Thread t : clients) {
            t.join(60_000);
        }
        cluster.server.switchTo("doubleface");
        assertEquals(List.of(), wrong);
        assertTrue(posted.size() > 20, "posted " + posted.size());
        posted.forEach(REFERENCE::composed);
        for (int u = 0; u < DATA.users(); u++) {
            assertTimeline(u, TimelineService.MAX_LIMIT);
        }
    }

    @Test
    void badInputGets400OverHttpAndInvalidArgumentOverGrpc() throws Exception {
        cluster.server.switchTo("doubleface");
        String t = SocialService.TIMELINE_PATH;
        String[][] badGets = {
            {t, "user: missing (expected: 0..199)"},
            {t + "?user=-1", "user: -1 (expected: 0..199)"},
            {t + "?user=200", "user: 200 (expected: 0..199)"},
            {t + "?user=bob", "user: 'bob' (expected: 0..199)"},
            {t + "?user=99999999999999999999", "user: '99999999999999999999' (expected: 0..199)"},
            {t + "?user=1&limit=0", "limit: 0 (expected: 1..100)"},
            {t + "?user=1&limit=101", "limit: 101 (expected: 1..100)"},
            {t + "?user=1&limit=x", "limit: 'x' (expected: 1..100)"},
            {t + "?user=1&user=2", "user: given 2 times (expected: once)"},
            {t + "?user=1&k=3", "unknown parameter: k (expected: user, limit)"},
        };
        for (String[] b : badGets) {
            HttpResponse<String> r = cluster.get(b[0]);
            assertEquals(400, r.statusCode(), b[0] + " -> " + r.body());
            assertEquals(b[1] + "\n", r.body(), b[0]);
        }
        String p = SocialService.POSTS_PATH;
        String[][] badPosts = {
            {p, "{\"user\": 1, \"text\": ", "malformed request body: "},
            {p, "[1, 2]", "malformed request body: Expected BEGIN_OBJECT"},
            {p, "{\"user\": 1, \"text\": \"x\"} {}", "malformed request body: more after the object"},
            {p, "{\"user\": \"1\", \"text\": \"x\"}", "malformed request body: user: STRING (expected: a number)"},
            {p, "{\"user\": 1, \"text\": 5}", "malformed request body: text: NUMBER (expected: a string)"},
            {p, "{\"user\": 1, \"text\": \"x\", \"at\": 3}", "malformed request body: member 'at' unknown"},
            {p, "{\"user\": 1, \"user\": 2, \"text\": \"x\"}", "malformed request body: member 'user' given twice"},
            {p, "{\"text\": \"x\"}", "user: missing (expected: 0..199)"},
            {p, "{\"user\": -3, \"text\": \"x\"}", "user: -3 (expected: 0..199)"},
            {p, "{\"user\": 1.5, \"text\": \"x\"}", "user: '1.5' (expected: 0..199)"},
            {p, "{\"user\": 200, \"text\": \"x\"}", "user: 200 (expected: 0..199)"},
            {p, "{\"user\": 1}", "text: missing or blank"},
            {p, "{\"user\": 1, \"text\": \"  \"}", "text: missing or blank"},
            {p, json(1, "x".repeat(281)), "text: 281 characters (expected: at most 280)"},
            {p + "?user=1&text=hi", "{\"user\": 1, \"text\": \"x\"}", "give the post either as a JSON body"},
            {p + "?user=1", "", "text: missing or blank"},
            {p + "?text=hi", "", "user: missing (expected: 0..199)"},
            {p + "?user=1&text=hi&to=2", "", "unknown parameter: to (expected: user, text)"},
        };
        for (String[] b : badPosts) {
            HttpResponse<String> r = cluster.post(b[0], b[1]);
            assertEquals(400, r.statusCode(), b[1] + " -> " + r.body());
            assertTrue(r.body().startsWith(b[2]), b[1] + " -> " + r.body());
        }
        assertEquals(405, cluster.get(p).statusCode());
        assertEquals(404, cluster.get("/social/nothing").statusCode());
        List<Runnable> badGrpc = List.of(
                () -> cluster.stub().readHomeTimeline(TimelineRequest.getDefaultInstance()),
                () -> cluster.stub().readHomeTimeline(TimelineRequest.newBuilder().setUser(200).build()),
                () -> cluster.stub().readHomeTimeline(TimelineRequest.newBuilder().setUser(1).setLimit(0).build()),
                () -> cluster.stub().composePost(ComposeRequest.newBuilder().setText("x").build()),
                () -> cluster.stub().composePost(ComposeRequest.newBuilder().setUser(-1).setText("x").build()),
                () -> cluster.stub().composePost(ComposeRequest.newBuilder().setUser(1).build()),
                () -> cluster.stub().composePost(ComposeRequest.newBuilder().setUser(1).setText("y".repeat(281)).build()));
        for (int i = 0; i < badGrpc.size(); i++) {
            try {
                badGrpc.get(i).run();
                throw new AssertionError("bad gRPC request " + i + " accepted");
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), "request " + i);
            }
        }
    }
}
