package io.doubleface.kv;

import io.doubleface.driver.spi.PipelinedConnection;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Decodes response frames ({@link KvProtocol}) on a KV shard connection and hands each to the
 * connection: an OK payload as a retained slice of the received bytes, no copy; any other status
 * as an error reply. An explicit state machine: the header (length, id, status), then the payload.
 *
 * <p>A response longer than {@value KvProtocol#MAX_RESPONSE_LENGTH} bytes or shorter than its
 * header closes the connection (its calls then fail {@code UNAVAILABLE}).
 *
 * <p>Threading: one instance per channel, confined to its event loop.
 */
final class KvClientHandler extends ByteToMessageDecoder {

    private static final int HEADER = KvProtocol.LENGTH_FIELD_LENGTH + KvProtocol.RESPONSE_HEADER_LENGTH;

    private enum State {
        /** Waiting for length, id and status. */
        HEADER,
        /** Waiting for {@code payloadLength} bytes of payload. */
        PAYLOAD,
        /** Malformed input seen; discarding until the channel closes. */
        BROKEN
    }

    private final PipelinedConnection connection;
    private State state = State.HEADER;
    private int id;
    private int status;
    private int payloadLength;

    KvClientHandler(PipelinedConnection connection) {
        this.connection = connection;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        for (;;) {
            switch (state) {
                case HEADER -> {
                    if (in.readableBytes() < HEADER) {
                        return;
                    }
                    long length = in.readUnsignedInt();
                    if (length < KvProtocol.RESPONSE_HEADER_LENGTH || length > KvProtocol.MAX_RESPONSE_LENGTH) {
                        state = State.BROKEN;
                        in.skipBytes(in.readableBytes());
                        connection.onMalformed(ctx.channel(), "length " + length + " (expected: "
                                + KvProtocol.RESPONSE_HEADER_LENGTH + ".." + KvProtocol.MAX_RESPONSE_LENGTH + ")");
                        return;
                    }
                    id = in.readInt();
                    status = in.readUnsignedByte();
                    payloadLength = (int) length - KvProtocol.RESPONSE_HEADER_LENGTH;
                    state = State.PAYLOAD;
                }
                case PAYLOAD -> {
                    if (in.readableBytes() < payloadLength) {
                        return;
                    }
                    state = State.HEADER;
                    if (status == KvProtocol.STATUS_OK) {
                        connection.onReply(ctx.channel(), id, in.readRetainedSlice(payloadLength));
                    } else {
                        String message = in.toString(in.readerIndex(), payloadLength, StandardCharsets.UTF_8);
                        in.skipBytes(payloadLength);
                        connection.onError(ctx.channel(), id, KvProtocol.statusName(status) + ": " + message);
                    }
                }
                case BROKEN -> {
                    in.skipBytes(in.readableBytes());
                    return;
                }
            }
        }
    }
}
