package io.doubleface.services.ycsb;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.bson.BSONException;

/**
 * Coverage-guided fuzzing (Jazzer) of the OP_MSG reply path of the {@code mongodb+loop://} client:
 * a whole message as the frame decoder hands it over ({@link OpMsgProtocol#readReply}), then its
 * documents turned into the canonical reply of a read ({@link MongoLayout#writeReply}). Arbitrary
 * bytes may be refused, by {@code readReply} with one of {@link #READ_REFUSALS} (which
 * {@link OpMsgClientHandler} turns into a closed connection) or with the server's error, and by
 * {@code writeReply} with an error string (the call fails); {@code writeReply} is our own code and
 * must not throw at all. Any other exception fails the test (no {@code NullPointerException},
 * {@code ClassCastException} or {@code Error}, no hang), and no buffer may leak.
 *
 * <p>Seeds: {@code src/test/resources/io/doubleface/services/ycsb/OpMsgReplyFuzzTestInputs/};
 * {@code JAZZER_FUZZ=1} fuzzes (CI does, bounded).
 */
class OpMsgReplyFuzzTest {

    private static final long RECORDS = 1000;
    private static final KvRequest[] REQUESTS = {
        KvRequest.readRecord(7), KvRequest.readField(7, 3), KvRequest.scan(998, 4)};

    /**
     * What {@code readReply} may throw for bytes that are not a usable reply: our own
     * {@code IllegalArgumentException} (not an {@code OP_MSG}, a {@code moreToCome} flag, a first
     * section that is not a body, a body length out of the message), the
     * {@code IndexOutOfBoundsException} of a header read past a message shorter than its 21 bytes,
     * and the BSON library's {@code BSONException} (its {@code BsonSerializationException} for a
     * malformed document, its {@code BsonInvalidOperationException} for a {@code cursor} or
     * {@code firstBatch} of the wrong type or missing).
     */
    private static final List<Class<? extends RuntimeException>> READ_REFUSALS = List.of(
            IllegalArgumentException.class, IndexOutOfBoundsException.class, BSONException.class);

    @FuzzTest(maxDuration = "60s")
    void anyReplyIsDecodedOrRefusedCleanly(byte[] input) {
        ByteBuf frame = Unpooled.wrappedBuffer(input);
        try {
            OpMsgProtocol.Reply r;
            try {
                r = OpMsgProtocol.readReply(frame);
            } catch (RuntimeException refused) {
                if (READ_REFUSALS.stream().noneMatch(c -> c.isInstance(refused))) {
                    throw new AssertionError("readReply threw what it should not: " + refused, refused);
                }
                return; // the handler closes the connection: a clean refusal
            }
            if (r.error() != null) {
                return; // the call fails SHARD_ERROR with the server's message
            }
            for (KvRequest request : REQUESTS) {
                ByteBuf out = Unpooled.buffer(Records.replySize(request));
                try {
                    // a value: null (the reply is written) or why the documents cannot answer
                    MongoLayout.writeReply(request, RECORDS, r.documents(), out);
                } finally {
                    out.release();
                }
            }
        } finally {
            frame.release();
        }
    }
}
