package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessageDecoderResult;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link SimpleRequestHead} decodes exactly what Netty's decoder decodes, for the heads it takes,
 * and leaves every other head to Netty's decoder: the request decoder with the fast path and
 * without it must hand on the same messages for any bytes, read in any pieces.
 */
class SimpleRequestHeadTest {

    /** What the decoder handed on, one line per request, and how many requests the fast path took. */
    record Decoded(List<String> messages, int fast) {}

    static Decoded decode(byte[] input, int[] cuts, boolean fastPath, HttpDecoderConfig config) {
        EmbeddedChannel ch = new EmbeddedChannel(StrictRequestDecoder.codec(config, fastPath));
        int from = 0;
        for (int cut : cuts) {
            if (cut > from && cut < input.length) {
                ch.writeInbound(Unpooled.copiedBuffer(input, from, cut - from));
                from = cut;
            }
        }
        if (from < input.length) {
            ch.writeInbound(Unpooled.copiedBuffer(input, from, input.length - from));
        }
        ch.finish(); // the connection closes: a head cut short is reported as Netty reports it
        List<String> out = new ArrayList<>();
        int fast = 0;
        StringBuilder current = null;
        for (Object m; (m = ch.readInbound()) != null; ) {
            try {
                if (m instanceof HttpRequest r) {
                    if (current != null) {
                        out.add(current.toString());
                    }
                    current = new StringBuilder();
                    if (r.decoderResult().isSuccess() && !(r.decoderResult() instanceof HttpMessageDecoderResult)) {
                        fast++;
                    }
                    // the handler's two checks: the fast path's request answers them from its parse,
                    // before its headers are built; Netty's answers come from the headers
                    int hosts;
                    boolean keepAlive;
                    if (r instanceof SimpleRequestHead.Request simple) {
                        hosts = simple.hostCount();
                        keepAlive = simple.keepAlive();
                    } else {
                        hosts = r.headers().getAll(HttpHeaderNames.HOST).size();
                        keepAlive = HttpUtil.isKeepAlive(r);
                    }
                    current.append(result(r.decoderResult())).append(' ').append(r.method()).append(' ')
                            .append(r.uri()).append(' ').append(r.protocolVersion()).append(" hosts=").append(hosts)
                            .append(" keep-alive=").append(keepAlive).append(" headers");
                    for (Map.Entry<String, String> e : r.headers()) {
                        current.append(" [").append(e.getKey()).append('=').append(e.getValue()).append(']');
                    }
                }
                if (m instanceof HttpContent c) {
                    if (current == null) {
                        current = new StringBuilder("(content without a head)");
                    }
                    current.append(" body ").append(c.content().toString(StandardCharsets.ISO_8859_1).length())
                            .append(':').append(c.content().toString(StandardCharsets.ISO_8859_1));
                    if (!(m instanceof HttpRequest)) {
                        current.append(' ').append(result(c.decoderResult()));
                    }
                    if (m instanceof LastHttpContent last) {
                        current.append(" last");
                        for (Map.Entry<String, String> e : last.trailingHeaders()) {
                            current.append(" [").append(e.getKey()).append('=').append(e.getValue()).append(']');
                        }
                        out.add(current.toString());
                        current = null;
                    }
                }
            } finally {
                ReferenceCountUtil.release(m);
            }
        }
        if (current != null) {
            out.add(current.toString());
        }
        return new Decoded(out, fast);
    }

    private static String result(io.netty.handler.codec.DecoderResult r) {
        return r.isSuccess() ? "ok" : "failed(" + r.cause().getClass().getSimpleName() + ": " + r.cause().getMessage() + ")";
    }

