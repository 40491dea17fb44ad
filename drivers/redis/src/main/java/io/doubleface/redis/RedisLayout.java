package io.doubleface.redis;

import io.doubleface.api.ShardRequest;
import io.doubleface.data.Records;
import io.lettuce.core.KeyValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * How the deterministic dataset ({@link Records}) is laid out in a Redis shard, and how Redis
 * replies are re-encoded into the canonical reply bytes of {@link Records#writeReply}.
 *
 * <p>Record {@code k} is stored twice:
 *
 * <ul>
 *   <li>{@code user:k} — a hash with fields {@code field0 .. field9}, each holding the 100 bytes
 *       {@link Records#value(long, int)}. A READ of one field is {@code HGET user:k fieldF}; a READ
 *       of the whole record is {@code HMGET user:k field0 .. field9} (field order fixed by the
 *       command, never by {@code HGETALL}'s hash order);
 *   <li>{@code rec:k} — a string holding the record in its canonical encoding
 *       ({@link Records#writeRecord}: {@code key:i64 nfields:u8 (index:u8 value:100B)*10}, 1019
 *       bytes). A SCAN of {@code count} records from {@code key} is one
 *       {@code MGET rec:k0 rec:k1 ...} of the wrapped keys, computed by the client: one round trip,
 *       no server-side script (so nothing to re-register after a restart), and the reply bytes
 *       are copied as they are.
 * </ul>
 *
 * <p>For {@code redis-cluster://} every key carries a hash-tag prefix ({@code {tag}user:k}) that
 * pins the keys of one logical shard onto one master node; standalone shards use no prefix.
 *
 * <p>Stateless and thread-safe.
 */
public final class RedisLayout {

    /** Bytes of a record string ({@code rec:k}): {@value}. */
    public static final int RECORD_BYTES = 8 + 1 + Records.FIELD_COUNT * (1 + Records.FIELD_SIZE);

    private static final byte[][] FIELD_NAMES = new byte[Records.FIELD_COUNT][];

    static {
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            FIELD_NAMES[f] = ("field" + f).getBytes(StandardCharsets.US_ASCII);
        }
    }

    private final byte[] prefix;

    /** The layout of standalone shards (no key prefix). */
    public static final RedisLayout STANDALONE = new RedisLayout("");

    /**
     * A layout whose keys all start with {@code prefix} (e.g. a cluster hash tag {@code "{a}"}).
     *
     * @param prefix the key prefix, ASCII (other characters become {@code ?}); {@code ""} for none
     */
    public RedisLayout(String prefix) {
        this.prefix = prefix.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The hash field name of field {@code f} ({@code fieldF}); shared, do not modify.
     *
     * @param f the field index, {@code 0 .. Records.FIELD_COUNT-1}
     * @return the ASCII bytes of {@code fieldF}
     * @throws ArrayIndexOutOfBoundsException if {@code f} is out of range
     */
    public static byte[] fieldName(int f) {
        return FIELD_NAMES[f];
    }

    /** {@return a copy of the array of all field names, in field order (the names themselves are shared)} */
    public static byte[][] allFieldNames() {
        return FIELD_NAMES.clone();
    }

    /**
     * The hash key of record {@code k}: {@code [prefix]user:k}.
     *
     * @param k the record key
     * @return the key's ASCII bytes, a new array
     */
    public byte[] hashKey(long k) {
        return key("user:", k);
    }

    /**
     * The string key of record {@code k}: {@code [prefix]rec:k}.
     *
     * @param k the record key
     * @return the key's ASCII bytes, a new array
     */
    public byte[] recordKey(long k) {
        return key("rec:", k);
    }

    private byte[] key(String kind, long k) {
        byte[] tail = (kind + k).getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[prefix.length + tail.length];
        System.arraycopy(prefix, 0, out, 0, prefix.length);
        System.arraycopy(tail, 0, out, prefix.length, tail.length);
        return out;
    }

    /**
     * The record string ({@code rec:k} value) of {@code k}: its canonical encoding.
     *
     * @param k the record key
     * @return a new array of {@value #RECORD_BYTES} bytes
     */
    public static byte[] recordBytes(long k) {
        byte[] out = new byte[RECORD_BYTES];
        out[0] = (byte) (k >>> 56);
        out[1] = (byte) (k >>> 48);
        out[2] = (byte) (k >>> 40);
        out[3] = (byte) (k >>> 32);
        out[4] = (byte) (k >>> 24);
        out[5] = (byte) (k >>> 16);
        out[6] = (byte) (k >>> 8);
        out[7] = (byte) k;
        out[8] = (byte) Records.FIELD_COUNT;
        int off = 9;
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            out[off++] = (byte) f;
            Records.value(k, f, out, off);
            off += Records.FIELD_SIZE;
        }
        return out;
    }

    /**
     * The keys of a SCAN: {@code rec:k} of each record, wrapping at {@code records}.
     *
     * @param request the SCAN (a READ gives its one key)
     * @param records records per shard, {@code > 0}: the size of the key space
     * @return the {@code request.count()} record-string keys, in scan order
     */
    public byte[][] scanKeys(ShardRequest request, long records) {
        byte[][] keys = new byte[request.count()][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = recordKey(Records.keyAt(request, i, records));
        }
        return keys;
    }

    /** A reply that could not be re-encoded (missing key, wrong size): a shard-side problem. */
    static final class BadReplyException extends Exception {
        BadReplyException(String message) {
            super(message, null, false, false);
        }
    }

    /** Canonical reply of a READ of one field from its {@code HGET} value. */
    static ByteBuf encodeField(ShardRequest r, byte[] value, ByteBufAllocator alloc) throws BadReplyException {
        checkValue(r.key(), r.field(), value);
        ByteBuf out = alloc.buffer(Records.replySize(r));
        out.writeShort(1).writeLong(r.key()).writeByte(1).writeByte(r.field()).writeBytes(value);
        return out;
    }

    /** Canonical reply of a READ of a whole record from its {@code HMGET field0..field9} values. */
    static ByteBuf encodeRecord(ShardRequest r, List<KeyValue<byte[], byte[]>> values, ByteBufAllocator alloc)
            throws BadReplyException {
        if (values == null || values.size() != Records.FIELD_COUNT) {
            throw new BadReplyException("HMGET of key " + r.key() + " gave " + (values == null ? 0 : values.size())
                    + " values (expected: " + Records.FIELD_COUNT + ")");
        }
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            KeyValue<byte[], byte[]> kv = values.get(f);
            checkValue(r.key(), f, kv.hasValue() ? kv.getValue() : null);
        }
        ByteBuf out = alloc.buffer(Records.replySize(r));
        out.writeShort(1).writeLong(r.key()).writeByte(Records.FIELD_COUNT);
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            out.writeByte(f).writeBytes(values.get(f).getValue());
        }
        return out;
    }

    /** Canonical reply of a SCAN from the {@code MGET} of its record strings. */
    static ByteBuf encodeScan(ShardRequest r, long records, List<KeyValue<byte[], byte[]>> values,
            ByteBufAllocator alloc) throws BadReplyException {
        if (values == null || values.size() != r.count()) {
            throw new BadReplyException("MGET from key " + r.key() + " gave " + (values == null ? 0 : values.size())
                    + " records (expected: " + r.count() + ")");
        }
        for (int i = 0; i < r.count(); i++) {
            long k = Records.keyAt(r, i, records);
            KeyValue<byte[], byte[]> kv = values.get(i);
            byte[] v = kv.hasValue() ? kv.getValue() : null;
            if (v == null) {
                throw new BadReplyException("record " + k + " not found (was the dataset loaded? "
                        + "doubleface load-data)");
            }
            if (v.length != RECORD_BYTES || readLong(v) != k || v[8] != Records.FIELD_COUNT) {
                throw new BadReplyException("record " + k + " is malformed (" + v.length + " bytes, expected "
                        + RECORD_BYTES + ")");
            }
        }
        ByteBuf out = alloc.buffer(Records.replySize(r));
        out.writeShort(r.count());
        for (int i = 0; i < r.count(); i++) {
            byte[] v = values.get(i).getValue();
            if (r.field() == ShardRequest.ALL_FIELDS) {
                out.writeBytes(v);
            } else {
                out.writeBytes(v, 0, 8).writeByte(1).writeBytes(v, 9 + r.field() * (1 + Records.FIELD_SIZE),
                        1 + Records.FIELD_SIZE);
            }
        }
        return out;
    }

    private static void checkValue(long key, int field, byte[] value) throws BadReplyException {
        if (value == null) {
            throw new BadReplyException("key " + key + " field " + field + " not found (was the dataset loaded? "
                    + "doubleface load-data)");
        }
        if (value.length != Records.FIELD_SIZE) {
            throw new BadReplyException("key " + key + " field " + field + " has " + value.length + " bytes (expected: "
                    + Records.FIELD_SIZE + ")");
        }
    }

    private static long readLong(byte[] b) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[i] & 0xFF);
        }
        return v;
    }
}
