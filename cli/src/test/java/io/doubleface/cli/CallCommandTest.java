package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.FanoutServer;
import io.doubleface.services.ycsb.Size;
import io.doubleface.services.ycsb.YcsbQuery;
import io.doubleface.services.ycsb.YcsbReference;
import io.doubleface.services.ycsb.YcsbService;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code call} against {@code serve ycsb --grpc-port} (over a {@code leaf grpc} started by the CLI
 * too), all in-process on free ports: both schemes print the same bytes, errors exit 1 with a
 * message, bad targets are usage errors.
 */
class CallCommandTest {

    static String expected(int shards, int records, YcsbQuery q) {
        return new String(YcsbReference.body(records, YcsbService.DEFAULT_SCAN_RECORDS, q),
                StandardCharsets.UTF_8);
    }

    @Test
    void httpAndGrpcPrintTheSameBytesOverAGrpcLeafStartedByTheCli() throws Exception {
        CliRun leafRun = new CliRun();
        CompletableFuture<Integer> leafExit = leafRun.start("leaf", "grpc", "--shards", "6", "--base-port", "0",
                "--records", "300");
        long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!leafRun.out().contains("listening on")) {
            assertTrue(System.nanoTime() - guard < 0, "leaf grpc did not start: " + leafRun.err());
            Thread.sleep(20);
        }
        Matcher m = Pattern.compile("listening on (\\S+) \\(6 shards, 300 records\\)").matcher(leafRun.out());
        assertTrue(m.find(), leafRun.out());
        String shards = "grpc://" + m.group(1);
        CliRun serve = new CliRun();
        CompletableFuture<Integer> serveExit = serve.start("serve", "ycsb", "--port", "0", "--grpc-port", "0",
                "--admin-port", "-1", "--shards", shards, "--records", "300", "--io-threads", "2");
        try {
            FanoutServer server = serve.server.get(30, TimeUnit.SECONDS);
            String grpc = "grpc://127.0.0.1:" + server.grpcPort();
            assertTrue(serve.out().contains("  grpc     " + grpc + " doubleface.ycsb.v1.FanoutService/Query"),
                    serve.out());
            for (String[] query : new String[][] {{"5", "small", "42"}, {"6", "large", "299"}, {"1", "medium", "0"}}) {
                CliRun http = new CliRun();
                assertEquals(0, http.run("call", "http://127.0.0.1:" + server.port(), "--fanout", query[0], "--size",
                        query[1], "--key", query[2]), http.err());
                CliRun g = new CliRun();
                assertEquals(0, g.run("call", grpc, "--fanout", query[0], "--size", query[1], "--key", query[2]),
                        g.err());
                YcsbQuery q = new YcsbQuery(Integer.parseInt(query[0]), Size.valueOf(query[1].toUpperCase(
                        java.util.Locale.ROOT)), Long.parseLong(query[2]));
                assertEquals(expected(6, 300, q), http.out());
                assertEquals(http.out(), g.out(), "http and grpc bodies differ");
                assertTrue(http.err().startsWith("HTTP 200 from "), http.err());
                assertTrue(g.err().startsWith("grpc OK from " + grpc), g.err());
            }
            // defaults are the server's: fanout 5, small
            CliRun d = new CliRun();
            assertEquals(0, d.run("call", grpc, "--key", "7"), d.err());
            assertEquals(expected(6, 300, new YcsbQuery(5, Size.SMALL, 7)), d.out());

            // error statuses: exit 1, the status and reason on stderr, nothing on stdout
            CliRun badHttp = new CliRun();
            assertEquals(1, badHttp.run("call", "http://127.0.0.1:" + server.port(), "--fanout", "99"));
            assertTrue(badHttp.err().contains("HTTP 400") && badHttp.err().contains("fanout: 99"), badHttp.err());
            assertEquals("", badHttp.out());
            CliRun badGrpc = new CliRun();
            assertEquals(1, badGrpc.run("call", grpc, "--fanout", "99"));
            assertTrue(badGrpc.err().contains("grpc INVALID_ARGUMENT") && badGrpc.err().contains("fanout: 99"),
                    badGrpc.err());
            assertEquals("", badGrpc.out());
        } finally {
            assertEquals(0, serve.stopAndAwait(serveExit), serve.err());
            assertEquals(0, leafRun.stopAndAwait(leafExit), leafRun.err());
        }
    }

    @Test
    void unreachableTargetsExitOneAndBadTargetsAreUsageErrors() throws Exception {
        // bound but never listening, and held for the whole test: a connection there is refused, and no
        // server started meanwhile can be given the port (closing a probe socket first allowed both)
        try (java.net.Socket held = new java.net.Socket()) {
            held.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            int port = held.getLocalPort();
            for (String scheme : new String[] {"http", "grpc"}) {
                CliRun r = new CliRun();
                assertEquals(1, r.run("call", scheme + "://127.0.0.1:" + port, "--key", "1", "--connect-timeout", "1s",
                        "--timeout", "5s"));
                assertTrue(r.err().contains("cannot reach " + scheme + "://127.0.0.1:" + port), r.err());
                assertEquals("", r.out());
            }
            for (String target : new String[] {"ftp://127.0.0.1:1", "grpc://127.0.0.1", "http://127.0.0.1:80/query?key=1",
                "nonsense"}) {
                CliRun r = new CliRun();
                assertEquals(2, r.run("call", target), target + ": " + r.err());
                assertTrue(r.err().contains("TARGET"), r.err());
            }
        }
    }
}
