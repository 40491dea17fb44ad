package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.FanoutEngine;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Who may change the server: state changes only by PUT, the token when one is set, the admin
 * listener on loopback unless given a token, and a bounded number of live configurations.
 */
@Timeout(120)
class AdminAccessTest {

    static final String TOKEN = "s3cret-token-0123456789";

    static HttpResponse<String> send(TestCluster c, String method, String path, String auth) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(c.admin(path)).timeout(Duration.ofSeconds(30))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (auth != null) {
            b.header("Authorization", auth);
        }
        return c.http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void stateChangesArePutOnly() throws Exception {
        try (TestCluster c = TestCluster.start(4, "doubleface")) {
            HttpResponse<String> post = send(c, "POST", "/admin/config?name=type1-4", null);
            assertEquals(405, post.statusCode(), post.body());
            assertEquals("GET, PUT", post.headers().firstValue("allow").orElse(""));
            assertEquals("doubleface", c.server.configuration().name(), "a POST (e.g. a cross-origin form) switched");
            assertTrue(post.headers().firstValue("access-control-allow-origin").isEmpty());
        }
    }

    @Test
    void withATokenAPutNeedsIt() throws Exception {
        try (TestCluster c = TestCluster.start(4, b -> b.adminToken(TOKEN))) {
            HttpResponse<String> none = send(c, "PUT", "/admin/config?name=type1-4", null);
            assertEquals(401, none.statusCode(), none.body());
            assertEquals("Bearer", none.headers().firstValue("www-authenticate").orElse(""));
            assertEquals(401, send(c, "PUT", "/admin/config?name=type1-4", "Bearer wrong-token-0123456789").statusCode());
            assertEquals(401, send(c, "PUT", "/admin/config?name=type1-4", TOKEN).statusCode(), "no Bearer scheme");
            assertEquals("doubleface", c.server.configuration().name());
            assertEquals(200, send(c, "PUT", "/admin/config?name=type1-4", "Bearer " + TOKEN).statusCode());
            assertEquals("type1-4", c.server.configuration().name());
            // on loopback, reading needs no token
            assertEquals(200, send(c, "GET", "/admin/stats", null).statusCode());
        }
    }

    @Test
    void anAdminListenerBeyondLoopbackNeedsATokenForEverything() throws Exception {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> TestCluster.start(4, b -> b.adminHost("0.0.0.0")).close());
        assertTrue(e.getMessage().contains("needs a token"), e.getMessage());
        try (TestCluster c = TestCluster.start(4, b -> b.adminHost("0.0.0.0").adminToken(TOKEN))) {
            assertEquals(401, send(c, "GET", "/admin/stats", null).statusCode());
            assertEquals(401, send(c, "GET", "/metrics", null).statusCode());
            assertEquals(200, send(c, "GET", "/admin/stats", "Bearer " + TOKEN).statusCode());
            // except the probes, which say nothing but up and ready
            assertEquals(200, send(c, "GET", "/ready", null).statusCode());
            assertEquals(200, send(c, "GET", "/live", null).statusCode());
            assertEquals(405, send(c, "PUT", "/ready", null).statusCode());
        }
    }

    @Test
    void theAdminListenerStaysOnLoopbackWhateverTheServiceHost() throws Exception {
        try (TestCluster c = TestCluster.start(4, b -> b.host("0.0.0.0"))) {
            assertEquals(200, send(c, "GET", "/admin/stats", null).statusCode());
            assertTrue(c.server.adminAddress().getAddress().isLoopbackAddress(), "admin on " + c.server.adminAddress());
        }
    }

    @Test
    void liveConfigurationsAreBoundedAndLongParkedOnesAreClosed() throws Exception {
        try (TestCluster c = TestCluster.builder(4).deadline(Duration.ofMillis(100)).start()) {
            int max = FanoutEngine.MAX_LIVE_CONFIGURATIONS;
            for (int i = 1; i < max; i++) { // doubleface + 15 more
                assertEquals(200, c.adminPut("/admin/config?name=thread-" + i).statusCode());
            }
            HttpResponse<String> refused = c.adminPut("/admin/config?name=thread-" + max);
            assertEquals(400, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains(max + " configurations are live"), refused.body());
            assertEquals(max, c.server.internals().stats().configurations().size());
            // once the parked ones have been quiet for longer than the deadline, new ones replace the oldest
            Thread.sleep(1_300);
            for (int i = max; i < max + 5; i++) {
                HttpResponse<String> r = c.adminPut("/admin/config?name=thread-" + i);
                assertEquals(200, r.statusCode(), r.body());
            }
            List<Object> loaded = JsonDoc.path(JsonDoc.object(c.adminGet("/admin/config").body()), "loaded").asList();
            assertEquals(max, loaded.size(), loaded.toString());
            assertTrue(!loaded.contains("doubleface") && loaded.contains("thread-" + (max + 4)), loaded.toString());
            // and the server still answers, under the newest
            YcsbQuery q = new YcsbQuery(3, Size.SMALL, 7);
            assertEquals(c.expected(q), c.get(q).body());
        }
    }

    @Test
    void poolThreadsOfLiveConfigurationsAreBoundedSoNoRequestStartsThousands() throws Exception {
        try (TestCluster c = TestCluster.builder(4).deadline(Duration.ofMillis(100)).start()) {
            int max = FanoutEngine.MAX_LIVE_POOL_THREADS;
            assertEquals(200, c.adminPut("/admin/config?name=thread-" + (max - 100)).statusCode());
            int threads = Thread.activeCount();
            // while the first is active (or parked for less than the deadline), a second one of 2000 would go over
            HttpResponse<String> refused = c.adminPut("/admin/config?name=thread-2000");
            assertEquals(400, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("at most " + max + " together"), refused.body());
            assertTrue(Thread.activeCount() < threads + 50, "threads started by a refused switch: "
                    + (Thread.activeCount() - threads));
            // a small one fits beside it; once the big one has been parked past the deadline it is closed for another
            assertEquals(200, c.adminPut("/admin/config?name=thread-8").statusCode());
            Thread.sleep(1_300);
            HttpResponse<String> r = c.adminPut("/admin/config?name=thread-2000");
            assertEquals(200, r.statusCode(), r.body());
            List<Object> loaded = JsonDoc.path(JsonDoc.object(c.adminGet("/admin/config").body()), "loaded").asList();
            assertTrue(!loaded.contains("thread-" + (max - 100)) && loaded.contains("thread-2000"), loaded.toString());
            YcsbQuery q = new YcsbQuery(3, Size.SMALL, 7);
            assertEquals(c.expected(q), c.get(q).body());
        }
    }
}
