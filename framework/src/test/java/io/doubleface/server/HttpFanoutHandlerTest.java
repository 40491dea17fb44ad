package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.RequestStats;
import io.doubleface.server.internal.FrontEndFixture;
import io.doubleface.server.internal.HttpFanoutHandler;
import io.doubleface.server.internal.HttpRouter;
import io.doubleface.server.internal.StrictRequestDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The HTTP/1.1 upstream handler on an {@link EmbeddedChannel}: validation, limits, routing,
 * ordering of error responses and connection closing. Socket-free.
 *
 * <p>Only requests the handler answers itself are sent here: a request admitted to the engine
 * completes on another thread, and an {@code EmbeddedChannel}'s loop claims every thread as its
 * own ({@code inEventLoop()} is always true), so the response would be written from that thread
 * concurrently with the test. Admitted requests are covered over real sockets in
 * {@link FanoutServerTest}.
 */
@Timeout(30)
class HttpFanoutHandlerTest {

    /** Small limits so the tests stay short. */
    private static final HttpLimits LIMITS = new HttpLimits(64, 128, 16, 8, Duration.ofSeconds(60));

    private static FrontEndFixture fixture;
    private static FanoutEngine engine;
    private static HttpRouter router;

    @BeforeAll
    static void start() {
        fixture = new FrontEndFixture();
        engine = fixture.engine;
        router = fixture.router;
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private final RequestStats stats = new RequestStats();

    /** The server pipeline of {@link FanoutServer} without the idle handler. */
    private EmbeddedChannel channel() {
        return new EmbeddedChannel(
                StrictRequestDecoder.codec(new HttpDecoderConfig()
                        .setMaxInitialLineLength(LIMITS.maxInitialLineLength())
                        .setMaxHeaderSize(LIMITS.maxHeaderSize())
                        .setMaxChunkSize(8192)),
                new HttpFanoutHandler(engine, router, LIMITS.connectionLimits(), stats));
    }

    private record Response(int status, String body, String connection, String allow, long contentLength) {}

    private static void send(EmbeddedChannel ch, String raw) {
        ch.writeInbound(Unpooled.copiedBuffer(raw, StandardCharsets.ISO_8859_1));
    }

    /** Decodes (and releases) everything the handler wrote. */
    private static List<Response> responses(EmbeddedChannel ch) {
        EmbeddedChannel client = new EmbeddedChannel(new HttpResponseDecoder(), new HttpObjectAggregator(1 << 16));
        for (Object o; (o = ch.readOutbound()) != null; ) {
            client.writeInbound((ByteBuf) o);
        }
        List<Response> out = new ArrayList<>();
        for (Object o; (o = client.readInbound()) != null; ) {
            FullHttpResponse r = (FullHttpResponse) o;
            try {
                out.add(new Response(r.status().code(), r.content().toString(StandardCharsets.UTF_8).strip(),
                        r.headers().get("connection"), r.headers().get("allow"),
                        r.headers().getInt("content-length", -1)));
                assertEquals(r.content().readableBytes(), r.headers().getInt("content-length", -1),
                        "Content-Length matches the body");
            } finally {
                r.release();
            }
        }
        client.finishAndReleaseAll();
        return out;
    }

    private long answered() {
        return stats.snapshot().values().stream().mapToLong(Long::longValue).sum();
    }

    @Test
    void malformedRequestAnswers400AndClosesTheConnection() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /echo?key=1 HTTX/1.1\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(1, r.size());
        assertEquals(400, r.get(0).status());
        assertTrue(r.get(0).body().startsWith("malformed request"), r.get(0).body());
        assertEquals("close", r.get(0).connection());
        assertFalse(ch.isOpen());
        assertEquals(1, stats.count(Outcome.BAD_REQUEST));
        assertEquals(1, answered(), "one request, one outcome: " + stats.snapshot());
    }

