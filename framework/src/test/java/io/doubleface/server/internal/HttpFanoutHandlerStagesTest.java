package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link HttpFanoutHandler} puts the front end's stages in its place, in order, and they come out again. */
@Timeout(30)
class HttpFanoutHandlerStagesTest {

    private final FrontEndFixture f = new FrontEndFixture();

    @AfterEach
    void stop() {
        f.close();
    }

    private static List<Class<?>> handlers(EmbeddedChannel ch) {
        List<Class<?>> out = new ArrayList<>();
        for (Map.Entry<String, ChannelHandler> e : ch.pipeline()) {
            out.add(e.getValue().getClass());
        }
        return out;
    }

    @Test
    void addedAfterTheCodecItLeavesItsStagesInItsPlace() {
        HttpFanoutHandler handler = new HttpFanoutHandler(f.engine, f.router, FrontEndFixture.LIMITS, f.stats);
        EmbeddedChannel ch = new EmbeddedChannel(StrictRequestDecoder.codec(new HttpDecoderConfig()), handler);
        List<Class<?>> h = handlers(ch);
        assertEquals(List.of(PipelinedResponseWriter.class, RequestReadTimeout.class, RequestAggregator.class,
                RouteDispatcher.class), h.subList(1, h.size()));
        assertNull(ch.pipeline().get(HttpFanoutHandler.class));

        HttpFanoutHandler.removeStages(ch.pipeline());
        assertEquals(1, handlers(ch).size(), "only the codec is left");
        ch.finishAndReleaseAll();
    }

    @Test
    void onAStreamTheStagesAreAddedDirectly() {
        HttpFanoutHandler handler = new HttpFanoutHandler(f.engine, f.router, FrontEndFixture.LIMITS, f.stats)
                .http2Stream();
        EmbeddedChannel ch = new EmbeddedChannel();
        handler.addTo(ch.pipeline());
        assertEquals(List.of(PipelinedResponseWriter.class, RequestReadTimeout.class, RequestAggregator.class,
                RouteDispatcher.class), handlers(ch));
        ch.finishAndReleaseAll();
    }
}
