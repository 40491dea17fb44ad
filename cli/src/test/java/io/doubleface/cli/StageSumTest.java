package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.engine.StageStats;
import io.doubleface.engine.StageStats.Stage;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.model.Configuration;
import io.doubleface.server.FanoutServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The stages add up, under every model, for requests with known delays: a shard that answers
 * after {@value #SHARD_MILLIS} ms and {@code --reply-work-us} of CPU in {@code onReply} both show
 * in {@code first_reply} (send → shard → reply handled), and queue + plan + first_reply +
 * last_reply + merge is the request's total but for the hop back to the upstream loop, within
 * {@value #TOLERANCE_MILLIS} ms (docs/tracing.md).
 */
class StageSumTest {

    static final long SHARD_MILLIS = 20;
    static final long REPLY_WORK_MICROS = 3000;
    /** Largest gap allowed between the sum of the stage means and the mean total: {@value} ms. */
    static final double TOLERANCE_MILLIS = 2.0;

    @Test
    void aSlowShardAndReplyWorkShowInFirstReplyAndTheStagesAddUpToTheTotal() throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (KvLeafServer leaf = KvLeafServer.builder().shards(1).basePort(0).records(100)
                .slowCalls(0, 1.0, Duration.ofMillis(SHARD_MILLIS)).start()) {
            CliRun r = new CliRun();
            CompletableFuture<Integer> exit = r.start("serve", "ycsb", "--port", "0", "--admin-port", "-1",
                    "--shards", leaf.uri(), "--records", "100", "--io-threads", "2", "--trace-stages", "all",
                    "--reply-work-us", Long.toString(REPLY_WORK_MICROS));
            FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
            try {
                List<String> models = List.of("doubleface", "type2a-1f2b", "type2b", "thread-8", "type1-4");
                int n = 5;
                for (String model : models) {
                    server.switchTo(model);
                    for (int i = 0; i < n; i++) {
                        HttpResponse<String> q = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                + server.port() + "/query?fanout=1&size=small&key=" + i)).build(),
                                HttpResponse.BodyHandlers.ofString());
                        assertEquals(200, q.statusCode(), q.body());
                    }
                }
                Map<String, Map<Stage, StageStats.Summary>> snap = server.engine().stages().snapshot();
                StringBuilder table = new StringBuilder();
                for (String model : models) {
                    String name = Configuration.parse(model).name();
                    Map<Stage, StageStats.Summary> m = snap.get(name);
                    double sum = 0;
                    for (Stage s : List.of(Stage.QUEUE, Stage.PLAN, Stage.FIRST_REPLY, Stage.LAST_REPLY, Stage.MERGE)) {
                        assertEquals(n, m.get(s).count(), name + " " + s);
                        sum += m.get(s).meanMicros();
                    }
                    double total = m.get(Stage.TOTAL).meanMicros();
                    double first = m.get(Stage.FIRST_REPLY).meanMicros();
                    table.append(String.format("%s: first_reply %.0f us, stages %.0f us, total %.0f us%n", name, first,
                            sum, total));
                    assertTrue(first >= SHARD_MILLIS * 1000 + REPLY_WORK_MICROS, name + ": the shard's "
                            + SHARD_MILLIS + " ms and the reply work are in first_reply: " + table);
                    assertTrue(sum <= total + 1, name + ": the stages are parts of the total: " + table);
                    assertTrue(total - sum <= TOLERANCE_MILLIS * 1000, name + ": the stages add up to the total within "
                            + TOLERANCE_MILLIS + " ms: " + table);
                    assertTrue(first / total > 0.8, name + ": first_reply is most of it: " + table);
                }
            } finally {
                assertEquals(0, r.stopAndAwait(exit), r.err());
            }
        }
    }
}
