package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.FanoutServer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@code doubleface load}: bad input, an unreachable target, and a short run against {@code serve ycsb}. */
class LoadCommandTest {

    @Test
    void invalidFlagsAreUsageErrors() {
        String[][] bad = {
            {"load", "--rate", "100"},                                   // no --url/--mix
            {"load", "--url", "/"},                                      // no load
            {"load", "--url", "/", "--rate", "100", "--users", "2"},     // both loops
            {"load", "--url", "/", "--rate", "-1"},
            {"load", "--url", "/", "--rate", "abc"},
            {"load", "--url", "/", "--schedule", "steps:100"},
            {"load", "--url", "/", "--rate", "10", "--duration", "10"},  // no unit
            {"load", "--url", "nopath", "--rate", "10"},
            {"load", "--mix", "x:/a", "--rate", "10"},
            {"load", "--url", "/", "--rate", "10", "--target", "https://h:1"},
            {"load", "--url", "/", "--rate", "10", "--bogus"},
            {"load", "--url", "/", "--rate", "10", "--arrivals", "h2:1"},
            {"load", "--url", "/", "--rate", "10", "--arrivals", "pareto"},
            {"load", "--url", "/", "--users", "2", "--arrivals", "h2:4"},
            {"load", "--url", "/", "--users", "2", "--lag-log", "lag.csv"},
            {"load", "--url", "/", "--users", "2", "--busy-poll"},
            {"load", "--url", "/", "--rate", "10", "--busy-poll", "--transport", "nio"},
        };
        for (String[] args : bad) {
            CliRun r = new CliRun();
            assertEquals(DoubleFaceCli.EXIT_USAGE, r.run(args), () -> String.join(" ", args) + "\n" + r.err());
            assertTrue(r.err().contains("expected") || r.err().contains("Unknown option") || r.err().contains("Invalid value"),
                    () -> String.join(" ", args) + "\n" + r.err());
            assertTrue(r.err().contains("Try 'doubleface load") && r.err().lines().count() <= 3, r.err());
            assertEquals("", r.out(), String.join(" ", args));
        }
    }

    @Test
    void unreachableTargetIsAClearErrorWithExitOne() {
        CliRun r = new CliRun();
        long t0 = System.nanoTime();
        assertEquals(DoubleFaceCli.EXIT_FAILURE, r.run("load", "--target", "http://127.0.0.1:1", "--url", "/",
                "--rate", "100", "--warmup", "0ms", "--duration", "30s"));
        assertTrue(r.err().contains("cannot connect to 127.0.0.1:1: connection refused"), r.err());
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20));
    }

    @Test
    void jsonSummaryOfARunAgainstTheYcsbMidTier() throws Exception {
        CliRun serve = new CliRun();
        CompletableFuture<Integer> exit = serve.start("serve", "ycsb", "--port", "0", "--admin-port", "0",
                "--embedded-shards", "2", "--records", "100", "--io-threads", "1");
        FanoutServer server = serve.server.get(30, TimeUnit.SECONDS);
        try {
            CliRun r = new CliRun();
            assertEquals(0, r.run("load", "--target", "http://127.0.0.1:" + server.port(), "--mix",
                    "1:/query?fanout=1&size=small&key={key},1:/query?fanout=2&size=small&key={key}", "--keys", "100",
                    "--rate", "500", "--warmup", "200ms", "--duration", "1s", "--json"), r.err());
            String json = r.out().strip();
            assertTrue(json.startsWith("{") && json.endsWith("}") && !json.contains("\n"), json);
            for (String f : new String[] {"requests", "errors", "errors_by_kind", "throughput_rps", "offered_rate",
                "rate_kept", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "send_lag_p99_ms", "duration_s",
                "warmup_s", "mode"}) {
                assertTrue(json.contains("\"" + f + "\":"), f + " missing: " + json);
            }
            Matcher m = Pattern.compile("\"requests\":(\\d+)").matcher(json);
            assertTrue(m.find() && Long.parseLong(m.group(1)) > 100, json);
            assertTrue(json.contains("\"errors\":0,"), json);
            assertTrue(json.contains("\"p999_ms\":null"), "too few samples for p99.9: " + json);

            CliRun bursty = new CliRun();
            assertEquals(0, bursty.run("load", "--target", "http://127.0.0.1:" + server.port(), "--url",
                    "/query?fanout=1&size=small&key={key}", "--keys", "100", "--rate", "500", "--arrivals", "h2:4",
                    "--warmup", "0ms", "--duration", "1s", "--json", "--quiet"), bursty.err());
            assertTrue(bursty.out().contains("\"schedule\":\"500/s, h2:4 arrivals\""), bursty.out());
            assertTrue(bursty.out().contains("\"errors\":0,"), bursty.out());

            CliRun text = new CliRun();
            assertEquals(0, text.run("load", "--target", "http://127.0.0.1:" + server.port(), "--url",
                    "/query?fanout=1&size=small&key={key}", "--users", "2", "--warmup", "0ms", "--max-requests", "300"),
                    text.err());
            assertTrue(text.out().contains("closed loop, 2 users") && text.out().contains("300 answered"), text.out());
        } finally {
            assertEquals(0, serve.stopAndAwait(exit));
        }
    }
}
