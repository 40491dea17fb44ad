package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.StageStats;
import io.doubleface.internal.engine.StageStats.Stage;
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
 * after {@value #SHARD_MILLIS} ms shows in {@code round_trip} (send → shard → the reply's arrival),
 * {@code --reply-work-us} of CPU in {@code onReply} in {@code reply_wait} (arrival → handled), and
 * queue + plan + round_trip + reply_wait + last_reply + merge + respond is the request's total
 * within {@value #TOLERANCE_MILLIS} ms (docs/tracing.md).
 */
class StageSumTest {

    static final long SHARD_MILLIS = 20;
    static final long REPLY_WORK_MICROS = 3000;
    /** Largest gap allowed between the sum of the stage means and the mean total: {@value} ms. */
    static final double TOLERANCE_MILLIS = 2.0;

    @Test
    void aSlowShardShowsInTheRoundTripReplyWorkInTheReplyWaitAndTheStagesAddUpToTheTotal() throws Exception {
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
                Map<String, Map<Stage, StageStats.Summary>> snap = server.internals().stats().stages().byConfiguration();
                StringBuilder table = new StringBuilder();
                for (String model : models) {
                    String name = Configuration.parse(model).name();
                    Map<Stage, StageStats.Summary> m = snap.get(name);
                    double sum = 0;
                    for (Stage s : Stage.values()) {
                        assertEquals(n, m.get(s).count(), name + " " + s);
                        if (s != Stage.TOTAL) {
                            sum += m.get(s).meanMicros();
                        }
                    }
                    double total = m.get(Stage.TOTAL).meanMicros();
                    double trip = m.get(Stage.ROUND_TRIP).meanMicros();
                    double wait = m.get(Stage.REPLY_WAIT).meanMicros();
                    table.append(String.format("%s: round_trip %.0f us, reply_wait %.0f us, stages %.0f us, total %.0f us%n",
                            name, trip, wait, sum, total));
                    assertTrue(trip >= SHARD_MILLIS * 1000, name + ": the shard's " + SHARD_MILLIS
                            + " ms are in round_trip: " + table);
                    assertTrue(trip < (SHARD_MILLIS + 15) * 1000, name + ": the reply work is not: " + table);
                    assertTrue(wait >= REPLY_WORK_MICROS, name + ": the reply work is in reply_wait: " + table);
                    assertTrue(sum <= total + 1, name + ": the stages are parts of the total: " + table);
                    assertTrue(total - sum <= TOLERANCE_MILLIS * 1000, name + ": the stages add up to the total within "
                            + TOLERANCE_MILLIS + " ms: " + table);
                }
            } finally {
                assertEquals(0, r.stopAndAwait(exit), r.err());
            }
        }
    }
}
