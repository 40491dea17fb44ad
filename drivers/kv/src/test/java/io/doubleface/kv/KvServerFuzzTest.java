package io.doubleface.kv;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * Coverage-guided fuzzing (Jazzer) of the KV leaf's request decoder ({@link KvServerHandler}, the
 * shard side of {@link KvProtocol}): arbitrary bytes must give well-formed response frames (OK,
 * NOT_FOUND or BAD_REQUEST) for the well-formed requests and a closed connection at the first
 * malformed one — never an exception out of the pipeline or a leaked buffer.
 *
 * <p>Seeds: {@code src/test/resources/io/doubleface/kv/KvServerFuzzTestInputs/}; {@code JAZZER_FUZZ=1}
 * fuzzes (CI does, bounded).
 */
class KvServerFuzzTest {

    static {
        // one WARN per malformed connection is right for a leaf, and noise at thousands of inputs a second
        System.setProperty("org.slf4j.simpleLogger.log.io.doubleface.kv.KvServerHandler", "error");
    }

    private static final KvStore STORE = new KvStore(100);

    @FuzzTest(maxDuration = "60s")
    void anyBytesGetWellFormedFramesOrAClose(byte[] input) {
        EmbeddedChannel ch = new EmbeddedChannel(new KvServerHandler(STORE, 0, 0, 0));
        ch.writeInbound(Unpooled.wrappedBuffer(input));
        ch.runPendingTasks();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf frame = (ByteBuf) o;
            try {
                while (frame.isReadable()) {
                    assertTrue(frame.readableBytes() >= KvProtocol.LENGTH_FIELD_LENGTH + KvProtocol.RESPONSE_HEADER_LENGTH,
                            "a whole header");
                    long length = frame.readUnsignedInt();
                    assertTrue(length >= KvProtocol.RESPONSE_HEADER_LENGTH && length <= KvProtocol.MAX_RESPONSE_LENGTH
                            && length <= frame.readableBytes(), "length " + length);
                    frame.skipBytes(4); // id
                    int status = frame.readUnsignedByte();
                    assertTrue(status == KvProtocol.STATUS_OK || status == KvProtocol.STATUS_NOT_FOUND
                            || status == KvProtocol.STATUS_BAD_REQUEST, "status " + status);
                    frame.skipBytes((int) length - KvProtocol.RESPONSE_HEADER_LENGTH);
                }
            } finally {
                frame.release();
            }
        }
        ch.finishAndReleaseAll();
    }
}
