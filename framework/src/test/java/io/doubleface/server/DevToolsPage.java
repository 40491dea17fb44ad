package io.doubleface.server;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One page in headless Chromium, driven over the DevTools protocol (a WebSocket, JSON messages):
 * enough to evaluate JavaScript in the page as a user's actions would (fill a field, submit a form,
 * click) and read what it shows. For tests of the admin page's login flow, which
 * {@code --dump-dom} cannot drive.
 *
 * <p>Threading: one test thread calls it; replies arrive on the WebSocket's thread.
 */
final class DevToolsPage implements AutoCloseable {

    private final Process chromium;
    private final HttpClient http = HttpClient.newHttpClient();
    private final WebSocket ws;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonObject>> pending = new ConcurrentHashMap<>();

    private DevToolsPage(Process chromium, URI page) {
        this.chromium = chromium;
        this.ws = http.newWebSocketBuilder().buildAsync(page, new WebSocket.Listener() {
            private final StringBuilder message = new StringBuilder();

            @Override
            public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                message.append(data);
                if (last) {
                    JsonObject o = JsonParser.parseString(message.toString()).getAsJsonObject();
                    message.setLength(0);
                    if (o.has("id")) {
                        CompletableFuture<JsonObject> f = pending.remove(o.get("id").getAsInt());
                        if (f != null) {
                            f.complete(o);
                        }
                    }
                }
                w.request(1);
                return null;
            }
        }).join();
    }

    /** Starts Chromium on {@code url} (its profile under {@code work}) and attaches to the page. */
    static DevToolsPage open(Path chromium, Path work, String url) throws Exception {
        Path profile = Files.createTempDirectory(work, "profile");
        Process p = new ProcessBuilder(List.of(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--mute-audio", "--user-data-dir=" + profile,
                "--remote-debugging-port=0", url))
                .redirectOutput(work.resolve("devtools.out").toFile()).redirectError(work.resolve("devtools.err").toFile())
                .start();
        try {
            // Chromium writes the port it chose to DevToolsActivePort in its profile
            Path portFile = profile.resolve("DevToolsActivePort");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(portFile) || Files.readAllLines(portFile).isEmpty()) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    throw new AssertionError("chromium gave no DevTools port: " + Files.readString(work.resolve("devtools.err")));
                }
                Thread.sleep(50);
            }
            int port = Integer.parseInt(Files.readAllLines(portFile).getFirst().strip());
            try (HttpClient c = HttpClient.newHttpClient()) {
                while (true) {
                    HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list"))
                            .build(), HttpResponse.BodyHandlers.ofString());
                    for (JsonElement t : JsonParser.parseString(r.body()).getAsJsonArray()) {
                        JsonObject target = t.getAsJsonObject();
                        if ("page".equals(target.get("type").getAsString())) {
                            return new DevToolsPage(p, URI.create(target.get("webSocketDebuggerUrl").getAsString()));
                        }
                    }
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("no page target in chromium: " + r.body());
                    }
                    Thread.sleep(50);
                }
            }
        } catch (Exception | AssertionError e) {
            p.destroyForcibly().waitFor();
            throw e;
        }
    }

    /** The value of {@code expression} evaluated in the page (awaited if a promise), as a string. */
    String eval(String expression) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonObject> reply = new CompletableFuture<>();
        pending.put(id, reply);
        JsonObject params = new JsonObject();
        params.addProperty("expression", expression);
        params.addProperty("returnByValue", true);
        params.addProperty("awaitPromise", true);
        JsonObject msg = new JsonObject();
        msg.addProperty("id", id);
        msg.addProperty("method", "Runtime.evaluate");
        msg.add("params", params);
        ws.sendText(msg.toString(), true).join();
        JsonObject r = reply.get(10, TimeUnit.SECONDS);
        if (r.has("error") || r.getAsJsonObject("result").has("exceptionDetails")) {
            throw new AssertionError("evaluating " + expression + ": " + r);
        }
        JsonObject value = r.getAsJsonObject("result").getAsJsonObject("result");
        return value.has("value") && !value.get("value").isJsonNull() ? value.get("value").getAsString() : null;
    }

    /**
     * Evaluates {@code expression} until it gives {@code expected}, for at most {@code timeout}; an
     * expression that throws (the page not loaded yet) counts as not yet.
     */
    void await(String expression, String expected, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String got;
        while (!expected.equals(got = evalOrError(expression))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(expression + " gave " + got + " (expected: " + expected + ") for " + timeout);
            }
            Thread.sleep(50);
        }
    }

    private String evalOrError(String expression) throws Exception {
        try {
            return eval(expression);
        } catch (AssertionError e) {
            return e.getMessage();
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        ws.abort();
        http.close();
        chromium.destroy();
        if (!chromium.waitFor(10, TimeUnit.SECONDS)) {
            chromium.destroyForcibly().waitFor();
        }
    }
}
