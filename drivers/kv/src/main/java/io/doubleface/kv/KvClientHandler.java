package io.doubleface.kv;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes response frames ({@link KvProtocol}) on a {@link KvConnection}'s channel and hands each
 * to the connection: the payload as a retained slice of the received bytes, no copy. An explicit
 * state machine: the header (length, id, status), then the payload.
 *
 * <p>A response longer than {@value KvProtocol#MAX_RESPONSE_LENGTH} bytes or shorter than its
 * header closes the connection (its calls then fail {@code UNAVAILABLE}).
 *
 * <p>Threading: one instance per channel, confined to its event loop.
 */
final class KvClientHandler extends ByteToMessageDecoder {

    private static final Logger log = LoggerFactory.getLogger(KvClientHandler.class);

    private static final int HEADER = KvProtocol.LENGTH_FIELD_LENGTH + KvProtocol.RESPONSE_HEADER_LENGTH;

    private enum State {
        /** Waiting for length, id and status. */
        HEADER,
        /** Waiting for {@code payloadLength} bytes of payload. */
        PAYLOAD,
        /** Malformed input seen; discarding until the channel closes. */
        BROKEN
    }

    private final KvConnection connection;
    private State state = State.HEADER;
    private int id;
    private int status;
    private int payloadLength;

    KvClientHandler(KvConnection connection) {
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
                        log.warn("kv shard {}: malformed response from {}: length {} (expected: {}..{}); closing",
                                connection.shard(), ctx.channel().remoteAddress(), length,
                                KvProtocol.RESPONSE_HEADER_LENGTH, KvProtocol.MAX_RESPONSE_LENGTH);
                        ctx.close();
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
                    ByteBuf payload = in.readRetainedSlice(payloadLength);
                    state = State.HEADER;
                    connection.onResponse(ctx.channel(), id, status, payload);
                }
                case BROKEN -> {
                    in.skipBytes(in.readableBytes());
                    return;
                }
            }
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        super.channelInactive(ctx); // decodes what is left first
        connection.onInactive(ctx.channel());
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("kv shard {}: connection to {} failed; closing it", connection.shard(), ctx.channel().remoteAddress(), cause);
        ctx.close();
    }
}
