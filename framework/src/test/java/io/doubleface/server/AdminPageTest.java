package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.testing.TestRead;
import io.doubleface.tune.Decider;
import io.doubleface.tune.TuneSettings;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The live admin page ({@code GET /admin}) over real sockets: its headers, its place in the admin
 * listener's access rules (served without the token, while everything it reads still needs it),
 * and, in headless Chromium, that its script fills the page from a running server (the active
 * configuration in the DOM, a chart of several polls, a screenshot that is not blank; off
 * loopback, the token typed into the page, kept in the tab and sent with its reads).
 *
 * <p>The Chromium tests need the {@code chromium} binary (Debian package {@code chromium}; or
 * {@code CHROMIUM=/path}); without it they are skipped with a message, unless
 * {@code DOUBLEFACE_REQUIRE_CHROMIUM=1} (set by {@code .ci/run} once it has installed it), which
 * makes a missing browser a failure. The screenshot is written to
 * {@code target/admin-page/admin-page.png} (the one in docs/images/ is a copy of it).
 */
@Timeout(120)
class AdminPageTest {

    static final String TOKEN = "admin-page-token-0123456789";

    static FanoutServer.Builder echoServer(UnaryOperator<FanoutServer.Builder> more) {
        FanoutServer.Builder b = FanoutServer.builder();
        Backend<TestRead> echo = b.backend("echo", new GeneratedShards(4), false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        return more.apply(b.port(0).adminPort(0).ioThreads(1));
    }

    static HttpResponse<String> send(HttpClient c, FanoutServer s, String method, String path, String token)
            throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.adminPort() + path))
                .timeout(Duration.ofSeconds(30)).method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            r.header("Authorization", "Bearer " + token);
        }
        return c.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The CSP source of the one inline element {@code tag} of {@code html}. */
    static String hashOf(String tag, String html) throws Exception {
        Matcher m = Pattern.compile("<" + tag + ">(.*?)</" + tag + ">", Pattern.DOTALL).matcher(html);
        assertTrue(m.find(), "no <" + tag + "> in the page");
        byte[] d = MessageDigest.getInstance("SHA-256").digest(m.group(1).getBytes(StandardCharsets.UTF_8));
        return "'sha256-" + Base64.getEncoder().encodeToString(d) + "'";
    }

    @Test
    void thePageIsOneSelfContainedDocumentWithAStrictPolicy() throws Exception {
        try (FanoutServer s = echoServer(b -> b.adminToken(TOKEN)).start();
                HttpClient c = HttpClient.newHttpClient()) {
            for (String path : List.of("/admin", "/admin/")) {
                HttpResponse<String> r = send(c, s, "GET", path, null);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals("text/html; charset=utf-8", r.headers().firstValue("content-type").orElse(""));
                assertEquals("nosniff", r.headers().firstValue("x-content-type-options").orElse(""));
                assertEquals("DENY", r.headers().firstValue("x-frame-options").orElse(""));
                assertEquals("no-store", r.headers().firstValue("cache-control").orElse(""));
                String csp = r.headers().firstValue("content-security-policy").orElse("");
                String html = r.body();
                assertTrue(csp.startsWith("default-src 'none'; "), csp);
                assertTrue(csp.contains("script-src " + hashOf("script", html) + ";"), "the script's hash: " + csp);
                assertTrue(csp.contains("style-src " + hashOf("style", html) + ";"), "the style's hash: " + csp);
                assertTrue(csp.contains("connect-src 'self'") && csp.contains("frame-ancestors 'none'"), csp);
                assertFalse(csp.contains("unsafe"), csp);
                // self-contained: nothing loaded from elsewhere, nothing written as HTML
                assertFalse(html.contains("src=") || html.contains("href=") || html.contains("innerHTML"),
                        "the page loads or injects something");
                assertTrue(html.contains("fetch(\"/admin/stats\""), "the page reads /admin/stats");
            }
            HttpResponse<String> post = send(c, s, "POST", "/admin", TOKEN);
            assertEquals(405, post.statusCode());
            assertEquals("GET", post.headers().firstValue("allow").orElse(""));
            HttpResponse<String> other = send(c, s, "GET", "/admin/nothing", null);
            assertEquals(404, other.statusCode());
            assertTrue(other.body().contains("/admin,"), other.body());
        }
    }

    @Test
    void offLoopbackThePageIsTheLoginFormAndTheDataStillNeedsTheToken() throws Exception {
        try (FanoutServer s = echoServer(b -> b.adminHost("0.0.0.0").adminToken(TOKEN)).start();
                HttpClient c = HttpClient.newHttpClient()) {
            assertEquals(200, send(c, s, "PUT", "/admin/config?name=sdb-1n-4w", TOKEN).statusCode());
            HttpResponse<String> page = send(c, s, "GET", "/admin", null);
            assertEquals(200, page.statusCode());
            String active = s.configuration().name();
            assertFalse(page.body().contains(active), "the page itself carries server state (" + active + ")");
            assertTrue(page.body().contains("id=\"login\""));
            assertEquals(401, send(c, s, "GET", "/admin/stats", null).statusCode());
            assertEquals(401, send(c, s, "GET", "/admin/config", null).statusCode());
            assertEquals(401, send(c, s, "GET", "/metrics", null).statusCode());
            assertEquals(401, send(c, s, "GET", "/admin/stats", "wrong-token-0123456789").statusCode());
            assertEquals(200, send(c, s, "GET", "/admin/stats", TOKEN).statusCode());
            assertEquals(401, send(c, s, "PUT", "/admin/config?name=sip", null).statusCode());
            assertEquals(active, s.configuration().name());
        }
    }

    // ---- headless Chromium -------------------------------------------------------------------

    static Path chromium() {
        String given = System.getenv("CHROMIUM");
        List<String> candidates = given != null ? List.of(given)
                : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome");
        for (String c : candidates) {
            if (Files.isExecutable(Paths.get(c))) {
                return Paths.get(c);
            }
        }
        String why = "no Chromium (" + String.join(", ", candidates) + "): install the Debian package chromium "
                + "or set CHROMIUM=/path to run the admin page in a browser";
        if ("1".equals(System.getenv("DOUBLEFACE_REQUIRE_CHROMIUM"))) {
            throw new AssertionError(why + " (DOUBLEFACE_REQUIRE_CHROMIUM=1)");
        }
        Assumptions.abort(why);
        return null;
    }

    /** Runs headless Chromium on {@code url} with {@code action} ({@code --dump-dom}, {@code --screenshot=…}); returns stdout. */
    static String headless(Path chromium, Path work, String url, String action) throws Exception {
        Path profile = Files.createTempDirectory(work, "profile");
        List<String> cmd = List.of(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars", "--mute-audio",
                "--user-data-dir=" + profile, "--window-size=1280,1400",
                // the page polls once a second: 6 s of page time (it waits for the fetches) is 5 polls
                "--virtual-time-budget=6000", action, url);
        Path out = work.resolve("chromium.out");
        Path err = work.resolve("chromium.err");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(45, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("chromium did not finish in 45 s: " + Files.readString(err));
        }
        assertEquals(0, p.exitValue(), "chromium " + action + ": " + Files.readString(err));
        return Files.readString(out);
    }

    static String textOf(String dom, String id) {
        Matcher m = Pattern.compile("id=\"" + id + "\"[^>]*>([^<]*)<").matcher(dom);
        return m.find() ? m.group(1) : null;
    }

    /** Requests from one closed-loop client thread until {@code stop}. */
    static Thread crowd(FanoutServer s, AtomicBoolean stop, long pauseMs) {
        return Thread.ofPlatform().name("admin-page-load").start(() -> {
            try (HttpClient c = HttpClient.newHttpClient()) {
                HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/echo?key=7&fan=2"))
                        .build();
                while (!stop.get()) {
                    try {
                        c.send(req, HttpResponse.BodyHandlers.discarding());
                    } catch (IOException e) {
                        // counted by nobody: the test fails on what the page shows
                    }
                    if (pauseMs > 0) {
                        Thread.sleep(pauseMs);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    static void awaitActive(FanoutServer s, String name) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!s.configuration().name().equals(name)) {
            assertTrue(System.nanoTime() < deadline, "no switch to " + name + " within 60 s");
            Thread.sleep(20);
        }
    }

    /** Goes where the test says, with the reason {@code told}. */
    record ToldPolicy(AtomicReference<String> want) implements Decider {
        @Override
        public Decision decide(Context ctx) {
            String w = want.get();
            return w.equals(ctx.active()) ? null : new Decision(w, "told");
        }

        @Override
        public List<String> reasons() {
            return List.of("told");
        }
    }

    @Test
    void inChromiumThePageShowsTheActiveConfigurationAChartAndTheSwitchLog() throws Exception {
        Path chromium = chromium();
        Path work = Files.createDirectories(Paths.get("target", "admin-page"));
        // the adapter of LoadAdapterPluginTest, told by the test where to go (so that the page
        // is read while the configuration holds still), under load for the chart
        AtomicReference<String> want = new AtomicReference<>("sip");
        TuneSettings settings = LoadAdapterPluginTest.exampleSettings().withDecider(() -> new ToldPolicy(want));
        try (FanoutServer s = echoServer(b -> b.adaptive(settings).traceStages(1)).adminToken(TOKEN).start()) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> load = new ArrayList<>();
            try {
                load.add(crowd(s, stop, 0));
                load.add(crowd(s, stop, 5));
                awaitActive(s, "sip");
                Thread.sleep(300);
                want.set("sdb-1n-4w");
                awaitActive(s, "sdb-1n-4w");

                String url = "http://127.0.0.1:" + s.adminPort() + "/admin";
                String dom = headless(chromium, work, url, "--dump-dom");
                Files.writeString(work.resolve("admin-page.html"), dom);
                assertEquals(s.configuration().name(), textOf(dom, "active"), "the active configuration in the DOM");
                assertTrue(dom.contains("<main id=\"dash\" class=\"\">"), "the dashboard is not shown");
                assertTrue(dom.contains("<td class=\"text\">sip</td>"), "the switch log lacks the switch to sip");
                assertTrue(dom.contains(">io-0<"), "the loop table lacks the I/O loop");
                Matcher points = Pattern.compile("data-points=\"(\\d+)\"").matcher(dom);
                assertTrue(points.find() && Integer.parseInt(points.group(1)) >= 2,
                        "the chart holds fewer than two polls: " + (points.hitEnd() ? "none" : points.group()));

                Path png = work.resolve("admin-page.png");
                Files.deleteIfExists(png);
                headless(chromium, work, url, "--screenshot=" + png.toAbsolutePath());
                assertNotBlank(ImageIO.read(png.toFile()));
            } finally {
                stop.set(true);
                for (Thread t : load) {
                    t.join();
                }
            }
        }
    }

    @Test
    void inChromiumOffLoopbackThePageTakesTheTokenKeepsItForTheTabAndSendsItWithItsReads() throws Exception {
        Path chromium = chromium();
        Path work = Files.createDirectories(Paths.get("target", "admin-page-login"));
        try (FanoutServer s = echoServer(b -> b.adminHost("0.0.0.0").adminToken(TOKEN)).start()) {
            s.switchTo("sdb-1n-4w"); // a name the page cannot hold by chance
            try (DevToolsPage page = DevToolsPage.open(chromium, work, "http://127.0.0.1:" + s.adminPort() + "/admin")) {
                Duration wait = Duration.ofSeconds(20);
                String loginShown = "String(!document.getElementById('login').classList.contains('hidden'))";
                String dashShown = "String(!document.getElementById('dash').classList.contains('hidden'))";
                String stored = "sessionStorage.getItem('doubleface.admin.token')";
                // without a token: the field, and nothing of the server
                page.await(loginShown, "true", wait);
                assertEquals("false", page.eval(dashShown));
                assertFalse(page.eval("document.body.innerText").contains("sdb-1n-4w"), "server state without a token");
                // a wrong one: refused (401), not kept, the field again
                String submit = "document.getElementById('token').value = '%s'; document.getElementById('login').requestSubmit(); ''";
                page.eval(submit.formatted("wrong-token-0123456789"));
                page.await("document.getElementById('status').textContent", "wrong token", wait);
                assertEquals("true", page.eval(loginShown));
                assertEquals(null, page.eval(stored));
                // the right one: the dashboard, filled from /admin/stats, which answers only with it
                page.eval(submit.formatted(TOKEN));
                page.await("document.getElementById('active').textContent", "sdb-1n-4w", wait);
                assertEquals("true", page.eval(dashShown));
                assertEquals("false", page.eval(loginShown));
                assertEquals(TOKEN, page.eval(stored), "the token is kept in the tab's sessionStorage");
                assertEquals("", page.eval("document.getElementById('token').value"), "the field still holds the token");
                assertEquals("", page.eval("document.cookie"), "the token went into a cookie");
                // it keeps polling with it: a switch shows up
                s.switchTo("sip");
                page.await("document.getElementById('active').textContent", "sip", wait);
                // forget: gone from the tab, the field again
                page.eval("document.getElementById('logout').click(); ''");
                page.await(loginShown, "true", wait);
                assertEquals(null, page.eval(stored));
                page.await("document.getElementById('active').textContent", "…", wait);
            }
        }
    }

    /** Not one colour, and more than a sliver of the image differs from its most common colour. */
    static void assertNotBlank(BufferedImage img) {
        assertTrue(img != null && img.getWidth() >= 800 && img.getHeight() >= 600, "no screenshot");
        Map<Integer, Integer> colours = new HashMap<>();
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                colours.merge(img.getRGB(x, y), 1, Integer::sum);
            }
        }
        int total = colours.values().stream().mapToInt(Integer::intValue).sum();
        int background = colours.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        assertTrue(colours.size() > 32, "the screenshot has " + colours.size() + " colours");
        assertTrue(total - background > total / 20, "the screenshot is " + 100 * background / total + " % one colour");
    }
}
