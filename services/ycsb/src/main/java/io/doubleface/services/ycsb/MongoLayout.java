package io.doubleface.services.ycsb;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.conversions.Bson;

/**
 * The data layout of a MongoDB shard and the translation of {@link KvRequest}s into queries
 * and of query results into the canonical reply encoding of {@link Records}.
 *
 * <p>Layout: database {@value #DATABASE}, collection {@value #COLLECTION}, one document per
 * record: {@code {_id: <key as int64>, field0: <binary>, …, field9: <binary>}}. Field values are
 * BSON binary (subtype 0) holding the {@value Records#FIELD_SIZE} bytes of
 * {@link Records#value(long, int)} exactly: binary is copied byte for byte in both directions,
 * with no UTF-8 validation or decoding (a string would round-trip too, because the generator's
 * bytes are ASCII, but would make the driver and server check and convert them). String fields
 * of the right length are read as well, so data loaded by other tools works.
 *
 * <p>Decoding reads the documents' raw BSON bytes ({@link RawBsonDocument}) with a small scanner
 * and copies the field bytes straight into the reply buffer: no per-field objects.
 *
 * <p>Stateless and thread-safe.
 */
final class MongoLayout {

    /** Database of the records: {@value}. */
    static final String DATABASE = "ycsb";
    /** Collection of the records: {@value}. */
    static final String COLLECTION = "usertable";

    private static final String[] FIELD_NAMES = new String[Records.FIELD_COUNT];
    private static final Bson[] FIELD_PROJECTIONS = new Bson[Records.FIELD_COUNT];