    private static byte[] latin1(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void aCommonHeadTakesTheFastPathWithNettysFields() {
        byte[] in = latin1("GET /q?fanout=5&size=small HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: wrk \r\n"
                + "X-Empty:\r\nConnection:\tclose\r\n\r\n");
        Decoded fast = decode(in, new int[0], true, new HttpDecoderConfig());
        Decoded netty = decode(in, new int[0], false, new HttpDecoderConfig());
        assertEquals(1, fast.fast());
        assertEquals(netty.messages(), fast.messages());
        assertEquals(List.of("ok GET /q?fanout=5&size=small HTTP/1.1 hosts=1 keep-alive=false headers "
                + "[Host=127.0.0.1:8080] [User-Agent=wrk] [X-Empty=] [Connection=close] body 0: ok last"), fast.messages());
    }

    @Test
    void pipelinedHeadsAllTakeTheFastPathAndABodyGoesToNetty() {
        String get = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
        String post = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
        String head = "HEAD /b HTTP/1.0\r\n\r\n";
        byte[] in = latin1(get + post + get + head + "DELETE /c HTTP/1.1\r\nHost: h\r\n\r\n");
        Decoded fast = decode(in, new int[0], true, new HttpDecoderConfig());
        assertEquals(decode(in, new int[0], false, new HttpDecoderConfig()).messages(), fast.messages());
        assertEquals(4, fast.fast(), "GET, GET, HEAD, DELETE; the POST with a body through Netty's decoder");
        assertTrue(fast.messages().get(1).contains("body 3:abc"), fast.messages().get(1));
    }

    @Test
    void headsOutsideTheGrammarAreNettysWithNettysAnswer() {
        HttpDecoderConfig config = new HttpDecoderConfig().setMaxInitialLineLength(64).setMaxHeaderSize(64);
        String[] heads = {
            "GET /a HTTP/1.1\r\nHost: h\r\nX-A: b\r\n c\r\n\r\n", // obs-fold: refused by the strict decoder
            "GET /a HTTP/1.1\nHost: h\n\n", // bare line feeds
            "GET  /a HTTP/1.1\r\nHost: h\r\n\r\n", // two spaces
            "GET /a HTTP/1.1\r\nHost : h\r\n\r\n", // space before the colon
            "GET /\u00e9 HTTP/1.1\r\nHost: h\r\n\r\n", // obs-text in the target
            "GET /a HTTP/1.1\r\nX-A: \u00e9\r\n\r\n", // obs-text in a value
            "GET /a HTTP/1.1\r\nX-A: a\u0001b\r\n\r\n", // a control character in a value
            "GET /a HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET /a HTTP/1.1\r\nSec-WebSocket-Key1: a\r\nSec-WebSocket-Key2: b\r\n\r\n12345678",
            "GET /" + "a".repeat(80) + " HTTP/1.1\r\n\r\n", // request line over the limit
            "GET /a HTTP/1.1\r\nX-A: " + "b".repeat(70) + "\r\n\r\n", // headers over the limit
            "GET /a HTTP/2.0\r\n\r\n",
            "get /a HTTP/1.1\r\n\r\n",
            "\r\nGET /a HTTP/1.1\r\nHost: h\r\n\r\n", // a blank line first (Netty skips it)
        };
        for (String h : heads) {
            byte[] in = latin1(h + "GET /next HTTP/1.1\r\nHost: h\r\n\r\n");
            Decoded fast = decode(in, new int[0], true, config);
            Decoded netty = decode(in, new int[0], false, config);
            assertEquals(netty.messages(), fast.messages(), h);
            assertTrue(fast.fast() <= 1, "the fast path took " + h);
        }
        List<String> folded = decode(latin1(heads[0]), new int[0], true, config).messages();
        assertTrue(folded.get(0).startsWith("failed(ObsFoldException"), folded.get(0));
    }

    @Test
    void aHeadSplitAcrossReadsIsNettysAndTheNextOneFastAgain() {
        byte[] in = latin1("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n");
        for (int cut = 1; cut < 28; cut++) {
            Decoded fast = decode(in, new int[] {cut}, true, new HttpDecoderConfig());
            assertEquals(decode(in, new int[] {cut}, false, new HttpDecoderConfig()).messages(), fast.messages());
            assertEquals(1, fast.fast(), "cut at " + cut + ": the second head is whole in the next read");
        }
    }

    @Test
    void afterAFailedRequestNothingMoreIsDecoded() {
        byte[] in = latin1("GET /a HTTP/1.1\r\nBad Name: x\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n");
        Decoded fast = decode(in, new int[0], true, new HttpDecoderConfig());
        assertEquals(decode(in, new int[0], false, new HttpDecoderConfig()).messages(), fast.messages());
        assertEquals(1, fast.messages().size(), fast.messages().toString());
        assertEquals(0, fast.fast());
    }

    @Test
    void aLongHeadIsReadPastTheFirstCopy() {
        StringBuilder h = new StringBuilder("GET /long HTTP/1.1\r\nHost: h\r\n");
        for (int i = 0; i < 20; i++) {
            h.append("X-Field-").append(i).append(": ").append("v".repeat(40)).append("\r\n");
        }
        byte[] in = latin1(h + "\r\n");
        Decoded fast = decode(in, new int[0], true, new HttpDecoderConfig());
        assertEquals(1, fast.fast());
        assertEquals(decode(in, new int[0], false, new HttpDecoderConfig()).messages(), fast.messages());
    }

    /** Random and mutated pipelines of heads, cut into random reads: the same messages either way. */
    @Test
    void randomHeadsDecodeAlikeWithAndWithoutTheFastPath() {
        Random rnd = new Random(20261127);
        int requests = 0;
        int fastTaken = 0;
        for (int i = 0; i < 20_000; i++) {
            byte[] in = randomPipeline(rnd);
            int[] cuts = new int[rnd.nextInt(4)];
            for (int c = 0; c < cuts.length; c++) {
                cuts[c] = rnd.nextInt(in.length + 1);
            }
            java.util.Arrays.sort(cuts);
            HttpDecoderConfig config = rnd.nextBoolean() ? new HttpDecoderConfig()
                    : new HttpDecoderConfig().setMaxInitialLineLength(40).setMaxHeaderSize(60);
            Decoded fast = decode(in, cuts, true, config);
            Decoded netty = decode(in, cuts, false, config);
            assertEquals(netty.messages(), fast.messages(), () -> "input " + escape(in) + " cuts "
                    + java.util.Arrays.toString(cuts));
            requests += fast.messages().size();
            fastTaken += fast.fast();
        }
        // the comparison means something only if both paths were exercised
        assertTrue(fastTaken > requests / 5, fastTaken + " of " + requests + " by the fast path");
        assertTrue(fastTaken < requests * 4 / 5, fastTaken + " of " + requests + " by the fast path");
    }

    static String escape(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            int c = x & 0xFF;
            if (c >= 0x20 && c < 0x7F && c != '\\') {
                s.append((char) c);
            } else {
                s.append(String.format("\\x%02x", c));
            }
        }
        return s.toString();
    }

