package io.doubleface.kv;

import io.netty.buffer.ByteBuf;

/**
 * The wire protocol between the KV clients ({@link KvDriver}) and the KV leaf server
 * ({@link KvLeafServer}): length-prefixed binary frames, big-endian, each request tagged with an id
 * the response echoes, so one connection carries many calls at once (pipelining) and responses
 * are matched by id, not by order.
 *
 * <pre>
 *   request  := length:u32  id:u32  op:u8  key:i64  field:i8  count:u16
 *   response := length:u32  id:u32  status:u8  payload
 * </pre>
 *
 * <ul>
 *   <li>{@code length} counts the bytes after the length field. A request body is exactly
 *       {@value #REQUEST_BODY_LENGTH} bytes (frame: {@value #REQUEST_FRAME_LENGTH} bytes); a response
 *       body is {@value #RESPONSE_HEADER_LENGTH} bytes of id and status plus the payload.
 *   <li>{@code op}: {@value #OP_READ} = READ, {@value #OP_SCAN} = SCAN.
 *   <li>{@code field}: {@value #ALL_FIELDS} = every field, else {@code 0 .. FIELD_COUNT-1}. READ
 *       returns that field of one record; SCAN returns that field (or all) of each record, exactly
 *       like {@link Records#writeReply}.
 *   <li>{@code count}: 1 for READ, {@code 1 ..} {@link KvRequest#MAX_SCAN} for SCAN.
 *   <li>{@code status}: {@value #STATUS_OK} = OK, the payload is exactly the canonical reply
 *       encoding of {@link Records} (so a client hands a retained slice of it to its caller, no
 *       copy); {@value #STATUS_NOT_FOUND} = NOT_FOUND (key &ge; the number of records) and
 *       {@value #STATUS_BAD_REQUEST} = BAD_REQUEST (a well-formed frame with a value the shard
 *       rejects, such as a negative key), both with a short UTF-8 message as payload.
 * </ul>
 *
 * <p>Malformed input — a request length other than {@value #REQUEST_BODY_LENGTH} (longer than
 * {@value #MAX_REQUEST_LENGTH} is rejected before anything is buffered), an unknown op, a field
 * or count out of range — is not answered: the server logs the reason and closes that connection.
 * A client that reads a response longer than {@value #MAX_RESPONSE_LENGTH} bytes, or shorter than
 * its header, closes the connection likewise.
 *
 * <p>Stateless and thread-safe.
 */
public final class KvProtocol {

    /** Bytes of the length prefix: {@value}. */
    public static final int LENGTH_FIELD_LENGTH = 4;

    /** Bytes of a request after the length prefix: {@value}. */
    public static final int REQUEST_BODY_LENGTH = 4 + 1 + 8 + 1 + 2;

    /** Bytes of a whole request frame: {@value}. */
    public static final int REQUEST_FRAME_LENGTH = LENGTH_FIELD_LENGTH + REQUEST_BODY_LENGTH;

    /** Largest request length the server reads before deciding the frame is malformed: {@value}. */
    public static final int MAX_REQUEST_LENGTH = 64;

    /** Bytes of a response after the length prefix and before the payload (id, status): {@value}. */
    public static final int RESPONSE_HEADER_LENGTH = 4 + 1;

    /**
     * Largest response length a client accepts: {@value} (1 MiB). The largest reply, a SCAN of
     * {@link KvRequest#MAX_SCAN} whole records, takes 1,019,002 bytes.
     */
    public static final int MAX_RESPONSE_LENGTH = 1 << 20;

    /** Op code of READ: {@value}. */
    public static final int OP_READ = 1;

    /** Op code of SCAN: {@value}. */
    public static final int OP_SCAN = 2;

    /** Field value meaning every field of the record: {@value}. */
    public static final int ALL_FIELDS = KvRequest.ALL_FIELDS;

    /** Status: the payload is the canonical reply: {@value}. */
    public static final int STATUS_OK = 0;

