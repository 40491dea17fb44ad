package io.doubleface.server.internal;

import static io.doubleface.server.internal.FrontEndFixture.answer;
import static io.doubleface.server.internal.FrontEndFixture.answers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.timeout.IdleStateEvent;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link PipelinedResponseWriter} on an {@link EmbeddedChannel}: order, closing, back-pressure, slow readers. */
@Timeout(30)
class PipelinedResponseWriterTest {

    private final FrontEndFixture f = new FrontEndFixture();

    @AfterEach
    void stop() {
        f.close();
    }

    private static List<String> bodies(EmbeddedChannel ch) {
        return answers(ch).stream().map(FrontEndFixture.Answer::body).toList();
    }

    /** The client stops or starts reading: the outbound buffer's writability flips (told on the loop, a task). */
    private static void clientReads(EmbeddedChannel ch, boolean reads) {
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, reads);
        ch.runPendingTasks();
    }

    @Test
    void answersCompletedOutOfOrderAreWrittenInRequestOrder() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        long a = s.writer.nextSeq();
        long b = s.writer.nextSeq();
        long c = s.writer.nextSeq(); // more than the ring's first size (2): it grows
        s.writer.park(c, answer("c"), false);
        s.writer.park(b, answer("b"), false);
        assertNull(ch.readOutbound(), "nothing before the first answer");
        s.writer.park(a, answer("a"), false);
        assertEquals(List.of("a", "b", "c"), bodies(ch));
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void anAnswerThatEndsTheConnectionClosesItAndDropsTheLaterOnes() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        long a = s.writer.nextSeq();
        long b = s.writer.nextSeq();
        FullHttpResponse later = answer("b");
        s.writer.park(a, answer("a"), true);
        s.writer.park(b, later, false);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals(1, r.size());
        assertEquals("close", r.get(0).connection());
        assertEquals(0, later.refCnt(), "a later answer is released");
        assertFalse(ch.isOpen());
        assertTrue(s.writer.closed());
    }

    @Test
    void readingPausesWhileMaxPipelinedAdmittedRequestsAreUnanswered() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        long[] seq = new long[FrontEndFixture.LIMITS.maxPipelined()];
        for (int i = 0; i < seq.length; i++) {
            seq[i] = s.writer.nextSeq();
            s.writer.pauseIfFull();
            assertEquals(i < seq.length - 1, ch.config().isAutoRead(), "after " + (i + 1));
        }
        s.writer.park(seq[0], answer("0"), false);
        assertTrue(ch.config().isAutoRead(), "one answered: reading again");
        for (int i = 1; i < seq.length; i++) {
            s.writer.park(seq[i], answer(String.valueOf(i)), false);
        }
        assertEquals(seq.length, answers(ch).size());
        ch.finishAndReleaseAll();
    }

    @Test
    void aClientThatReadsNothingWhileAnswersWaitIsClosedAfterTheSlowReaderTimeout() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        clientReads(ch, false);
        assertFalse(ch.config().isAutoRead(), "reading pauses while the outbound buffer is full");
        ch.advanceTimeBy(FrontEndFixture.LIMITS.slowReaderTimeout().toMillis() - 1, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertTrue(ch.isOpen());
        ch.advanceTimeBy(2, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertFalse(ch.isOpen());
        assertEquals(1, f.stats.slowReadersClosed());
        ch.finishAndReleaseAll();
    }

    @Test
    void aClientThatCatchesUpIsReadAgainAndNotClosed() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        clientReads(ch, false);
        assertFalse(ch.config().isAutoRead());
        clientReads(ch, true);
        assertTrue(ch.config().isAutoRead());
        ch.advanceTimeBy(FrontEndFixture.LIMITS.slowReaderTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertTrue(ch.isOpen());
        assertEquals(0, f.stats.slowReadersClosed());
        ch.finishAndReleaseAll();
    }

    @Test
    void theConnectionThatTakesTheServerOverItsBoundForClientsBehindIsClosed() {
        FrontEndFixture.Stages s = f.new Stages(100);
        f.stats.addBehindBytes(101); // other connections' clients hold that much already
        EmbeddedChannel ch = s.channel();
        clientReads(ch, false);
        FullHttpResponse second = answer("b");
        long a = s.writer.nextSeq();
        long b = s.writer.nextSeq();
        s.writer.park(a, answer("a"), false);
        assertFalse(ch.isOpen());
        assertEquals(1, f.stats.serverQueueFullCount());
        assertEquals(1, f.stats.slowReadersClosed());
        s.writer.park(b, second, false);
        assertEquals(0, second.refCnt(), "an answer for a closed connection is released");
        ch.finishAndReleaseAll();
    }

    @Test
    void idleOrDrainedWithNothingUnderWayTheConnectionCloses() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel idle = s.channel();
        idle.pipeline().fireUserEventTriggered(IdleStateEvent.ALL_IDLE_STATE_EVENT);
        assertFalse(idle.isOpen());

        FrontEndFixture.Stages t = f.new Stages();
        EmbeddedChannel drained = t.channel();
        drained.pipeline().fireUserEventTriggered(HttpFanoutHandler.DRAIN);
        assertFalse(drained.isOpen());
    }

    @Test
    void withAnAnswerInFlightIdleAndDrainWaitAndTheLastAnswerClosesWhenDraining() {
        FrontEndFixture.Stages s = f.new Stages();
        EmbeddedChannel ch = s.channel();
        long a = s.writer.nextSeq();
        ch.pipeline().fireUserEventTriggered(IdleStateEvent.ALL_IDLE_STATE_EVENT);
        ch.pipeline().fireUserEventTriggered(HttpFanoutHandler.DRAIN);
        assertTrue(ch.isOpen(), "an answer is in flight");
        f.engine.startDrain();
        s.writer.park(a, answer("a"), false);
        List<FrontEndFixture.Answer> r = answers(ch);
        assertEquals("close", r.get(0).connection(), "draining: the last answer in flight ends the connection");
        assertFalse(ch.isOpen());
    }

    @Test
    void theHeadOfASuccessfulAnswerIsReusedForTheSameStatusAndContentType() {
        FrontEndFixture.Stages s = f.new Stages();
        EncodedResponse.Prefix p = s.writer.prefix(HttpResponseStatus.OK, "text/plain");
        assertTrue(p == s.writer.prefix(HttpResponseStatus.OK, "text/plain"));
        assertFalse(p == s.writer.prefix(HttpResponseStatus.OK, "application/json"));
    }
}