    private static final String[] METHODS = {"GET", "GET", "GET", "HEAD", "DELETE", "POST", "PUT", "GETX", "get", "DELET", "HEA"};
    private static final String[] TARGETS = {"/", "/a?b=c&d", "/q?fanout=5&size=small", "*", "/%20x", "/\u00e9", "/a b",
        "/\u0001", "", "http://h/x", "/" + "p".repeat(50)};
    private static final String[] VERSIONS = {"HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "http/1.1", "HTTP/1.1 ",
        "HTTP/1.", "HTTP/1.12"};
    private static final String[] NAMES = {"Host", "Host", "host", "HOST", "Connection", "connection", "X-A", "User-Agent",
        "Content-Length", "content-length", "Transfer-Encoding", "Sec-WebSocket-Key1", "Sec-WebSocket-Key2", "Bad Name", "",
        "X:Y", "Expect", "Upgrade", "a"};
    private static final String[] VALUES = {"", "v", " v ", "a\tb", "close", "keep-alive", "0", "3", "chunked", "\u00e9",
        "\u0001", "x\ry", " ", "\t", "100-continue", "1, 2", "h" + "v".repeat(45)};
    private static final String[] SEPARATORS = {":", ": ", ": ", ":\t", " :", ":  "};
    private static final String[] EOLS = {"\r\n", "\r\n", "\r\n", "\r\n", "\n", "\r", "\r\r\n"};

