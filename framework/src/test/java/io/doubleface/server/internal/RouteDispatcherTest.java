package io.doubleface.server.internal;

import static io.doubleface.server.internal.FrontEndFixture.answers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.Outcome;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RouteDispatcher} on an {@link EmbeddedChannel}, handed whole requests as the aggregator
 * hands them on: the answers it makes itself, in order.
 */
@Timeout(30)
class RouteDispatcherTest {

    private final FrontEndFixture f = new FrontEndFixture();

    @AfterEach
    void stop() {
        f.close();
    }

    /** Hands {@code uri} to the dispatcher as the aggregator would. */
    private static void hand(EmbeddedChannel ch, HttpMethod method, String uri, boolean keepAlive) {
        RequestView v = new RequestView();
        v.request(new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, uri), null, keepAlive);
        ch.pipeline().context(RequestAggregator.class).fireChannelRead(v);
    }

    @Test
    void anUnknownPathGets404AndAWrongMethod405WithAllow() {
        EmbeddedChannel ch = f.new Stages().channel();
        hand(ch, HttpMethod.GET, "/nope?key=1", true);
        hand(ch, HttpMethod.POST, "/echo?key=1", true);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals(List.of(404, 405), r.stream().map(FrontEndFixture.Answer::status).toList());
        assertEquals("no such path: /nope", r.get(0).body());
        assertEquals("method POST not allowed on /echo (use GET)", r.get(1).body());
        assertEquals("GET", r.get(1).allow());
        assertTrue(ch.isOpen());
        assertEquals(1, f.stats.count(Outcome.NOT_FOUND));
        assertEquals(1, f.stats.count(Outcome.METHOD_NOT_ALLOWED));
        ch.finishAndReleaseAll();
    }

    @Test
    void aBadEscapeInThePathOrTheBindingsRefusalGets400() {
        EmbeddedChannel ch = f.new Stages().channel();
        hand(ch, HttpMethod.GET, "/ec%zzho", true);
        hand(ch, HttpMethod.GET, "/echo?key=abc", true);
        hand(ch, HttpMethod.GET, "/echo?key=%zz", true);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals(List.of(400, 400, 400), r.stream().map(FrontEndFixture.Answer::status).toList());
        assertTrue(r.get(0).body().startsWith("malformed request target: "), r.get(0).body());
        assertEquals("key: not a number", r.get(1).body());
        assertTrue(r.get(2).body().startsWith("bad request: malformed query string: "), r.get(2).body());
        assertEquals(3, f.stats.count(Outcome.BAD_REQUEST));
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void withoutKeepAliveTheAnswerClosesTheConnection() {
        EmbeddedChannel ch = f.new Stages().channel();
        hand(ch, HttpMethod.GET, "/nope", false);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals("close", r.get(0).connection());
        assertFalse(ch.isOpen());
    }

    @Test
    void anExceptionNoStageHandledClosesTheConnection() {
        EmbeddedChannel ch = f.new Stages().channel();
        ch.pipeline().fireExceptionCaught(new IllegalStateException("test"));
        assertFalse(ch.isOpen());
    }
}
