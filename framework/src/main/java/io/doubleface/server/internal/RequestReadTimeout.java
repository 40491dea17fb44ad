package io.doubleface.server.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The request read timeout of the HTTP front end: once per {@link ConnectionLimits#requestReadTimeout()}
 * it looks at the request under way ({@link RequestAggregator}); one whose head or body was under
 * way at the last check and has made no progress since gets {@code 408} and the connection closes.
 * So a request is cut one to two periods after it stalled, at the cost of one timer per period per
 * connection, not one per read.
 *
 * <p>It handles no message: it is in the pipeline for the connection's life (active, inactive,
 * removed), so reads pass it by.
 *
 * <p>Threading: confined to the channel's event loop.
 */
final class RequestReadTimeout extends ChannelInboundHandlerAdapter {

    private final RequestAggregator requests;
    private final PipelinedResponseWriter writer;
    private final long periodNanos;
    private final long periodMillis;

    private ChannelHandlerContext ctx;
    private ScheduledFuture<?> check;
    private boolean started;
    private boolean stopped;
    private long progressAtCheck = -1;

    /**
     * @param requests the stage whose request under way is timed
     * @param writer says whether the connection is closing (no more checks then)
     * @param period {@link ConnectionLimits#requestReadTimeout()}
     */
    RequestReadTimeout(RequestAggregator requests, PipelinedResponseWriter writer, Duration period) {
        this.requests = requests;
        this.writer = writer;
        this.periodNanos = period.toNanos();
        this.periodMillis = period.toMillis();
    }

    /**
     * On an HTTP/2 stream: the checks start only once the stream's codec says a body follows its
     * head ({@link #awaitBody}); a head arrives whole, in one {@code HEADERS} frame.
     */
    void startOnBody() {
        started = true; // not at add or activation
    }

    /** On an HTTP/2 stream: the request's body is still to come, so the request read timeout applies. */
    void awaitBody() {
        started = false;
        start();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) { // added after the channel became active (after ALPN, on a stream)
            start();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        start();
        ctx.fireChannelActive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stop();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        stop();
        ctx.fireChannelInactive();
    }

    private void start() {
        if (started) {
            return;
        }
        started = true;
        // The first check at a random point of the first period: connections opened together (a
        // client's pool, a burst after a pause) then do not all check in the same loop iteration
        // forever after. A request is still cut one to two periods after it stalled.
        schedule(periodNanos / 2 + ThreadLocalRandom.current().nextLong(periodNanos / 2 + 1));
    }

    private void stop() {
        stopped = true;
        if (check != null) {
            check.cancel(false);
            check = null;
        }
    }

    private void schedule(long delayNanos) {
        if (!stopped && !writer.closed()) {
            check = ctx.executor().schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
        }
    }

    private void check() {
        check = null;
        if (stopped || writer.closed() || requests.closing()) {
            return;
        }
        boolean underWay = requests.underWay();
        if (underWay && requests.progress() == progressAtCheck) {
            requests.timedOut(periodMillis);
            return;
        }
        progressAtCheck = underWay ? requests.progress() : -1;
        schedule(periodNanos);
    }
}