    /** The pieces the fast path takes: a head made of these only is simple (mutations aside). */
    private static final String[] CLEAN_METHODS = {"GET", "GET", "HEAD", "DELETE"};
    private static final String[] CLEAN_TARGETS = {"/", "/a?b=c&d", "/q?fanout=5&size=small", "*", "/%20x", "http://h/x"};
    private static final String[] CLEAN_VERSIONS = {"HTTP/1.1", "HTTP/1.0"};
    private static final String[] CLEAN_NAMES = {"Host", "host", "Connection", "connection", "X-A", "User-Agent", "Expect", "a"};
    private static final String[] CLEAN_VALUES = {"", "v", " v ", "a\tb", "close", "keep-alive", " ", "\t", "1, 2"};
    private static final String[] CLEAN_SEPARATORS = {":", ": ", ":\t", ":  "};

    private static byte[] randomPipeline(Random rnd) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int n = 1 + rnd.nextInt(3);
        for (int r = 0; r < n; r++) {
            boolean clean = rnd.nextInt(3) != 0; // two thirds from the fast path's grammar, before mutation
            StringBuilder h = new StringBuilder();
            if (!clean && rnd.nextInt(20) == 0) {
                h.append("\r\n");
            }
            h.append(pick(rnd, clean ? CLEAN_METHODS : METHODS)).append(!clean && rnd.nextInt(15) == 0 ? "  " : " ")
                    .append(pick(rnd, clean ? CLEAN_TARGETS : TARGETS)).append(!clean && rnd.nextInt(20) == 0 ? "\t" : " ")
                    .append(pick(rnd, clean ? CLEAN_VERSIONS : VERSIONS)).append(eol(rnd, clean));
            int fields = rnd.nextInt(6);
            for (int f = 0; f < fields; f++) {
                h.append(pick(rnd, clean ? CLEAN_NAMES : NAMES)).append(pick(rnd, clean ? CLEAN_SEPARATORS : SEPARATORS))
                        .append(pick(rnd, clean ? CLEAN_VALUES : VALUES)).append(eol(rnd, clean));
                if (!clean && rnd.nextInt(30) == 0) {
                    h.append(rnd.nextBoolean() ? " " : "\t").append("folded").append(eol(rnd, clean));
                }
            }
            h.append(eol(rnd, clean));
            if (!clean && rnd.nextInt(8) == 0) {
                h.append("abc"); // a body, or the next request's garbage
            }
            byte[] b = latin1(h.toString());
            if (rnd.nextInt(5) == 0) { // mutate a byte
                int at = rnd.nextInt(b.length);
                b[at] = (byte) (rnd.nextBoolean() ? rnd.nextInt(256) : "\r\n :\t".charAt(rnd.nextInt(5)));
            }
            out.writeBytes(b);
        }
        return out.toByteArray();
    }

    private static String eol(Random rnd, boolean clean) {
        return !clean && rnd.nextInt(10) == 0 ? pick(rnd, EOLS) : "\r\n";
    }

    private static String pick(Random rnd, String[] a) {
        return a[rnd.nextInt(a.length)];
    }

    @Test
    void theFastPathHandsOnHeadsWithoutNettysResult() {
        // what the counting above relies on: Netty's decoder sets an HttpMessageDecoderResult
        EmbeddedChannel ch = new EmbeddedChannel(StrictRequestDecoder.codec(new HttpDecoderConfig(), false));
        ch.writeInbound(Unpooled.copiedBuffer(latin1("GET / HTTP/1.1\r\nHost: h\r\n\r\n")));
        HttpRequest r = ch.readInbound();
        assertInstanceOf(HttpMessageDecoderResult.class, r.decoderResult());
        ch.finishAndReleaseAll();
    }
}
