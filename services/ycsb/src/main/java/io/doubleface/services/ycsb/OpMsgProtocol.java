package io.doubleface.services.ycsb;

import io.doubleface.kv.KvRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * The slice of the MongoDB wire protocol the per-loop client speaks: {@code OP_MSG} (opcode
 * {@value #OP_MSG}, MongoDB 3.6+) with one body section, carrying a {@code find} command and its
 * cursor reply.
 *
 * <pre>
 *   message := length:i32le  requestId:i32le  responseTo:i32le  opCode:i32le(2013)
 *              flagBits:u32le  kind:u8(0)  document:BSON
 *   request  document: {find: "usertable", filter, [projection], limit: n, batchSize: n, singleBatch: true, $db}
 *   reply    document: {cursor: {firstBatch: [docs], id: 0, ns}, ok: 1} | {ok: 0, errmsg, code}
 * </pre>
 *
 * Stateless and thread-safe.
 */
final class OpMsgProtocol {

    /** {@code OP_MSG}: {@value}. */
    static final int OP_MSG = 2013;
    /** Bytes of the message header: {@value}. */
    static final int HEADER_LENGTH = 16;
    /** Largest reply accepted: {@value} bytes (MongoDB's maxMessageSizeBytes). */
    static final int MAX_MESSAGE_LENGTH = 48_000_000;

    private static final BsonString COLLECTION = new BsonString(MongoLayout.COLLECTION);

    private OpMsgProtocol() {}

    /** Writes the {@code OP_MSG} of a {@code find} answering {@code request} into {@code out}. */
    static void writeFind(int requestId, KvRequest request, long records, String database, ByteBuf out) {
        BsonDocument cmd = new BsonDocument("find", COLLECTION);
        if (request.op() == KvRequest.Op.READ) {
            cmd.append("filter", new BsonDocument("_id", new BsonInt64(request.key())));
        } else {
            int n = MongoLayout.expectedDocuments(request, records);
            List<BsonValue> keys = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                keys.add(new BsonInt64(io.doubleface.kv.Records.keyAt(request, i, records)));
            }
            cmd.append("filter", new BsonDocument("_id", new BsonDocument("$in", new BsonArray(keys))));
        }
        if (request.field() != KvRequest.ALL_FIELDS) {
            cmd.append("projection", new BsonDocument(MongoLayout.fieldName(request.field()), new BsonInt32(1)));
        }
        int n = MongoLayout.expectedDocuments(request, records);
        cmd.append("limit", new BsonInt32(n)).append("batchSize", new BsonInt32(n))
                .append("singleBatch", BsonBoolean.TRUE).append("$db", new BsonString(database));
        RawBsonDocument raw = new RawBsonDocument(cmd, new BsonDocumentCodec());
        org.bson.ByteBuf body = raw.getByteBuffer();
        int length = HEADER_LENGTH + 4 + 1 + body.remaining();
        out.writeIntLE(length).writeIntLE(requestId).writeIntLE(0).writeIntLE(OP_MSG);
        out.writeIntLE(0); // flagBits
        out.writeByte(0); // section kind 0: body
        out.writeBytes(body.array(), body.position(), body.remaining());
    }

    /** A decoded reply: the documents found, or the server's error. */
    record Reply(int responseTo, List<RawBsonDocument> documents, String error) {}

    /**
     * Decodes one whole message ({@code frame} holds exactly it, header included).
     *
     * @throws IllegalArgumentException if it is not an {@code OP_MSG} with a body section
     */
    static Reply readReply(ByteBuf frame) {
        int start = frame.readerIndex();
        int length = frame.getIntLE(start);
        int responseTo = frame.getIntLE(start + 8);
        int opCode = frame.getIntLE(start + 12);
        if (opCode != OP_MSG) {
            throw new IllegalArgumentException("opCode " + opCode + " (expected: " + OP_MSG + ")");
        }
        int flags = frame.getIntLE(start + 16);
        if ((flags & 2) != 0) { // moreToCome: never asked for
            throw new IllegalArgumentException("flagBits 0x" + Integer.toHexString(flags) + " (moreToCome)");
        }
        if (frame.getByte(start + 20) != 0) {
            throw new IllegalArgumentException("first section of kind " + frame.getByte(start + 20) + " (expected: 0)");
        }
        int docStart = start + 21;
        int docLength = frame.getIntLE(docStart);
        if (docLength < 5 || docStart + docLength > start + length) {
            throw new IllegalArgumentException("malformed body document of " + docLength + " bytes");
        }
        RawBsonDocument doc = new RawBsonDocument(ByteBufUtil.getBytes(frame, docStart, docLength));
        BsonValue ok = doc.get("ok");
        if (ok == null || !ok.isNumber() || ok.asNumber().doubleValue() != 1.0) {
            BsonValue msg = doc.get("errmsg");
            return new Reply(responseTo, List.of(), msg != null && msg.isString() ? msg.asString().getValue() : doc.toJson());
        }
        BsonDocument cursor = doc.getDocument("cursor");
        BsonArray batch = cursor.getArray("firstBatch");
        List<RawBsonDocument> docs = new ArrayList<>(batch.size());
        for (BsonValue v : batch) {
            docs.add((RawBsonDocument) v.asDocument());
        }
        return new Reply(responseTo, docs, null);
    }
}