    /** Status: the key is not held by the shard: {@value}. */
    public static final int STATUS_NOT_FOUND = 1;

    /** Status: the shard rejects the request: {@value}. */
    public static final int STATUS_BAD_REQUEST = 2;

    static {
        // A maximal reply must fit, or SCAN of MAX_SCAN records would be refused by our own client.
        int largest = RESPONSE_HEADER_LENGTH + Records.replySize(KvRequest.scan(0, KvRequest.MAX_SCAN));
        if (largest > MAX_RESPONSE_LENGTH) {
            throw new AssertionError("MAX_RESPONSE_LENGTH " + MAX_RESPONSE_LENGTH + " < " + largest);
        }
    }

    private KvProtocol() {}

    /**
     * The op code of {@code op}.
     *
     * @param op the operation
     * @return {@value #OP_READ} for READ, {@value #OP_SCAN} for SCAN
     */
    public static int opCode(KvRequest.Op op) {
        return op == KvRequest.Op.READ ? OP_READ : OP_SCAN;
    }

    /**
     * Whether {@code request} can be encoded: a SCAN's field is not checked by {@link KvRequest}
     * but must fit the protocol's range.
     *
     * @param request the request
     * @return {@code true} if its field is {@value #ALL_FIELDS} or a field index
     */
    public static boolean isEncodable(KvRequest request) {
        return request.field() >= ALL_FIELDS && request.field() < Records.FIELD_COUNT;
    }

    /**
     * Writes the {@value #REQUEST_FRAME_LENGTH}-byte request frame of {@code request} to {@code out}.
     *
     * @param id the call's id, echoed by the response
     * @param request the request; check it with {@link #isEncodable} first
     * @param out the buffer to append the frame to, at its writer index (grown if needed)
     */
    public static void writeRequest(int id, KvRequest request, ByteBuf out) {
        out.writeInt(REQUEST_BODY_LENGTH);
        out.writeInt(id);
        out.writeByte(opCode(request.op()));
        out.writeLong(request.key());
        out.writeByte(request.field());
        out.writeShort(request.count());
    }

    /**
     * Writes the {@value #REQUEST_FRAME_LENGTH}-byte request frame of {@code request} to {@code out[0..]}.
     *
     * @param id the call's id, echoed by the response
     * @param request the request; check it with {@link #isEncodable} first
     * @param out at least {@value #REQUEST_FRAME_LENGTH} bytes; the frame is written from index 0
     * @throws ArrayIndexOutOfBoundsException if {@code out} is too short
     */
    public static void writeRequest(int id, KvRequest request, byte[] out) {
        putInt(out, 0, REQUEST_BODY_LENGTH);
        putInt(out, 4, id);
        out[8] = (byte) opCode(request.op());
        long key = request.key();
        for (int i = 0; i < 8; i++) {
            out[9 + i] = (byte) (key >>> (56 - 8 * i));
        }
        out[17] = (byte) request.field();
        out[18] = (byte) (request.count() >>> 8);
        out[19] = (byte) request.count();
    }

    static void putInt(byte[] out, int off, int v) {
        out[off] = (byte) (v >>> 24);
        out[off + 1] = (byte) (v >>> 16);
        out[off + 2] = (byte) (v >>> 8);
        out[off + 3] = (byte) v;
    }

    static int getInt(byte[] in, int off) {
        return (in[off] & 0xFF) << 24 | (in[off + 1] & 0xFF) << 16 | (in[off + 2] & 0xFF) << 8 | in[off + 3] & 0xFF;
    }

    /** A readable name of a status code, for messages. */
    static String statusName(int status) {
        return switch (status) {
            case STATUS_OK -> "OK";
            case STATUS_NOT_FOUND -> "NOT_FOUND";
            case STATUS_BAD_REQUEST -> "BAD_REQUEST";
            default -> "status " + status;
        };
    }
}
