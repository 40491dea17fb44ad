package io.doubleface.cli;

import io.doubleface.experiments.MiniJson;
import io.doubleface.server.FanoutServer;
import java.io.IOException;
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

/**
 * A running mid-tier for the {@code --midtier} tests: {@code serve ycsb} in this JVM over an
 * embedded KV leaf of 5 shards (1,000 records each), on loopback, with an admin token (so every
 * {@code PUT} of the runner must carry it). Closing stops it.
 */
final class RunningMidTier implements AutoCloseable {

    /** The admin token the server runs with. */
    static final String TOKEN = "external-topology-test-token-0123456789";

    final Path tokenFile;
    final FanoutServer server;
    private final CliRun run = new CliRun();
    private final CompletableFuture<Integer> exit;
    private final HttpClient http = HttpClient.newHttpClient();

    RunningMidTier(Path dir) throws Exception {
        tokenFile = Files.writeString(dir.resolve("admin.token"), TOKEN + "\n");
        exit = run.start("serve", "ycsb", "--port", "0", "--admin-port", "0", "--embedded-shards", "5",
                "--admin-token-file", tokenFile.toString(), "--config", "doubleface");
        server = run.server.get(60, TimeUnit.SECONDS);
    }

    String midTier() {
        return "http://127.0.0.1:" + server.port();
    }

    String admin() {
        return "http://127.0.0.1:" + server.adminPort();
    }

    /** {@code GET /admin/stats}, with the token. */
    Map<String, Object> stats() throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(admin() + "/admin/stats"))
                .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("/admin/stats: HTTP " + r.statusCode());
        }
        return MiniJson.object(r.body());
    }

    @Override
    public void close() throws Exception {
        int code = run.stopAndAwait(exit);
        if (code != DoubleFaceCli.EXIT_OK) {
            throw new IllegalStateException("serve ended with " + code + ":\n" + run.err());
        }
    }
}