    static {
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            FIELD_NAMES[f] = "field" + f;
            FIELD_PROJECTIONS[f] = Projections.include(FIELD_NAMES[f]);
        }
    }

    private static final byte BSON_DOUBLE = 0x01;
    private static final byte BSON_STRING = 0x02;
    private static final byte BSON_BINARY = 0x05;
    private static final byte BSON_INT32 = 0x10;
    private static final byte BSON_INT64 = 0x12;

    private MongoLayout() {}

    /** The name of field {@code f}: {@code field0 .. field9}. */
    static String fieldName(int f) {
        return FIELD_NAMES[f];
    }

    /** The document of record {@code key}, as {@link #decode} reads it. */
    static RawBsonDocument document(long key) {
        BsonDocument d = new BsonDocument("_id", new BsonInt64(key));
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            d.append(FIELD_NAMES[f], new BsonBinary(Records.value(key, f)));
        }
        return new RawBsonDocument(d, new BsonDocumentCodec());
    }

    /** The filter of {@code request}: {@code _id == key} (READ) or {@code _id $in [keys]} (SCAN). */
    static Bson filter(KvRequest request, long records) {
        if (request.op() == KvRequest.Op.READ) {
            return Filters.eq("_id", request.key());
        }
        int n = (int) Math.min(request.count(), records);
        List<Long> keys = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            keys.add(Records.keyAt(request, i, records));
        }
        return Filters.in("_id", keys);
    }

    /** The projection of {@code request}: one field, or {@code null} for the whole document. */
    static Bson projection(KvRequest request) {
        return request.field() == KvRequest.ALL_FIELDS ? null : FIELD_PROJECTIONS[request.field()];
    }

    /** Documents a query of {@code request} returns at most (its batch size). */
    static int expectedDocuments(KvRequest request, long records) {
        return (int) Math.min(request.count(), records);
    }

    /** A record found in a result: the raw bytes and where each field's value starts (-1: absent). */
    static final class Found {
        final byte[] raw;
        final long key;
        final int[] offsets;

        Found(byte[] raw, long key, int[] offsets) {
            this.raw = raw;
            this.key = key;
            this.offsets = offsets;
        }
    }

    /**
     * Scans one document's raw BSON for {@code _id} and the field values.
     *
     * @throws IllegalArgumentException if the document has no usable {@code _id}, a field of the
     *     wrong type or size, or is malformed
     */
    static Found scan(RawBsonDocument doc) {
        org.bson.ByteBuf bb = doc.getByteBuffer();
        byte[] raw = bb.array();
        int pos = bb.position();
        int end = pos + getInt(raw, pos);
        if (end > raw.length) {
            throw new IllegalArgumentException("malformed document: length " + (end - pos));
        }
        pos += 4;
        long key = -1;
        boolean haveKey = false;
        int[] offsets = new int[Records.FIELD_COUNT];
        java.util.Arrays.fill(offsets, -1);
        while (pos < end - 1) {
            byte type = raw[pos++];
            int nameStart = pos;
            while (raw[pos] != 0) {
                pos++;
            }
            int nameLen = pos - nameStart;
            pos++;
            boolean isId = nameLen == 3 && raw[nameStart] == '_' && raw[nameStart + 1] == 'i' && raw[nameStart + 2] == 'd';
            int field = fieldIndex(raw, nameStart, nameLen);
            switch (type) {
                case BSON_INT64 -> {
                    if (isId) {
                        key = getLong(raw, pos);
                        haveKey = true;
                    }
                    pos += 8;
                }
                case BSON_INT32 -> {
                    if (isId) {
                        key = getInt(raw, pos);
                        haveKey = true;
                    }
                    pos += 4;
                }
                case BSON_DOUBLE -> {
                    if (isId) {
                        double d = Double.longBitsToDouble(getLong(raw, pos));
                        key = (long) d;
                        haveKey = key == d;
                    }
                    pos += 8;
                }
                case BSON_BINARY -> {
                    int len = getInt(raw, pos);
                    if (len < 0) {
                        throw new IllegalArgumentException("malformed document: binary of " + len + " bytes");
                    }
                    if (field >= 0) {
                        requireSize(field, len);
                        offsets[field] = pos + 5;
                    }
                    pos += 5 + len;
                }
                case BSON_STRING -> {
                    int len = getInt(raw, pos); // includes the trailing NUL
                    if (len < 1) {
                        throw new IllegalArgumentException("malformed document: string of " + len + " bytes");
                    }
                    if (field >= 0) {
                        requireSize(field, len - 1);
                        offsets[field] = pos + 4;
                    }
                    pos += 4 + len;
                }
                default -> {
                    if (isId || field >= 0) {
                        throw new IllegalArgumentException((isId ? "_id" : FIELD_NAMES[field]) + " has BSON type 0x"
                                + Integer.toHexString(type & 0xFF) + " (expected: int64 _id, binary or string fields)");
                    }
                    throw new IllegalArgumentException("unexpected element of BSON type 0x" + Integer.toHexString(type & 0xFF));
                }
            }
            if (pos > end - 1) { // the element ran past the document (whose last byte is its terminator)
                throw new IllegalArgumentException("malformed document: an element ends past its end");
            }
        }
        if (!haveKey || key < 0) {
            throw new IllegalArgumentException("document without a non-negative integer _id");
        }
        return new Found(raw, key, offsets);
    }

    private static void requireSize(int field, int len) {
        if (len != Records.FIELD_SIZE) {
            throw new IllegalArgumentException(FIELD_NAMES[field] + " holds " + len + " bytes (expected: "
                    + Records.FIELD_SIZE + ")");
        }
    }

    private static int fieldIndex(byte[] raw, int start, int len) {
        if (len == 6 && raw[start] == 'f' && raw[start + 1] == 'i' && raw[start + 2] == 'e' && raw[start + 3] == 'l'
                && raw[start + 4] == 'd') {
            int d = raw[start + 5] - '0';
            return d >= 0 && d < Records.FIELD_COUNT ? d : -1;
        }
        return -1;
    }

    private static int getInt(byte[] b, int i) {
        return (b[i] & 0xFF) | (b[i + 1] & 0xFF) << 8 | (b[i + 2] & 0xFF) << 16 | (b[i + 3] & 0xFF) << 24;
    }

    private static long getLong(byte[] b, int i) {
        return (getInt(b, i) & 0xFFFF_FFFFL) | ((long) getInt(b, i + 4)) << 32;
    }

    /**
     * Writes the canonical reply to {@code request} from the documents a query returned, in the
     * request's key order (repeated keys when a SCAN wraps more than once).
     *
     * @param docs the documents, in any order ({@code null} or empty: none found)
     * @return {@code null} on success, else why the documents cannot answer the request (a key
     *     missing, a field missing or malformed); {@code out} is then left partly written
     */
    static String writeReply(KvRequest request, long records, List<RawBsonDocument> docs, ByteBuf out) {
        if (request.key() >= records) {
            return "no record " + request.key() + " (keys 0.." + (records - 1) + ")";
        }
        int n = expectedDocuments(request, records);
        Found[] byIndex = new Found[n];
        if (docs != null) {
            for (RawBsonDocument d : docs) {
                Found f;
                try {
                    f = scan(d);
                } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
                    return "bad document: " + e.getMessage();
                }
                long i = Math.floorMod(f.key - request.key(), records);
                if (f.key < records && i < n) {
                    byIndex[(int) i] = f;
                }
            }
        }
        out.writeShort(request.count());
        for (int r = 0; r < request.count(); r++) {
            long key = Records.keyAt(request, r, records);
            Found f = byIndex[r % n];
            if (f == null || f.key != key) {
                return "no record " + key;
            }
            out.writeLong(key);
            if (request.field() == KvRequest.ALL_FIELDS) {
                out.writeByte(Records.FIELD_COUNT);
                for (int i = 0; i < Records.FIELD_COUNT; i++) {
                    if (!writeField(f, i, out)) {
                        return "record " + key + " has no " + FIELD_NAMES[i];
                    }
                }
            } else {
                out.writeByte(1);
                if (!writeField(f, request.field(), out)) {
                    return "record " + key + " has no " + FIELD_NAMES[request.field()];
                }
            }
        }
        return null;
    }

    private static boolean writeField(Found f, int field, ByteBuf out) {
        int off = f.offsets[field];
        if (off < 0) {
            return false;
        }
        out.writeByte(field);
        out.writeBytes(f.raw, off, Records.FIELD_SIZE);
        return true;
    }
}
