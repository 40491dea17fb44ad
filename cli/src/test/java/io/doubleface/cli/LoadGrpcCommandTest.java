package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.FanoutServer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@code load --target grpc://} against {@code serve ycsb --grpc-port}, in-process on free ports. */
class LoadGrpcCommandTest {

    @Test
    void openAndClosedLoopOverTheGrpcUpstream() throws Exception {
        CliRun serve = new CliRun();
        CompletableFuture<Integer> exit = serve.start("serve", "ycsb", "--port", "0", "--grpc-port", "0",
                "--admin-port", "-1", "--embedded-shards", "2", "--records", "100", "--io-threads", "1");
        FanoutServer server = serve.server.get(30, TimeUnit.SECONDS);
        String target = "grpc://127.0.0.1:" + server.grpcPort();
        try {
            CliRun r = new CliRun();
            assertEquals(0, r.run("load", "--target", target, "--mix",
                    "1:/query?fanout=1&size=small&key={key},1:/query?fanout=2&size=medium&key={key}", "--keys", "100",
                    "--rate", "300", "--warmup", "200ms", "--duration", "1s", "--json"), r.err());
            String json = r.out().strip();
            Matcher m = Pattern.compile("\"requests\":(\\d+)").matcher(json);
            assertTrue(m.find() && Long.parseLong(m.group(1)) > 100, json);
            assertTrue(json.contains("\"errors\":0,"), json);
            assertTrue(json.contains("\"target\":\"" + target + "\""), json);

            CliRun closed = new CliRun();
            assertEquals(0, closed.run("load", "--target", target, "--url", "/query?fanout=2&size=small&key={key}",
                    "--keys", "100", "--users", "2", "--warmup", "0ms", "--max-requests", "300"), closed.err());
            assertTrue(closed.out().contains("closed loop, 2 users") && closed.out().contains("300 answered"),
                    closed.out());

            // a bad query is counted as a 4xx, as over HTTP
            CliRun bad = new CliRun();
            assertEquals(0, bad.run("load", "--target", target, "--url", "/query?fanout=9", "--users", "1",
                    "--warmup", "0ms", "--max-requests", "20", "--json"), bad.err());
            assertTrue(bad.out().contains("\"status_4xx\":20"), bad.out());

            CliRun usage = new CliRun();
            assertEquals(2, usage.run("load", "--target", target, "--url", "/other", "--rate", "10"));
            assertTrue(usage.err().contains("grpc request '/other'"), usage.err());
        } finally {
            assertEquals(0, serve.stopAndAwait(exit));
        }
    }
}
