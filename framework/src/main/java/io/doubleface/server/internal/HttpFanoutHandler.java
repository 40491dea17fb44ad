package io.doubleface.server.internal;

import io.doubleface.api.ErrorEncoder;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.RequestStats;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP/1.1 upstream of one connection, as the one handler to put after the HTTP codec: when
 * added, it puts in its place the front end's stages, each a handler with one job, and leaves the
 * pipeline:
 *
 * <ol>
 *   <li>{@link PipelinedResponseWriter}: writes the answers in request order (pipelining), with the
 *       back-pressure (reading pauses while {@link ConnectionLimits#maxPipelined()} requests are
 *       unanswered, or while the client reads slower than it asks), the slow-reader limits and the
 *       server-wide count of bytes held for clients that are behind; closes the connection on an
 *       answer that ends it, when idle and on {@link #DRAIN};
 *   <li>{@link RequestReadTimeout}: {@code 408} for a request head or body that stalls;
 *   <li>{@link RequestAggregator}: validates each request ({@code 400}, {@code 413}, {@code 414},
 *       {@code 431}, {@code 505}) and collects its body;
 *   <li>{@link RouteDispatcher}: routes the whole request ({@code 404}, {@code 405}), decodes it with
 *       the route's binding through the {@link RequestView} and submits it to the
 *       {@link FanoutEngine}; a {@link RouteSink} answers it.
 * </ol>
 *
 * A request costs one pipeline hop more than a single handler would (the aggregator hands the
 * reused {@link RequestView} on); the writer and the read timeout handle no message, so reads pass
 * them by. The stages call each other directly where one needs another's state (the answer order,
 * whether a request is under way).
 *
 * <p>Threading: the stages are confined to the channel's event loop.
 */
public final class HttpFanoutHandler extends ChannelHandlerAdapter {

    /** User event: the server is draining; a connection with nothing under way closes now. */
    public static final Object DRAIN = new Object() {
        @Override
        public String toString() {
            return "DRAIN";
        }
    };

    private final PipelinedResponseWriter writer;
    private final RequestReadTimeout readTimeout;
    private final RequestAggregator requests;
    private final RouteDispatcher dispatcher;

    public HttpFanoutHandler(FanoutEngine engine, HttpRouter router, ConnectionLimits limits, RequestStats stats) {
        this(engine, router, limits, stats, 0, Long.MAX_VALUE, ErrorEncoder.plainText());
    }

    /**
     * @param maxAgeNanos after this long the connection's next answer that leaves nothing in flight
     *     carries {@code Connection: close} and the connection closes (0 = no age limit)
     * @param maxBehindBytesTotal most response bytes the whole server holds for clients that are
     *     behind (connections above the high water mark); the connection that would go over is
     *     closed as a slow reader
     * @param errors the bodies of the answers the front end makes itself
     */
    public HttpFanoutHandler(FanoutEngine engine, HttpRouter router, ConnectionLimits limits, RequestStats stats,
            long maxAgeNanos, long maxBehindBytesTotal, ErrorEncoder errors) {
        Objects.requireNonNull(errors, "errors");
        this.writer = new PipelinedResponseWriter(engine, limits, stats, maxAgeNanos, maxBehindBytesTotal, 16);
        this.requests = new RequestAggregator(writer, limits, stats, errors, engine);
        writer.readsFrom(requests);
        this.readTimeout = new RequestReadTimeout(requests, writer, limits.requestReadTimeout());
        this.dispatcher = new RouteDispatcher(engine, router, stats, errors, writer);
    }

    /**
     * Lets the connection's first request upgrade it to HTTP/2 ({@code Upgrade: h2c}, see
     * {@link Http2Upstream#upgrade}). Call before the connection is registered.
     *
     * @param upstream the server's HTTP/2 upstream
     * @return this handler
     */
    public HttpFanoutHandler h2cUpgrade(Http2Upstream upstream) {
        requests.h2cUpgrade(upstream);
        return this;
    }

    /**
     * Makes these the stages of one HTTP/2 stream: a request without {@code Host} is accepted, and
     * the request read timeout runs only once the stream's codec says a body follows its head
     * ({@link RequestReadTimeout#awaitBody}); a head arrives whole, in one {@code HEADERS} frame.
     */
    HttpFanoutHandler http2Stream() {
        requests.hostOptional();
        readTimeout.startOnBody();
        return this;
    }

    /** {@return the read timeout stage} (an HTTP/2 stream's codec tells it when a body follows) */
    RequestReadTimeout readTimeout() {
        return readTimeout;
    }

    /** Adds the stages at the end of {@code p}, without this handler (an HTTP/2 stream's pipeline). */
    void addTo(ChannelPipeline p) {
        p.addLast(writer, readTimeout, requests, dispatcher);
    }

    /** Puts the stages in this handler's place. */
    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        ChannelPipeline p = ctx.pipeline();
        String name = ctx.name();
        // each right after this handler, so the last added comes first
        p.addAfter(name, null, dispatcher);
        p.addAfter(name, null, requests);
        p.addAfter(name, null, readTimeout);
        p.addAfter(name, null, writer);
        p.remove(this);
    }

    /**
     * Removes the stages from a pipeline (the connection turns to HTTP/2); first of the HTTP/1.1
     * handlers, since the codec hands the bytes it still holds to what follows it.
     */
    static void removeStages(ChannelPipeline p) {
        p.remove(RouteDispatcher.class);
        p.remove(RequestAggregator.class);
        p.remove(RequestReadTimeout.class);
        p.remove(PipelinedResponseWriter.class);
    }

    /**
     * The idle timeout of the connection, and the raw-bytes side of the request read timeout: sits
     * before the HTTP codec and tells the front end that bytes of a request arrived. One handler for
     * both, so no extra pipeline hop per read.
     */
    public static final class IdleAndBytesSeen extends IdleStateHandler {
        private final RequestAggregator requests;

        /**
         * @param idleMillis the idle timeout; this connection's is up to a tenth longer, at random
         *     (see {@link #spread})
         */
        public IdleAndBytesSeen(HttpFanoutHandler handler, long idleMillis) {
            super(0, 0, spread(idleMillis), TimeUnit.MILLISECONDS);
            this.requests = handler.requests;
        }

        /**
         * {@code idleMillis} plus up to a tenth of it, at random. Connections that went idle
         * together (a client's pool after a burst) would otherwise all close in one loop iteration,
         * and a few hundred closes there delay every request that iteration serves
         * (docs/benchmarks.md, "Fanout 1: the idle close"); spread over the tenth they cost nothing
         * visible.
         */
        static long spread(long idleMillis) {
            return idleMillis + ThreadLocalRandom.current().nextLong(idleMillis / 10 + 1);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            requests.bytesSeen();
            super.channelRead(ctx, msg);
        }
    }
}
