package io.doubleface.redis;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.List;

/**
 * Coverage-guided fuzzing (Jazzer) of the native client's reply path ({@code connection=native}):
 * {@link RespReplyDecoder#frameEnd} framing the received bytes into replies, and
 * {@link RespProtocol#reply} decoding each framed reply into the output of each kind of
 * {@link RedisCommand}. Framing may refuse bytes (an {@code IllegalArgumentException}: the
 * connection is closed), decoding may refuse a reply (one of the exceptions Lettuce's decoder
 * throws on purpose, {@link RespReplyFuzzTest#REFUSALS}: the call fails with {@code SHARD_ERROR}),
 * but nothing else may escape, no buffer may leak, and a reply the framer
 * calls complete must be complete for Lettuce's decoder too (else replies and calls would fall out
 * of step on the connection).
 *
 * <p>Seeds: {@code src/test/resources/io/doubleface/redis/RespNativeReplyFuzzTestInputs/};
 * {@code JAZZER_FUZZ=1} fuzzes (CI does, bounded).
 */
class RespNativeReplyFuzzTest {

    /** Every command the Lettuce-path fuzz test decodes, and the native client's own slice of a bulk string. */
    private static final List<RedisCommand<?>> COMMANDS = java.util.stream.Stream.concat(
            RespReplyFuzzTest.COMMANDS.stream(), java.util.stream.Stream.of(Redis.bytes().getBuffer(new byte[] {'k'})))
            .toList();

    @FuzzTest(maxDuration = "60s")
    void anyReplyIsFramedAndDecodedOrRefusedCleanly(byte[] input) {
        if (input.length == 0) {
            return;
        }
        RedisCommand<?> command = COMMANDS.get(Math.floorMod(input[0], COMMANDS.size()));
        ByteBuf in = Unpooled.wrappedBuffer(input, 1, input.length - 1);
        try {
            while (in.isReadable()) {
                int end;
                try {
                    end = RespReplyDecoder.frameEnd(in, in.readerIndex(), 0);
                } catch (IllegalArgumentException malformed) {
                    return; // the connection is closed
                }
                if (end == RespReplyDecoder.INCOMPLETE) {
                    return; // waits for more bytes
                }
                ByteBuf frame = in.retainedSlice(in.readerIndex(), end - in.readerIndex());
                in.readerIndex(end);
                if (frame.getByte(0) == '-') {
                    frame.release(); // an error reply: the decoder hands its text on
                    continue;
                }
                try {
                    Object reply = RespProtocol.INSTANCE.reply(command, 0, frame, ByteBufAllocator.DEFAULT);
                    if (reply instanceof ByteBuf slice) { // getBuffer: a retained slice, the caller's to release
                        slice.release();
                    }
                } catch (RuntimeException refused) {
                    if (String.valueOf(refused.getMessage()).startsWith("incomplete reply")) {
                        throw new AssertionError("framed as complete, incomplete for Lettuce: " + refused.getMessage());
                    }
                    // reply() refuses with IllegalStateException itself, else Lettuce's decoder does
                    RespReplyFuzzTest.requireRefusal(refused);
                }
                if (in.refCnt() != 1) { // a retained slice shares the received buffer's count
                    throw new AssertionError("reply() did not release the frame: refCnt " + in.refCnt());
                }
            }
        } finally {
            in.release();
        }
    }
}
