package io.doubleface.server.internal;

import io.doubleface.driver.Transport;
import io.doubleface.api.Backend;
import io.doubleface.api.ErrorEncoder;
import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.internal.engine.ModelContext;
import io.doubleface.internal.engine.RequestStats;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.model.Configuration;
import io.doubleface.testing.TestRead;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An engine, a router ({@code GET /echo}, {@link EchoService}) and small limits for the tests of the
 * HTTP front end (its stages, and the whole of it) on {@link EmbeddedChannel}s. Only requests the
 * front end answers itself are sent: an admitted request completes on another thread (see
 * {@code HttpFanoutHandlerTest}).
 */
public final class FrontEndFixture implements AutoCloseable {

    /** Request line 64, headers 128, body 16 bytes; 4 pipelined; 1 KiB unread; 1 s slow reader; 1 s read timeout. */
    static final ConnectionLimits LIMITS = new ConnectionLimits(64, 128, 16, 4, 1024, Duration.ofSeconds(1),
            Duration.ofSeconds(1));

    private final LoopGroup io;
    /** The engine: {@code thread-2}, one backend of two generated shards. */
    public final FanoutEngine engine;
    /** {@code GET /echo}: {@link EchoService}. */
    public final HttpRouter router;
    final RequestStats stats = new RequestStats();

    public FrontEndFixture() {
        io = new LoopGroup("fe", 1, Transport.AUTO);
        Object owner = new Object();
        Backend<TestRead> backend = new Backend<>("echo", 0, new GeneratedShards(2), owner);
        ModelContext ctx = new ModelContext(io, List.of(backend), "completion-first", 100);
        engine = new FanoutEngine(ctx, Configuration.parse("thread-2"), TimeUnit.SECONDS.toNanos(5));
        router = new HttpRouter.Builder().add(HttpMethod.GET, "/echo", new EchoService(backend), new EchoService.Binding())
                .build();
    }

    /** Closes the engine and its loop. */
    @Override
    public void close() {
        engine.close();
        io.close();
    }

    /** The stages of one connection, wired as {@link HttpFanoutHandler} wires them. */
    final class Stages {
        final PipelinedResponseWriter writer;
        final RequestAggregator requests;
        final RequestReadTimeout readTimeout;
        final RouteDispatcher dispatcher;

        Stages(long maxBehindBytesTotal) {
            writer = new PipelinedResponseWriter(engine, LIMITS, stats, 0, maxBehindBytesTotal, 2);
            requests = new RequestAggregator(writer, LIMITS, stats, ErrorEncoder.plainText(), engine);
            writer.readsFrom(requests);
            readTimeout = new RequestReadTimeout(requests, writer, LIMITS.requestReadTimeout());
            dispatcher = new RouteDispatcher(engine, router, stats, ErrorEncoder.plainText(), writer);
        }

        Stages() {
            this(Long.MAX_VALUE);
        }

        /** A channel of these stages (and {@code more} after them), no codec: answers are read as messages. */
        EmbeddedChannel channel(ChannelHandler... more) {
            EmbeddedChannel ch = new EmbeddedChannel(writer, readTimeout, requests, dispatcher);
            ch.pipeline().addLast(more);
            return ch;
        }
    }

    /** An answer with {@code body} as its text. */
    static FullHttpResponse answer(String body) {
        return new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
    }

    /** An answer as the tests read it. */
    record Answer(int status, String body, String connection, String allow) {}

    /** Takes (and releases) every answer written on {@code ch}. */
    static List<Answer> answers(EmbeddedChannel ch) {
        List<Answer> out = new ArrayList<>();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            FullHttpResponse r = (FullHttpResponse) o;
            try {
                ByteBuf b = r.content();
                out.add(new Answer(r.status().code(), b.toString(StandardCharsets.UTF_8).strip(),
                        r.headers().get("connection"), r.headers().get("allow")));
            } finally {
                r.release();
            }
        }
        return out;
    }
}
