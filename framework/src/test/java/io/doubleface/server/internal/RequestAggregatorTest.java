package io.doubleface.server.internal;

import static io.doubleface.server.internal.FrontEndFixture.answers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.Outcome;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RequestAggregator} on an {@link EmbeddedChannel}, fed decoded messages as the codec hands
 * them on: whole requests handed on, and the {@code 4xx} of each kind of bad input. The dispatcher
 * is replaced by a handler that records what it is handed.
 */
@Timeout(30)
class RequestAggregatorTest {

    private final FrontEndFixture f = new FrontEndFixture();

    @AfterEach
    void stop() {
        f.close();
    }

    /** What the next stage was handed: target, body, keep-alive. */
    private record Handed(String uri, String body, boolean keepAlive) {}

    private final List<Handed> handed = new ArrayList<>();

    private EmbeddedChannel channel(FrontEndFixture.Stages s) {
        EmbeddedChannel ch = new EmbeddedChannel(s.writer, s.requests, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                RequestView v = (RequestView) msg; // valid only now: read it here
                handed.add(new Handed(v.head().uri(), v.body().toString(StandardCharsets.UTF_8), v.keepAlive()));
            }
        });
        return ch;
    }

    private static HttpRequest head(HttpMethod method, String uri, String... headers) {
        HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, uri);
        for (int i = 0; i < headers.length; i += 2) {
            r.headers().add(headers[i], headers[i + 1]);
        }
        return r;
    }

    private static ByteBuf bytes(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    @Test
    void aBodyInPartsIsHandedOnWholeWithItsHead() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = channel(s);
        ch.writeInbound(head(HttpMethod.POST, "/echo", "Host", "t", "Transfer-Encoding", "chunked"));
        assertTrue(s.requests.bodyUnderWay());
        assertEquals(1, s.requests.progress());
        ch.writeInbound(new DefaultHttpContent(bytes("hello ")));
        ch.writeInbound(new DefaultLastHttpContent(bytes("world")));
        assertEquals(List.of(new Handed("/echo", "hello world", true)), handed);
        assertTrue(s.requests.idle());
        assertEquals(2, s.requests.progress());
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void aRequestWithoutKeepAliveIsTheConnectionsLastAndLaterInputIsDiscarded() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = channel(s);
        ch.writeInbound(head(HttpMethod.GET, "/a", "Host", "t", "Connection", "close"), LastHttpContent.EMPTY_LAST_CONTENT);
        ch.writeInbound(head(HttpMethod.GET, "/b", "Host", "t"), LastHttpContent.EMPTY_LAST_CONTENT);
        assertEquals(List.of(new Handed("/a", "", false)), handed);
        assertTrue(s.requests.closing());
        ch.finishAndReleaseAll();
    }

    /** Sends {@code msgs} and returns the one answer, which must close the connection. */
    private FrontEndFixture.Answer refused(Object... msgs) {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = channel(s);
        ch.writeInbound(msgs);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals(1, r.size(), r.toString());
        assertEquals("close", r.get(0).connection());
        assertFalse(ch.isOpen());
        assertTrue(handed.isEmpty(), "nothing handed on");
        return r.get(0);
    }

    private static HttpRequest failed(Throwable cause) {
        HttpRequest r = head(HttpMethod.GET, "/echo", "Host", "t");
        r.setDecoderResult(DecoderResult.failure(cause));
        return r;
    }

    @Test
    void theDecodersVerdictsBecome414431And400() {
        FrontEndFixture.Answer a = refused(failed(new TooLongHttpLineException("x")));
        assertEquals(414, a.status());
        assertEquals("request line longer than 64 bytes", a.body());
        a = refused(failed(new TooLongHttpHeaderException("x")));
        assertEquals(431, a.status());
        assertEquals("request headers larger than 128 bytes", a.body());
        a = refused(failed(new IllegalArgumentException("bad thing")));
        assertEquals(400, a.status());
        assertEquals("malformed request: bad thing", a.body());
        assertEquals(1, f.stats.count(Outcome.URI_TOO_LONG));
        assertEquals(1, f.stats.count(Outcome.HEADERS_TOO_LARGE));
        assertEquals(1, f.stats.count(Outcome.BAD_REQUEST));
    }

    @Test
    void anotherVersionGets505() {
        HttpRequest r = new DefaultHttpRequest(HttpVersion.valueOf("HTTP/2.0"), HttpMethod.GET, "/echo");
        r.headers().add("Host", "t");
        FrontEndFixture.Answer a = refused(r);
        assertEquals(505, a.status());
        assertTrue(a.body().startsWith("HTTP version HTTP/2.0 not supported"), a.body());
    }

    @Test
    void hostMissingInHttp11OrGivenTwiceGets400() {
        assertEquals("malformed request: missing Host header (required in HTTP/1.1)",
                refused(head(HttpMethod.GET, "/echo")).body());
        assertEquals("malformed request: Host header given 2 times (expected: once)",
                refused(head(HttpMethod.GET, "/echo", "Host", "a", "Host", "b")).body());
    }

    @Test
    void http10NeedsNoHost() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = channel(s);
        ch.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_0, HttpMethod.GET, "/echo"),
                LastHttpContent.EMPTY_LAST_CONTENT);
        assertEquals(List.of(new Handed("/echo", "", false)), handed);
        ch.finishAndReleaseAll();
    }

    @Test
    void aBodyOverTheLimitGets413DeclaredOrCounted() {
        FrontEndFixture.Answer a = refused(head(HttpMethod.POST, "/echo", "Host", "t", "Content-Length", "17"));
        assertEquals(413, a.status());
        assertEquals("request body of 17 bytes exceeds 16", a.body());
        a = refused(head(HttpMethod.POST, "/echo", "Host", "t", "Transfer-Encoding", "chunked"),
                new DefaultHttpContent(bytes("0123456789")), new DefaultHttpContent(bytes("0123456789")),
                LastHttpContent.EMPTY_LAST_CONTENT);
        assertEquals(413, a.status());
        assertEquals("request body exceeds 16 bytes", a.body());
        assertEquals(2, f.stats.count(Outcome.BODY_TOO_LARGE));
    }

    @Test
    void anInvalidContentLengthOrBodyGets400() {
        assertEquals("malformed request: invalid Content-Length",
                refused(head(HttpMethod.POST, "/echo", "Host", "t", "Content-Length", "x")).body());
        LastHttpContent bad = new DefaultLastHttpContent(bytes("x"));
        bad.setDecoderResult(DecoderResult.failure(new IllegalStateException("bad chunk")));
        assertEquals("malformed request body: bad chunk",
                refused(head(HttpMethod.POST, "/echo", "Host", "t", "Transfer-Encoding", "chunked"), bad).body());
    }

    @Test
    void aStalledRequestGets408NamingWhatStalled() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = channel(s);
        s.requests.bytesSeen();
        assertTrue(s.requests.underWay());
        s.requests.timedOut(1000);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals(408, r.get(0).status());
        assertEquals("request head not received within 1000 ms", r.get(0).body());
        assertFalse(ch.isOpen());

        FrontEndFixture.Stages t = f.new Stages();
        EmbeddedChannel body = channel(t);
        body.writeInbound(head(HttpMethod.POST, "/echo", "Host", "t", "Content-Length", "5"),
                new DefaultHttpContent(bytes("he")));
        t.requests.timedOut(1000);
        r = answers(body);
        assertEquals("request body not received within 1000 ms", r.get(0).body());
        assertEquals(2, f.stats.count(Outcome.REQUEST_TIMEOUT));
    }
}
