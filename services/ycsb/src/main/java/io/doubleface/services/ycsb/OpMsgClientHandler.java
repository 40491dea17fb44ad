package io.doubleface.services.ycsb;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.nio.ByteOrder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pipeline of an {@link OpMsgConnection}: frames MongoDB messages (little-endian length that
 * counts itself) and hands each whole message to the connection, releasing it after. On the
 * connection's loop.
 */
final class OpMsgClientHandler extends LengthFieldBasedFrameDecoder {

    private static final Logger log = LoggerFactory.getLogger(OpMsgClientHandler.class);

    private final OpMsgConnection connection;

    OpMsgClientHandler(OpMsgConnection connection) {
        super(ByteOrder.LITTLE_ENDIAN, OpMsgProtocol.MAX_MESSAGE_LENGTH, 0, 4, -4, 0, true);
        this.connection = connection;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        Object frame = super.decode(ctx, in);
        if (frame instanceof ByteBuf b) {
            try {
                connection.onResponse(ctx.channel(), b);
            } finally {
                b.release();
            }
        }
        return null;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        super.channelInactive(ctx);
        connection.onInactive(ctx.channel());
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("mongodb shard {}: {}", connection.shard(), cause.toString());
        ctx.close();
    }

}
