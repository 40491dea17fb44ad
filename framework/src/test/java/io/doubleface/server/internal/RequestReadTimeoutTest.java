package io.doubleface.server.internal;

import static io.doubleface.server.internal.FrontEndFixture.answers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RequestReadTimeout} on an {@link EmbeddedChannel} with the time advanced by hand: a stalled
 * request is cut within two periods, an idle connection never.
 */
@Timeout(30)
class RequestReadTimeoutTest {

    private static final long PERIOD_MS = FrontEndFixture.LIMITS.requestReadTimeout().toMillis();

    private final FrontEndFixture f = new FrontEndFixture();

    @AfterEach
    void stop() {
        f.close();
    }

    /** Lets {@code n} periods pass, in steps of a tenth (a check schedules the next from when it runs). */
    private static void periods(EmbeddedChannel ch, double n) {
        for (long t = 0, end = (long) (PERIOD_MS * n); t < end; t += PERIOD_MS / 10) {
            ch.advanceTimeBy(Math.min(PERIOD_MS / 10, end - t), TimeUnit.MILLISECONDS);
            ch.runScheduledPendingTasks();
        }
    }

    private static HttpRequest post() {
        HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/echo");
        r.headers().add("Host", "t").add("Content-Length", "10");
        return r;
    }

    @Test
    void anIdleConnectionIsNeverCut() {
        EmbeddedChannel ch = f.new Stages().channel();
        for (int i = 0; i < 5; i++) {
            periods(ch, 1);
        }
        assertTrue(ch.isOpen());
        assertTrue(answers(ch).isEmpty());
        ch.finishAndReleaseAll();
    }

    @Test
    void aHeadBegunAndStalledGets408WithinTwoPeriods() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        s.requests.bytesSeen(); // what the idle handler before the codec reports
        periods(ch, 2.01);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals(1, r.size());
        assertEquals(408, r.get(0).status());
        assertEquals("request head not received within " + PERIOD_MS + " ms", r.get(0).body());
        assertFalse(ch.isOpen());
    }

    @Test
    void aBodyThatStallsGets408AndOneThatCompletesDoesNot() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        ch.writeInbound(post(), new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[3])));
        periods(ch, 2.01);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals("request body not received within " + PERIOD_MS + " ms", r.get(0).body());
        assertFalse(ch.isOpen());
    }

    @Test
    void onAnHttp2StreamTheChecksStartOnlyWhenABodyFollows() {
        FrontEndFixture.Stages s = f.new Stages();
        s.readTimeout.startOnBody();
        s.requests.hostOptional();
        EmbeddedChannel ch = s.channel();
        s.requests.bytesSeen();
        periods(ch, 3);
        assertTrue(ch.isOpen(), "no checks before the stream's codec asks for them");
        ch.writeInbound(post());
        s.readTimeout.awaitBody();
        periods(ch, 2.01);
        assertEquals(408, answers(ch).get(0).status());
        assertFalse(ch.isOpen());
    }

    @Test
    void aClosedConnectionHasNoTimerLeft() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        ch.close();
        s.requests.bytesSeen();
        periods(ch, 3);
        assertTrue(answers(ch).isEmpty());
        assertEquals(0, f.stats.count(io.doubleface.internal.engine.Outcome.REQUEST_TIMEOUT));
    }
}
