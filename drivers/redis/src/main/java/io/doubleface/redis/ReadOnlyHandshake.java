package io.doubleface.redis;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first exchange of a connection to a Redis Cluster replica ({@link RespProtocol#READ_ONLY}):
 * {@code READONLY} is written ahead of the connection's first write, and its {@code +OK} is taken
 * off the input before the reply decoder sees it, so the calls' replies stay in call order. On
 * every new connection, reconnections included (the handler is part of each channel's pipeline).
 * An error reply closes the connection (its calls fail {@code UNAVAILABLE}) and is logged.
 *
 * <p>Threading: one instance per channel, on its loop.
 */
final class ReadOnlyHandshake extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(ReadOnlyHandshake.class);
    private static final byte[] READONLY = "*1\r\n$8\r\nREADONLY\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OK = "+OK\r\n".getBytes(StandardCharsets.US_ASCII);

    private boolean sent;
    /** Bytes of the {@code +OK} read so far. */
    private int matched;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!sent) {
            sent = true;
            ctx.write(Unpooled.wrappedBuffer(READONLY), ctx.voidPromise());
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        while (matched < OK.length && in.isReadable()) {
            byte b = in.readByte();
            if (b != OK[matched]) {
                log.warn("redis-cluster replica {} refused READONLY (reply starts '{}'); closing the connection",
                        ctx.channel().remoteAddress(), (char) b);
                in.release();
                ctx.close();
                return;
            }
            matched++;
        }
        if (matched < OK.length) {
            in.release();
            return;
        }
        ctx.pipeline().remove(this);
        if (in.isReadable()) {
            ctx.fireChannelRead(in);
        } else {
            in.release();
        }
    }
}
