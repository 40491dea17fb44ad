package io.doubleface.services.ycsb;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Coverage-guided fuzzing (Jazzer) of the OP_MSG reply path of the {@code mongodb+loop://} client:
 * a whole message as the frame decoder hands it over ({@link OpMsgProtocol#readReply}), then its
 * documents turned into the canonical reply of a read ({@link MongoLayout#writeReply}). Arbitrary
 * bytes may be refused — a {@code RuntimeException}, which {@link OpMsgClientHandler} turns into a
 * closed connection, or an error string, which fails the call — but nothing else may escape (no
 * {@code Error}, no hang) and no buffer may leak.
 *
 * <p>Seeds: {@code src/test/resources/io/doubleface/services/ycsb/OpMsgReplyFuzzTestInputs/};
 * {@code JAZZER_FUZZ=1} fuzzes (CI does, bounded).
 */
class OpMsgReplyFuzzTest {

    private static final long RECORDS = 1000;
    private static final KvRequest[] REQUESTS = {
        KvRequest.readRecord(7), KvRequest.readField(7, 3), KvRequest.scan(998, 4)};

    @FuzzTest(maxDuration = "60s")
    void anyReplyIsDecodedOrRefusedCleanly(byte[] input) {
        ByteBuf frame = Unpooled.wrappedBuffer(input);
        try {
            OpMsgProtocol.Reply r;
            try {
                r = OpMsgProtocol.readReply(frame);
            } catch (RuntimeException refused) {
                return; // the handler closes the connection: a clean refusal
            }
            if (r.error() != null) {
                return; // the call fails SHARD_ERROR with the server's message
            }
            for (KvRequest request : REQUESTS) {
                ByteBuf out = Unpooled.buffer(Records.replySize(request));
                try {
                    MongoLayout.writeReply(request, RECORDS, r.documents(), out);
                } catch (RuntimeException refused) {
                    // OpMsgClientProtocol.reply turns it into SHARD_ERROR
                } finally {
                    out.release();
                }
            }
        } finally {
            frame.release();
        }
    }
}
