package io.doubleface.services.ycsb;

import io.doubleface.driver.spi.PipelinedConnection;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.nio.ByteOrder;

/**
 * Decoder of an OP_MSG shard connection: frames MongoDB messages (little-endian length that counts
 * itself), reads each reply ({@link OpMsgProtocol#readReply}) and hands its documents, or its
 * error, to the connection under the call id {@code responseTo}; releases the frame after. A
 * message it cannot read closes the connection. On the connection's loop.
 */
final class OpMsgClientHandler extends LengthFieldBasedFrameDecoder {

    private final PipelinedConnection connection;

    OpMsgClientHandler(PipelinedConnection connection) {
        super(ByteOrder.LITTLE_ENDIAN, OpMsgProtocol.MAX_MESSAGE_LENGTH, 0, 4, -4, 0, true);
        this.connection = connection;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        Object frame = super.decode(ctx, in);
        if (frame instanceof ByteBuf b) {
            try {
                OpMsgProtocol.Reply r;
                try {
                    r = OpMsgProtocol.readReply(b);
                } catch (RuntimeException e) {
                    connection.onMalformed(ctx.channel(), e.toString());
                    return null;
                }
                if (r.error() != null) {
                    connection.onError(ctx.channel(), r.responseTo(), connection.address() + ": " + r.error());
                } else {
                    connection.onReply(ctx.channel(), r.responseTo(), r.documents());
                }
            } finally {
                b.release();
            }
        }
        return null;
    }
}
