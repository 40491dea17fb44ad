package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.internal.engine.GeneratedShards;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A service's successful answers leave as exact bytes on a real socket: the ready-made head
 * ({@code HTTP/1.1 200 OK}, {@code content-type}, {@code content-length}) and the body, small bodies
 * copied behind the head and large ones sent after it, in order with the answers Netty's encoder
 * writes (a {@code HEAD}'s answer keeps no body); a binding's status and content type are honoured; a connection's last answer carries
 * {@code connection: close}; a content type with a control character is a {@code 500}, not a header.
 */
@Timeout(30)
class HttpFastPathTest {

    static FanoutServer server;

    /** Answers {@code ?n=N} with N bytes {@code a b c …} (no shard call), status and type per path. */
    record Text(int n) {}

    static final class TextService implements FanoutService<Text, Object, Text> {
        @Override
        public void plan(Text q, FanoutPlan<Text, Object> plan) {}

        @Override
        public Text merge(Text q, Replies<Object> replies, FanoutPlan<Text, Object> next) {
            return q;
        }
    }

    record TextBinding(HttpResponseStatus status, String contentType) implements HttpBinding<Text, Text> {
        @Override
        public Text decode(HttpRequestView request) throws io.doubleface.api.BadRequestException {
            return new Text(request.queryInt("n", 5, 0, 100_000));
        }

        @Override
        public ByteBuf encode(Text response, ByteBufAllocator alloc) {
            ByteBuf b = alloc.buffer(response.n());
            for (int i = 0; i < response.n(); i++) {
                b.writeByte('a' + i % 26);
            }
            return b;
        }

        @Override
        public HttpResponseStatus status(Text response) {
            return status;
        }
    }

    /** As {@link TextBinding}, with N from the request's {@code X-N} header. */
    record HeaderBinding() implements HttpBinding<Text, Text> {
        @Override
        public Text decode(HttpRequestView request) throws io.doubleface.api.BadRequestException {
            String n = request.headers().get("x-n");
            if (n == null) {
                throw new io.doubleface.api.BadRequestException("x-n: missing");
            }
            return new Text(Integer.parseInt(n));
        }

        @Override
        public ByteBuf encode(Text response, ByteBufAllocator alloc) {
            return new TextBinding(HttpResponseStatus.OK, "text/plain").encode(response, alloc);
        }

        @Override
        public String contentType() {
            return "text/plain";
        }
    }

    static String body(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append((char) ('a' + i % 26));
        }
        return b.toString();
    }

    static String ok(int n) {
        return "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: " + n + "\r\n\r\n" + body(n);
    }

    @BeforeAll
    static void start() {
        TextService service = new TextService();
        FanoutServer.Builder b = FanoutServer.builder();
        b.backend("unused", new GeneratedShards(1), false); // a server needs one; these routes call no shard
        server = b
                .get("/text", service, new TextBinding(HttpResponseStatus.OK, "text/plain"))
                .get("/created", service, new TextBinding(HttpResponseStatus.CREATED, "application/json"))
                .get("/bad-type", service, new TextBinding(HttpResponseStatus.OK, "text/plain\r\nx-injected: 1"))
                .get("/header", service, new HeaderBinding())
                .port(0).adminPort(-1).ioThreads(1).configuration("doubleface").start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Sends {@code raw}, then reads until {@code expected} bytes arrived or the server closed. */
    static String exchange(String raw, int expected) throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] b = new byte[8192];
            while (got.size() < expected) {
                int n = in.read(b);
                if (n < 0) {
                    break;
                }
                got.write(b, 0, n);
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void smallAndLargeBodiesLeaveAsTheExactHeadAndBody() throws Exception {
        for (int n : new int[] {0, 1, 9, 10, 1024, 1025, 70_000}) {
            String want = ok(n);
            assertEquals(want, exchange("GET /text?n=" + n + " HTTP/1.1\r\nHost: t\r\n\r\n", want.length()), "n=" + n);
        }
    }

    @Test
    void pipelinedAnswersComeInOrderAndTheHeadQueueStaysInStep() throws Exception {
        // HEAD has no route (405, its body left out by Netty's encoder, which polls the HEAD queue the
        // fast path polls too): the answers around it must not lose or gain a body
        String want = ok(3) + "HTTP/1.1 405 Method Not Allowed\r\ncontent-type: text/plain; charset=utf-8\r\n"
                + "allow: GET\r\ncontent-length: 43\r\n\r\n" + ok(2000) + "HTTP/1.1 404 Not Found";
        String got = exchange("GET /text?n=3 HTTP/1.1\r\nHost: t\r\n\r\n"
                + "HEAD /text?n=2000 HTTP/1.1\r\nHost: t\r\n\r\n"
                + "GET /text?n=2000 HTTP/1.1\r\nHost: t\r\n\r\n"
                + "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n", want.length());
        assertEquals(want, got.substring(0, Math.min(got.length(), want.length())));
    }

    @Test
    void queryNumbersAreParsedInPlaceWithTheInterfacesAnswersAndErrors() throws Exception {
        // the server's view parses a plain query's numbers where they are; escaped queries and every
        // error go through the interface's own code: the answers must be the same either way
        for (String q : new String[] {"n=12", "x=1&n=12&y", "n=%31%32", "n=012", "n", "==n=12"}) {
            String want = q.equals("n") ? "HTTP/1.1 400 Bad Request" : ok(12).substring(0, 15);
            String got = exchange("GET /text?" + q + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                    Integer.MAX_VALUE);
            assertTrue(got.startsWith(want), q + ": " + got);
            if (!q.equals("n")) {
                assertTrue(got.endsWith("\r\n\r\n" + body(12)), q + ": " + got);
            }
        }
        assertTrue(exchange("GET /text HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", Integer.MAX_VALUE)
                .endsWith("\r\n\r\n" + body(5)), "absent: the default");
        String[][] errors = {
            {"n=x", "n: 'x' (expected: 0..100000)"},
            {"n=", "n: '' (expected: 0..100000)"},
            {"n=100001", "n: 100001 (expected: 0..100000)"},
            {"n=-1", "n: -1 (expected: 0..100000)"},
            {"n=99999999999999999999", "n: '99999999999999999999' (expected: 0..100000)"},
            {"n=1&n=2", "n: given 2 times (expected: once)"},
            {"n=%78", "n: 'x' (expected: 0..100000)"},
        };
        for (String[] e : errors) {
            String got = exchange("GET /text?" + e[0] + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                    Integer.MAX_VALUE);
            assertTrue(got.startsWith("HTTP/1.1 400 Bad Request\r\n") && got.contains("\r\n\r\n" + e[1] + "\n"),
                    e[0] + ": " + got);
        }
    }

    @Test
    void theBindingsStatusAndContentTypeAreWritten() throws Exception {
        String want = "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\nabcd";
        assertEquals(want, exchange("GET /created?n=4 HTTP/1.1\r\nHost: t\r\n\r\n", want.length()));
    }

    @Test
    void theLastAnswerOfAConnectionSaysCloseAndHasItsLength() throws Exception {
        String got = exchange("GET /text?n=7 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", Integer.MAX_VALUE);
        assertTrue(got.startsWith("HTTP/1.1 200 OK\r\n"), got);
        String head = got.substring(0, got.indexOf("\r\n\r\n")).toLowerCase();
        assertTrue(head.contains("\r\nconnection: close") && head.contains("\r\ncontent-length: 7")
                && head.contains("\r\ncontent-type: text/plain"), got);
        assertTrue(got.endsWith("\r\n\r\n" + body(7)), got);
    }

    @Test
    void aContentTypeWithAControlCharacterIsA500NotAHeader() throws Exception {
        String got = exchange("GET /bad-type?n=3 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", Integer.MAX_VALUE);
        assertTrue(got.startsWith("HTTP/1.1 500 Internal Server Error\r\n"), got);
        assertTrue(!got.toLowerCase().contains("x-injected"), got);
        // the step, not the exception (logged): the bad content type's text is not echoed either
        assertTrue(got.endsWith("\r\n\r\nencoding the response failed\n"), got);
    }

    @Test
    void headersAreThereWhenAServiceAsksAndTheServersOwnChecksHoldWithoutThem() throws Exception {
        // a simple head's fields are kept as bytes until something asks (SimpleRequestHead.Request):
        // the service's header, and the server's checks of Host and keep-alive answered from the parse
        String want = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 7\r\n\r\n" + body(7);
        assertEquals(want, exchange("GET /header HTTP/1.1\r\nHost: t\r\nX-N: \t7 \r\n\r\n", want.length()));
        String twoHosts = exchange("GET /text?n=1 HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", Integer.MAX_VALUE);
        assertTrue(twoHosts.startsWith("HTTP/1.1 400 Bad Request\r\n")
                && twoHosts.endsWith("malformed request: Host header given 2 times (expected: once)\n"), twoHosts);
        String noHost = exchange("GET /text?n=1 HTTP/1.1\r\nX-A: b\r\n\r\n", Integer.MAX_VALUE);
        assertTrue(noHost.startsWith("HTTP/1.1 400 Bad Request\r\n")
                && noHost.endsWith("malformed request: missing Host header (required in HTTP/1.1)\n"), noHost);
        // HTTP/1.0 asking for keep-alive: the first answer leaves the connection open for the second
        String kept = exchange("GET /text?n=2 HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\nGET /text?n=3 HTTP/1.0\r\n\r\n",
                Integer.MAX_VALUE);
        int second = kept.indexOf("HTTP/1.1 200 OK", 1);
        assertTrue(kept.startsWith("HTTP/1.1 200 OK\r\n") && second > 0 && kept.substring(0, second).endsWith("ab")
                && kept.endsWith("abc"), kept);
        assertTrue(!kept.substring(0, second).toLowerCase().contains("connection: close"), kept);
    }

    @Test
    void http10ClientsGetTheAnswerAndTheClose() throws Exception {
        String got = exchange("GET /text?n=5 HTTP/1.0\r\n\r\n", Integer.MAX_VALUE);
        assertTrue(got.startsWith("HTTP/1.1 200 OK\r\n") && got.endsWith("\r\n\r\nabcde"), got);
        assertTrue(got.toLowerCase().contains("connection: close"), got);
    }
}
