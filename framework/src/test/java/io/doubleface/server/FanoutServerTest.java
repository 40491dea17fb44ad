package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.testing.TestRead;
import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The HTTP upstream over real sockets, for every threading model: requests admitted to the engine
 * are answered with the merged reply, in request order when pipelined even if they complete out
 * of order, and shard failures map to their status. One server; each test switches through the
 * configurations (which also exercises run-time switching).
 */
@Timeout(120)
class FanoutServerTest {

    /** One configuration of each model and variant whose code path differs. */
    private static final List<String> CONFIGURATIONS = List.of(
            "doubleface", "doubleface-fifo", "thread-2", "thread-virtual", "type1-2", "type2a-1f1b", "type2b",
            "type2b-fixed-2");

    private static final int FIELD_REPLY = TestRead.REPLY_SIZE;

    private static GeneratedShards driver;
    private static FanoutServer server;

    @BeforeAll
    static void start() {
        driver = new GeneratedShards(4);
        FanoutServer.Builder b = FanoutServer.builder();
        io.doubleface.api.Backend<TestRead> echo = b.backend("echo", driver, false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        b.get("/lazy", new Lazy(echo), new LazyBinding());
        server = b
                .port(0)
                .ioThreads(2)
                .configuration("doubleface")
                .deadline(Duration.ofSeconds(10))
                .limits(new HttpLimits(256, 1024, 64, 4, Duration.ofSeconds(60)))
                .start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @AfterEach
    void reset() {
        driver.failShard(-1);
        driver.reverseNext(0);
    }

    @Test
    void getIsAnsweredWithTheMergedReplyUnderEveryModel() throws IOException {
        for (String config : CONFIGURATIONS) {
            server.switchTo(config);
            try (Client c = new Client()) {
                c.send(get("/echo?key=5&fan=3"));
                Response r = c.read();
                assertEquals(200, r.status(), config);
                assertEquals("5:" + 3 * FIELD_REPLY, r.body(), config);
                assertEquals("text/plain; charset=utf-8", r.headers().get("content-type"), config);
            }
        }
    }

    /**
     * {@code GET /lazy?key=N&fan=K}: plans no call, and its first merge (with no replies) plans the
     * K calls {@code /echo} would make, as a cache miss does; the second merge answers.
     */
    static final class Lazy implements io.doubleface.api.FanoutService<EchoService.Query, Integer, String> {
        private final io.doubleface.api.Backend<TestRead> shards;
        private final io.doubleface.api.ReplyHandler<EchoService.Query, io.netty.buffer.ByteBuf, Integer> length =
                (q, call, reply) -> reply.readableBytes();

        Lazy(io.doubleface.api.Backend<TestRead> shards) {
            this.shards = shards;
        }

        @Override
        public void plan(EchoService.Query q, io.doubleface.api.FanoutPlan<EchoService.Query, Integer> plan) {
            // nothing: answered from merge, or planned there
        }

        @Override
        public String merge(EchoService.Query q, io.doubleface.api.Replies<Integer> replies,
                io.doubleface.api.FanoutPlan<EchoService.Query, Integer> next) {
            if (replies.size() == 0) {
                for (int s = 0; s < q.fan(); s++) {
                    next.call(shards, s, TestRead.readField(q.key(), 0), length);
                }
                return q.fan() == 0 ? "lazy " + q.key() + ": cached" : null;
            }
            return "lazy " + q.key() + ":" + replies.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /** {@link EchoService.Binding} for {@link Lazy}. */
    static final class LazyBinding implements io.doubleface.api.HttpBinding<EchoService.Query, String> {
        private final EchoService.Binding echo = new EchoService.Binding();

        @Override
        public EchoService.Query decode(io.doubleface.api.HttpRequestView request)
                throws io.doubleface.api.BadRequestException {
            return echo.decode(request);
        }

        @Override
        public io.netty.buffer.ByteBuf encode(String response, io.netty.buffer.ByteBufAllocator alloc) {
            return echo.encode(response, alloc);
        }
    }

    @Test
    void routesWithNoShardCallsAnswerAndMayPlanCallsFromTheirMergeUnderEveryModel() throws IOException {
        for (String config : CONFIGURATIONS) {
            server.switchTo(config);
            try (Client c = new Client()) {
                c.send(get("/echo?key=5&fan=0")); // a plan of no calls: merged at once with no replies
                Response r = c.read();
                assertEquals(200, r.status(), config + ": " + r.body());
                assertEquals("5:0", r.body(), config);
                c.send(get("/lazy?key=6&fan=0")); // "cache hit": answered by the merge of the empty round
                r = c.read();
                assertEquals(200, r.status(), config + ": " + r.body());
                assertEquals("lazy 6: cached", r.body(), config);
                c.send(get("/lazy?key=7&fan=3")); // "cache miss": the merge of the empty round plans 3 calls
                r = c.read();
                assertEquals(200, r.status(), config + ": " + r.body());
                assertEquals("lazy 7:" + 3 * FIELD_REPLY, r.body(), config);
            }
        }
    }

    @Test
    void pipelinedRequestsCompletingOutOfOrderAreAnsweredInOrderUnderEveryModel() throws IOException {
        for (String config : CONFIGURATIONS) {
            server.switchTo(config);
            try (Client c = new Client()) {
                driver.reverseNext(2); // the second request's reply comes first
                c.send(get("/echo?key=1") + get("/echo?key=2"));
                assertEquals("1:" + FIELD_REPLY, c.read().body(), config);
                assertEquals("2:" + FIELD_REPLY, c.read().body(), config);

                // more than maxPipelined (4) at once: reading pauses and resumes, order holds
                StringBuilder many = new StringBuilder();
                for (int k = 0; k < 20; k++) {
                    many.append(get("/echo?key=" + k + "&fan=" + (1 + k % 4)));
                }
                c.send(many.toString());
                for (int k = 0; k < 20; k++) {
                    Response r = c.read();
                    assertEquals(200, r.status(), config);
                    assertEquals(k + ":" + (1 + k % 4) * FIELD_REPLY, r.body(), config);
                }
            }
        }
    }

    @Test
    void shardFailureAnswers503AndKeepsTheConnection() throws IOException {
        for (String config : CONFIGURATIONS) {
            server.switchTo(config);
            try (Client c = new Client()) {
                driver.failShard(1);
                c.send(get("/echo?key=3&fan=2"));
                Response failed = c.read();
                assertEquals(503, failed.status(), config);
                assertEquals("backend echo: shard 1 unavailable", failed.body(), config);
                driver.failShard(-1);
                c.send(get("/echo?key=3&fan=2"));
                assertEquals(200, c.read().status(), config);
            }
        }
    }

    @Test
    void errorsAndAnswersInterleaveInRequestOrder() throws IOException {
        for (String config : List.of("doubleface", "type1-2")) {
            server.switchTo(config);
            try (Client c = new Client()) {
                c.send(get("/echo?key=7") + get("/missing") + get("/echo?key=8&fan=9") + get("/echo?key=9"));
                Response ok = c.read();
                assertEquals(200, ok.status(), config);
                assertEquals(404, c.read().status(), config);
                Response planFailed = c.read();
                assertEquals(500, planFailed.status(), config);
                // the step, not the exception (that is logged): no class name, no message of the code's
                assertEquals("plan failed", planFailed.body().strip(), config);
                assertEquals("9:" + FIELD_REPLY, c.read().body(), config);
            }
        }
    }

    @Test
    void brokenRequestAfterAnAdmittedOneIsAnsweredAfterItThenTheConnectionCloses() throws IOException {
        server.switchTo("doubleface");
        try (Client c = new Client()) {
            driver.reverseNext(0);
            c.send(get("/echo?key=4") + "GET /" + "x".repeat(300) + " HTTP/1.1\r\nHost: t\r\n\r\n");
            assertEquals("4:" + FIELD_REPLY, c.read().body());
            Response tooLong = c.read();
            assertEquals(414, tooLong.status());
            assertEquals("close", tooLong.headers().get("connection"));
            assertEquals(-1, c.in.read(), "the server closed the connection");
        }
    }

    private static String get(String uri) {
        return "GET " + uri + " HTTP/1.1\r\nHost: t\r\n\r\n";
    }

    private record Response(int status, Map<String, String> headers, String body) {}

    /** A raw HTTP/1.1 client: writes bytes as given, parses Content-Length framed responses. */
    private static final class Client implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        Client() throws IOException {
            socket = new Socket("127.0.0.1", server.port());
            socket.setSoTimeout(20_000);
            in = socket.getInputStream();
            out = socket.getOutputStream();
        }

        void send(String raw) throws IOException {
            out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }

        Response read() throws IOException {
            String status = line();
            assertTrue(status.startsWith("HTTP/1.1 "), status);
            Map<String, String> headers = new LinkedHashMap<>();
            for (String h; !(h = line()).isEmpty(); ) {
                int colon = h.indexOf(':');
                headers.put(h.substring(0, colon).strip().toLowerCase(Locale.ROOT), h.substring(colon + 1).strip());
            }
            int length = Integer.parseInt(headers.get("content-length"));
            byte[] body = in.readNBytes(length);
            assertEquals(length, body.length, "whole body");
            return new Response(Integer.parseInt(status.substring(9, 12)), headers,
                    new String(body, StandardCharsets.UTF_8).strip());
        }

        private String line() throws IOException {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            for (int ch; (ch = in.read()) != '\n'; ) {
                if (ch < 0) {
                    throw new IOException("connection closed mid-response: " + b);
                }
                if (ch != '\r') {
                    b.write(ch);
                }
            }
            return b.toString(StandardCharsets.ISO_8859_1);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

}
