package io.doubleface.server.internal;

import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.RequestStats;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ReferenceCounted;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The response side of the HTTP front end: writes the answers of one connection <em>in request
 * order</em> (HTTP/1.1 pipelining), with its back-pressure, and closes the connection when it
 * should. Sits right after the codec, so its writes go straight to the encoder; the other stages
 * call it directly ({@link #nextSeq}, {@link #park}, {@link #answer}) and it intercepts no
 * pipeline write.
 *
 * <p>Ordering: each request takes a sequence number when it is read; answers complete in any
 * order (a {@link RouteSink} hops to this channel's loop) and are parked in a ring until all
 * earlier ones are written; the answers that become writable together are written and flushed
 * once.
 *
 * <p>Back-pressure: reading stops while {@link ConnectionLimits#maxPipelined()} admitted requests are
 * unanswered ({@link #pauseIfFull}), and while the outbound buffer is above Netty's high water mark
 * (the client reads slower than it asks). A client that leaves more than
 * {@link ConnectionLimits#maxQueuedBytes()} unread, or reads nothing for
 * {@link ConnectionLimits#slowReaderTimeout()} while answers wait, is disconnected; the bytes held
 * for clients that are behind count towards a server-wide bound ({@link RequestStats#addBehindBytes}),
 * and the connection that would go over it is closed too.
 *
 * <p>Closing: an answer parked with {@code closeAfter} ends the connection once written; so does the
 * last answer in flight while the server drains or past the connection's maximum age (unless a
 * request body is being read). Idle (the idle handler's event) or drained with nothing in flight
 * and no request under way, the connection closes at once.
 *
 * <p>Threading: confined to the channel's event loop.
 */
final class PipelinedResponseWriter extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(PipelinedResponseWriter.class);

    private final FanoutEngine engine;
    private final ConnectionLimits limits;
    private final RequestStats stats;
    private final long maxAgeNanos;
    private final long bornNanos;
    private final long maxBehindBytesTotal;
    /** Whether a request is under way (a body being read holds off closing); set once, at assembly. */
    private RequestAggregator requests;

    private ChannelHandlerContext ctx;
    private Object[] ring;
    private boolean[] ringClose;
    /** The head of the last successful answer ({@link #prefix}). */
    private EncodedResponse.Prefix lastPrefix;
    private long nextSeq;
    private long nextToWrite;
    private boolean closed;

    // back-pressure: reading stops while either holds
    private boolean pausedByPipeline; // maxPipelined requests unanswered
    private boolean pausedByWrites;   // the outbound buffer is above the high water mark
    private ScheduledFuture<?> slowReaderTimer;
    private long behindReported;      // this connection's share of RequestStats.behindBytes

    /**
     * @param maxAgeNanos after this long the connection's next answer that leaves nothing in flight
     *     carries {@code Connection: close} and the connection closes (0 = no age limit)
     * @param maxBehindBytesTotal most response bytes the whole server holds for clients that are behind
     * @param ringSize the ring's first size (it grows when one read holds more requests)
     */
    PipelinedResponseWriter(FanoutEngine engine, ConnectionLimits limits, RequestStats stats, long maxAgeNanos,
            long maxBehindBytesTotal, int ringSize) {
        this.engine = engine;
        this.limits = limits;
        this.stats = stats;
        this.maxAgeNanos = maxAgeNanos;
        this.bornNanos = maxAgeNanos > 0 ? System.nanoTime() : 0;
        this.maxBehindBytesTotal = maxBehindBytesTotal;
        this.ring = new Object[ringSize];
        this.ringClose = new boolean[ringSize];
    }

    /** Tells the writer which stage reads the requests it answers. Before the writer is used. */
    void readsFrom(RequestAggregator requests) {
        this.requests = requests;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** {@return the channel's context, as this stage sees it (its loop and allocator)} */
    ChannelHandlerContext context() {
        return ctx;
    }

    /** {@return whether the connection is closed or closing: answers parked now are dropped} */
    boolean closed() {
        return closed;
    }

    /** {@return the next request's sequence number} (one per request read, in order) */
    long nextSeq() {
        return nextSeq++;
    }

    /** Answers the request just read at once: takes its sequence number and parks {@code response}. Loop only. */
    void answer(ReferenceCounted response, boolean closeAfter) {
        park(nextSeq++, response, closeAfter);
    }

    /** After a request was admitted: reading pauses while {@link ConnectionLimits#maxPipelined()} are unanswered. */
    void pauseIfFull() {
        if (nextSeq - nextToWrite >= limits.maxPipelined()) {
            pausedByPipeline = true;
            updateAutoRead();
        }
    }

    /** The head of a successful answer, kept for the next answer of the same status and content type. Loop only. */
    EncodedResponse.Prefix prefix(HttpResponseStatus status, String contentType) {
        EncodedResponse.Prefix p = lastPrefix;
        if (p == null || !p.is(status, contentType)) {
            p = new EncodedResponse.Prefix(status, contentType);
            lastPrefix = p;
        }
        return p;
    }

    /**
     * Parks response {@code seq} (a {@link FullHttpResponse}, or an {@link EncodedResponse}) and
     * writes every response that is now in order. Loop only.
     */
    void park(long seq, ReferenceCounted response, boolean closeAfter) {
        if (closed) {
            response.release();
            return;
        }
        while (nextSeq - nextToWrite > ring.length) {
            grow();
        }
        int slot = (int) (seq % ring.length);
        ring[slot] = response;
        ringClose[slot] = closeAfter;
        boolean wrote = false;
        while (nextToWrite < nextSeq) {
            int s = (int) (nextToWrite % ring.length);
            Object r = ring[s];
            if (r == null) {
                break;
            }
            ring[s] = null;
            nextToWrite++;
            // draining, or the connection past its age: the last answer in flight closes it
            boolean closing = ringClose[s] || (nextToWrite == nextSeq && !requests.bodyUnderWay()
                    && (engine.isDraining() || (maxAgeNanos > 0 && System.nanoTime() - bornNanos > maxAgeNanos)));
            if (r instanceof EncodedResponse e && !closing) {
                ctx.write(e); // the codec's encoder writes its ready-made head and the body
                wrote = true;
                continue;
            }
            FullHttpResponse resp = r instanceof EncodedResponse e ? e.toClosingResponse() : (FullHttpResponse) r;
            HttpUtil.setContentLength(resp, resp.content().readableBytes());
            if (closing) {
                resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE);
                closed = true;
                releaseParked();
                return;
            }
            ctx.write(resp);
            wrote = true;
        }
        if (wrote) {
            ctx.flush();
            if (checkSlowReader()) {
                return;
            }
        }
        if (pausedByPipeline && nextSeq - nextToWrite < limits.maxPipelined()) {
            pausedByPipeline = false;
            updateAutoRead();
        }
    }

    private void updateAutoRead() {
        boolean read = !pausedByPipeline && !pausedByWrites;
        if (ctx.channel().config().isAutoRead() != read) {
            ctx.channel().config().setAutoRead(read);
        }
    }

    /**
     * After a write: closes the connection if its client leaves more than
     * {@link ConnectionLimits#maxQueuedBytes()} unread, else pauses reading while the outbound buffer is
     * above the high water mark (and arms the slow-reader timer).
     *
     * @return whether the connection was closed
     */
    private boolean checkSlowReader() {
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        if (out != null && out.totalPendingWriteBytes() > limits.maxQueuedBytes()) {
            closeSlowReader("more than " + limits.maxQueuedBytes() + " response bytes unread");
            return true;
        }
        if (!ctx.channel().isWritable()) {
            onUnwritable();
            // behind: this connection's queue counts towards the server-wide bound
            long mine = out == null ? 0 : out.totalPendingWriteBytes();
            long total = stats.addBehindBytes(mine - behindReported);
            behindReported = mine;
            if (total > maxBehindBytesTotal) {
                stats.serverQueueFull();
                closeSlowReader("the server holds more than " + maxBehindBytesTotal
                        + " response bytes for clients that are behind");
                return true;
            }
        }
        return false;
    }

    /** Takes this connection's queued bytes out of the server-wide count (caught up, or closed). */
    private void releaseBehind() {
        if (behindReported != 0) {
            stats.addBehindBytes(-behindReported);
            behindReported = 0;
        }
    }

    private void onUnwritable() {
        if (!pausedByWrites) {
            pausedByWrites = true;
            updateAutoRead();
        }
        if (slowReaderTimer == null) {
            long nanos = limits.slowReaderTimeout().toNanos();
            slowReaderTimer = ctx.executor().schedule(() -> {
                slowReaderTimer = null;
                if (!closed && !ctx.channel().isWritable()) {
                    closeSlowReader("responses unread for " + limits.slowReaderTimeout().toMillis() + " ms");
                }
            }, nanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            releaseBehind();
            if (slowReaderTimer != null) {
                slowReaderTimer.cancel(false);
                slowReaderTimer = null;
            }
            if (pausedByWrites) {
                pausedByWrites = false;
                updateAutoRead();
            }
        } else if (!closed) {
            onUnwritable();
        }
        ctx.fireChannelWritabilityChanged();
    }

    /** Closes a connection whose client does not read its responses; the responses are dropped. */
    private void closeSlowReader(String why) {
        if (closed) {
            return;
        }
        log.debug("closing upstream connection {}: slow reader ({})", ctx.channel().remoteAddress(), why);
        stats.slowReaderClosed();
        closed = true;
        releaseParked();
        ctx.close();
    }

    /**
     * Doubles the ring. Needed when one read delivers more pipelined requests than the ring holds
     * (reading stops at {@code maxPipelined}, but bytes already read are still decoded).
     */
    private void grow() {
        Object[] r = new Object[ring.length * 2];
        boolean[] c = new boolean[r.length];
        for (long s = nextToWrite; s < nextToWrite + ring.length; s++) {
            r[(int) (s % r.length)] = ring[(int) (s % ring.length)];
            c[(int) (s % r.length)] = ringClose[(int) (s % ring.length)];
        }
        ring = r;
        ringClose = c;
    }

    private void releaseParked() {
        for (int i = 0; i < ring.length; i++) {
            if (ring[i] != null) {
                ReferenceCountUtil.release(ring[i]);
                ring[i] = null;
            }
        }
    }

    /** Removed from a live connection (an {@code h2c} upgrade): its timer and parked answers go. */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        release();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        release();
        ctx.fireChannelInactive();
    }

    private void release() {
        closed = true;
        releaseBehind();
        if (slowReaderTimer != null) {
            slowReaderTimer.cancel(false);
            slowReaderTimer = null;
        }
        releaseParked();
    }

    /** Drain ({@link HttpFanoutHandler#DRAIN}) and idle ({@link IdleStateEvent}): close now if nothing is under way. */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == HttpFanoutHandler.DRAIN) {
            if (nextToWrite == nextSeq && requests.idle()) {
                closed = true;
                ctx.close();
            }
            return;
        }
        if (evt instanceof IdleStateEvent) {
            if (nextToWrite == nextSeq) { // nothing in flight: an idle keep-alive connection
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }
}