    @Test
    void longRequestLineAnswers414AndCloses() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /echo?key=1&pad=" + "x".repeat(100) + " HTTP/1.1\r\nHost: t\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(1, r.size());
        assertEquals(414, r.get(0).status());
        assertTrue(r.get(0).body().contains("longer than 64 bytes"), r.get(0).body());
        assertFalse(ch.isOpen());
        assertEquals(1, stats.count(Outcome.URI_TOO_LONG));
        assertEquals(1, answered(), "one request, one outcome: " + stats.snapshot());
    }

    @Test
    void bigHeadersAnswer431AndClose() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /echo?key=1 HTTP/1.1\r\nHost: t\r\nX-Big: " + "y".repeat(200) + "\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(1, r.size());
        assertEquals(431, r.get(0).status());
        assertTrue(r.get(0).body().contains("larger than 128 bytes"), r.get(0).body());
        assertFalse(ch.isOpen());
        assertEquals(1, stats.count(Outcome.HEADERS_TOO_LARGE));
        assertEquals(1, answered(), "one request, one outcome: " + stats.snapshot());
    }

    @Test
    void declaredBodyOverTheLimitAnswers413AndCloses() {
        EmbeddedChannel ch = channel();
        send(ch, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n" + "z".repeat(100));
        List<Response> r = responses(ch);
        assertEquals(1, r.size());
        assertEquals(413, r.get(0).status());
        assertTrue(r.get(0).body().contains("100 bytes exceeds 16"), r.get(0).body());
        assertFalse(ch.isOpen());
        assertEquals(1, answered());
    }

    @Test
    void chunkedBodyOverTheLimitAnswers413AndCloses() {
        EmbeddedChannel ch = channel();
        send(ch, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "a\r\n0123456789\r\n" + "a\r\n0123456789\r\n" + "0\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(1, r.size());
        assertEquals(413, r.get(0).status());
        assertTrue(r.get(0).body().contains("exceeds 16 bytes"), r.get(0).body());
        assertFalse(ch.isOpen());
        assertEquals(1, stats.count(Outcome.BODY_TOO_LARGE));
        assertEquals(1, answered());
    }

    @Test
    void bodyWithinTheLimitIsReadThenTheMethodIsRefused() {
        EmbeddedChannel ch = channel();
        send(ch, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(1, r.size());
        assertEquals(405, r.get(0).status());
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void unknownPathAnswers404AndKeepsTheConnection() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /nope?key=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        List<Response> first = responses(ch);
        assertEquals(1, first.size());
        assertEquals(404, first.get(0).status());
        assertEquals("no such path: /nope", first.get(0).body());
        assertTrue(ch.isOpen());

        send(ch, "GET /other HTTP/1.1\r\nHost: t\r\n\r\n");
        List<Response> second = responses(ch);
        assertEquals(404, second.get(0).status());
        assertTrue(ch.isOpen());
        assertEquals(2, stats.count(Outcome.NOT_FOUND));
        ch.finishAndReleaseAll();
    }

    @Test
    void wrongMethodAnswers405WithAllow() {
        EmbeddedChannel ch = channel();
        send(ch, "POST /echo?key=1 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
        send(ch, "DELETE /echo?key=1 HTTP/1.1\r\nHost: t\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(2, r.size());
        for (Response each : r) {
            assertEquals(405, each.status());
            assertEquals("GET", each.allow());
        }
        assertTrue(r.get(0).body().contains("POST") && r.get(1).body().contains("DELETE"));
        assertTrue(ch.isOpen());
        assertEquals(2, stats.count(Outcome.METHOD_NOT_ALLOWED));
        ch.finishAndReleaseAll();
    }

    @Test
    void undecodableQueryAnswers400AndKeepsTheConnection() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /echo?key=abc HTTP/1.1\r\nHost: t\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(400, r.get(0).status());
        assertEquals("key: not a number", r.get(0).body());
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /a HTTP/1.1\r\nHost: t\r\n\r\n"
                + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"
                + "GET /echo?key=x HTTP/1.1\r\nHost: t\r\n\r\n"
                + "GET /b HTTP/1.1\r\nHost: t\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(List.of(404, 405, 400, 404), r.stream().map(Response::status).toList());
        assertEquals("no such path: /a", r.get(0).body());
        assertEquals("no such path: /b", r.get(3).body());
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void inputAfterABrokenRequestIsDiscarded() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /a HTTP/1.1\r\nHost: t\r\n\r\n"
                + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 999\r\n\r\n"
                + "GET /b HTTP/1.1\r\nHost: t\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(List.of(404, 413), r.stream().map(Response::status).toList());
        assertEquals("close", r.get(1).connection());
        assertFalse(ch.isOpen());
        assertEquals(2, answered());
    }

    @Test
    void connectionCloseIsHonoured() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /nope HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(404, r.get(0).status());
        assertEquals("close", r.get(0).connection());
        assertFalse(ch.isOpen());
    }

    @Test
    void http10WithoutKeepAliveIsClosedAfterTheResponse() {
        EmbeddedChannel ch = channel();
        send(ch, "GET /nope HTTP/1.0\r\n\r\n");
        List<Response> r = responses(ch);
        assertEquals(404, r.get(0).status());
        assertFalse(ch.isOpen());
    }
}
