package io.doubleface.kv;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One server-side connection of a KV shard: decodes request frames ({@link KvProtocol}) and answers
 * each from the {@link KvStore}, in order. Responses are written as requests are decoded and
 * flushed once per read batch, in {@link #channelReadComplete}.
 *
 * <p>Malformed input is not answered: the reason is logged at WARN with the remote address, the
 * responses already decoded are flushed, and the connection is closed. Other connections are
 * unaffected.
 *
 * <p>Backpressure: while the connection is not writable (the client does not read its responses)
 * the handler stops reading requests.
 *
 * <p>Threading: one instance per connection, confined to its event loop.
 */
final class KvServerHandler extends ByteToMessageDecoder {

    private static final Logger log = LoggerFactory.getLogger(KvServerHandler.class);

    private final KvStore store;
    private final int shard;
    private final double slowFraction;
    private final long slowDelayNanos;
    private boolean malformed;
    private boolean failed;

    KvServerHandler(KvStore store, int shard, double slowFraction, long slowDelayNanos) {
        this.store = store;
        this.shard = shard;
        this.slowFraction = slowFraction;
        this.slowDelayNanos = slowDelayNanos;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (malformed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        while (in.readableBytes() >= KvProtocol.LENGTH_FIELD_LENGTH) {
            int start = in.readerIndex();
            long length = in.getUnsignedInt(start);
            // Judge the length before waiting for the body, so a huge length buffers nothing.
            if (length > KvProtocol.MAX_REQUEST_LENGTH) {
                reject(ctx, in, "request length " + length + " (expected: <= " + KvProtocol.MAX_REQUEST_LENGTH + ")");
                return;
            }
            if (length != KvProtocol.REQUEST_BODY_LENGTH) {
                reject(ctx, in, "request length " + length + " (expected: " + KvProtocol.REQUEST_BODY_LENGTH + ")");
                return;
            }
            if (in.readableBytes() < KvProtocol.REQUEST_FRAME_LENGTH) {
                return;
            }
            int p = start + KvProtocol.LENGTH_FIELD_LENGTH;
            int id = in.getInt(p);
            int op = in.getUnsignedByte(p + 4);
            long key = in.getLong(p + 5);
            int field = in.getByte(p + 13);
            int count = in.getUnsignedShort(p + 14);
            String problem = check(op, field, count);
            if (problem != null) {
                reject(ctx, in, problem);
                return;
            }
            in.readerIndex(start + KvProtocol.REQUEST_FRAME_LENGTH);
            answer(ctx, id, key, field, count);
        }
    }

    /** Why a request is malformed, or null if it is not. */
    private static String check(int op, int field, int count) {
        if (op != KvProtocol.OP_READ && op != KvProtocol.OP_SCAN) {
            return "op " + op + " (expected: " + KvProtocol.OP_READ + " or " + KvProtocol.OP_SCAN + ")";
        }
        if (field < KvProtocol.ALL_FIELDS || field >= io.doubleface.kv.Records.FIELD_COUNT) {
            return "field " + field + " (expected: -1.." + (io.doubleface.kv.Records.FIELD_COUNT - 1) + ")";
        }
        if (op == KvProtocol.OP_READ ? count != 1 : count < 1 || count > io.doubleface.kv.KvRequest.MAX_SCAN) {
            return "count " + count + " (expected: " + (op == KvProtocol.OP_READ ? "1 for READ"
                    : "1.." + io.doubleface.kv.KvRequest.MAX_SCAN + " for SCAN") + ")";
        }
        return null;
    }

    private void answer(ChannelHandlerContext ctx, int id, long key, int field, int count) {
        if (key < 0) {
            writeError(ctx, id, KvProtocol.STATUS_BAD_REQUEST, "key " + key + " (expected: >= 0)");
            return;
        }
        if (key >= store.records()) {
            writeError(ctx, id, KvProtocol.STATUS_NOT_FOUND, "key " + key + " (expected: < " + store.records() + ")");
            return;
        }
        int payload = KvStore.replySize(field, count);
        ByteBuf buf = ctx.alloc().ioBuffer(KvProtocol.LENGTH_FIELD_LENGTH + KvProtocol.RESPONSE_HEADER_LENGTH + payload);
        buf.writeInt(KvProtocol.RESPONSE_HEADER_LENGTH + payload);
        buf.writeInt(id);
        buf.writeByte(KvProtocol.STATUS_OK);
        store.writeReply(key, field, count, buf);
        if (slowFraction > 0 && ThreadLocalRandom.current().nextDouble() < slowFraction) {
            // answered late (KvLeafServer.Builder#slowCalls); a write on a closed channel releases it
            ctx.executor().schedule(() -> ctx.writeAndFlush(buf, ctx.voidPromise()), slowDelayNanos,
                    TimeUnit.NANOSECONDS);
            return;
        }
        ctx.write(buf, ctx.voidPromise());
    }

    private static void writeError(ChannelHandlerContext ctx, int id, int status, String message) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        ByteBuf buf = ctx.alloc().ioBuffer(KvProtocol.LENGTH_FIELD_LENGTH + KvProtocol.RESPONSE_HEADER_LENGTH + text.length);
        buf.writeInt(KvProtocol.RESPONSE_HEADER_LENGTH + text.length);
        buf.writeInt(id);
        buf.writeByte(status);
        buf.writeBytes(text);
        ctx.write(buf, ctx.voidPromise());
    }

    private void reject(ChannelHandlerContext ctx, ByteBuf in, String reason) {
        malformed = true;
        in.skipBytes(in.readableBytes());
        log.warn("kv shard {}: malformed request from {}: {}; closing the connection",
                shard, ctx.channel().remoteAddress(), reason);
        // Answers to the well-formed requests before it still go out.
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        ctx.flush();
        // After super: with auto-read off it would ask for one more read, defeating the pause.
        super.channelReadComplete(ctx);
        if (!ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(true);
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (failed) {
            return; // each write queued before the close reports the same failure
        }
        failed = true;
        log.debug("kv shard {}: connection from {} failed; closing it", shard, ctx.channel().remoteAddress(), cause);
        ctx.close();
    }
}
