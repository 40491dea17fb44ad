package io.doubleface.loadgen;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

/**
 * One keep-alive HTTP/1.1 connection of a {@link Worker}: its {@link #handler()} sits after an
 * {@code HttpResponseDecoder}; requests are written as ready-encoded bytes.
 *
 * <p>Threading: confined to its worker's event loop.
 */
final class HttpConnection extends Connection {

    Channel channel;
    private final Handler handler = new Handler();
    /** A response was read completely on this connection before. */
    private boolean reused;
    /** A part of the in-flight request's response was read. */
    private boolean answering;

    HttpConnection(Worker worker) {
        super(worker);
    }

    ChannelInboundHandlerAdapter handler() {
        return handler;
    }

    @Override
    void send(long intendedNanos, boolean measuredRequest) {
        intended = intendedNanos;
        measured = measuredRequest;
        inFlight = true;
        status = 0;
        answering = false;
        // a failed write fires exceptionCaught, which closes: the request then counts as "closed"
        channel.writeAndFlush(worker.encodeRequest(this, channel.alloc()), channel.voidPromise());
    }

    @Override
    boolean mayResend() {
        return reused && !answering && RequestMix.idempotent(worker.method(template));
    }

    @Override
    boolean isActive() {
        return channel.isActive();
    }

    @Override
    void close() {
        channel.close();
    }

    private final class Handler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            worker.connected(HttpConnection.this);
            ctx.fireChannelActive();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                answering = true;
                if (msg instanceof HttpObject o && o.decoderResult().isFailure()) {
                    ctx.close();
                    return;
                }
                if (msg instanceof HttpResponse r) {
                    status = r.status().code();
                    keepAlive = HttpUtil.isKeepAlive(r);
                }
                if (msg instanceof LastHttpContent && inFlight) {
                    reused = true;
                    worker.completed(HttpConnection.this);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            worker.closed(HttpConnection.this);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
