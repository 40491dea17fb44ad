package io.doubleface.kv;

import io.netty.buffer.ByteBuf;

/**
 * The YCSB-style dataset of the benchmark: what the KV shards serve and the YCSB workload loads
 * into the other stores, and the canonical encoding of a READ or SCAN reply.
 *
 * <p>A record has a {@code long} key and {@value #FIELD_COUNT} fields of {@value #FIELD_SIZE}
 * bytes. Field contents are a pure function of (key, field) — printable ASCII from a
 * SplitMix64 stream — so every store (KV, Redis, MongoDB, gRPC) holds the same bytes and a query
 * returns byte-identical responses whatever store and threading model served it.
 *
 * <p>Canonical reply encoding (big-endian): the payload of a KV shard's answer to a
 * {@link KvRequest}, and what the YCSB workload turns the other stores' replies into:
 *
 * <pre>
 *   reply  := count:u16  record{count}
 *   record := key:i64  nfields:u8  field{nfields}
 *   field  := index:u8  value:byte[{@value #FIELD_SIZE}]
 * </pre>
 *
 * Stateless and thread-safe.
 */
public final class Records {

    /** Fields per record: {@value}. */
    public static final int FIELD_COUNT = 10;

    /** Bytes per field value: {@value}. */
    public static final int FIELD_SIZE = 100;

    private static final byte[] ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".getBytes(
                    java.nio.charset.StandardCharsets.US_ASCII);

    private Records() {}

    /**
     * Writes the value of (key, field) into {@code dst[off .. off+FIELD_SIZE)}.
     *
     * @param key the record key
     * @param field the field, {@code 0 ..} {@value #FIELD_COUNT}{@code -1}
     * @param dst the destination
     * @param off where the value starts in {@code dst}
     */
    public static void value(long key, int field, byte[] dst, int off) {
        long state = key * 0x9E3779B97F4A7C15L + field * 0xBF58476D1CE4E5B9L + 0x632BE59BD9B4E019L;
        int i = 0;
        while (i < FIELD_SIZE) {
            state += 0x9E3779B97F4A7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z ^= z >>> 31;
            // 10 characters of 6 bits each per 64-bit draw
            for (int j = 0; j < 10 && i < FIELD_SIZE; j++, i++) {
                dst[off + i] = ALPHABET[(int) ((z & 0x3F) % ALPHABET.length)];
                z >>>= 6;
            }
        }
    }

    /**
     * The value of (key, field) as a new array.
     *
     * @param key the record key
     * @param field the field, {@code 0 ..} {@value #FIELD_COUNT}{@code -1}
     * @return {@value #FIELD_SIZE} printable ASCII bytes
     */
    public static byte[] value(long key, int field) {
        byte[] v = new byte[FIELD_SIZE];
        value(key, field, v, 0);
        return v;
    }

    /**
     * Encoded size of a reply to {@code request}.
     *
     * @param request the READ or SCAN
     * @return bytes of its canonical reply
     */
    public static int replySize(KvRequest request) {
        int fields = request.field() == KvRequest.ALL_FIELDS ? FIELD_COUNT : 1;
        return 2 + request.count() * (8 + 1 + fields * (1 + FIELD_SIZE));
    }

    /**
     * The key of record number {@code i} of a request, wrapping in a key space of {@code records}.
     *
     * @param request the READ or SCAN
     * @param i the record's position in the reply, {@code 0 .. count-1}
     * @param records the key space, {@code > 0}
     * @return {@code (request.key() + i) % records}
     */
    public static long keyAt(KvRequest request, int i, long records) {
        return (request.key() + i) % records;
    }

    /**
     * Writes the canonical reply to {@code request} from the generator (what a shard holding the
     * dataset of {@code records} keys answers).
     *
     * @param request the READ or SCAN
     * @param records the key space, {@code > 0}
     * @param out where to write; gets {@link #replySize} bytes
     * @throws IllegalArgumentException if the key is not in {@code [0, records)}
     */
    public static void writeReply(KvRequest request, long records, ByteBuf out) {
        if (request.key() >= records) {
            throw new IllegalArgumentException("key: " + request.key() + " (expected: < " + records + ")");
        }
        byte[] scratch = new byte[FIELD_SIZE];
        out.writeShort(request.count());
        for (int r = 0; r < request.count(); r++) {
            long key = keyAt(request, r, records);
            out.writeLong(key);
            if (request.field() == KvRequest.ALL_FIELDS) {
                out.writeByte(FIELD_COUNT);
                for (int f = 0; f < FIELD_COUNT; f++) {
                    value(key, f, scratch, 0);
                    out.writeByte(f);
                    out.writeBytes(scratch);
                }
            } else {
                out.writeByte(1);
                value(key, request.field(), scratch, 0);
                out.writeByte(request.field());
                out.writeBytes(scratch);
            }
        }
    }

    /**
     * Writes one whole record, as stored by a shard ({@code key:i64 nfields:u8 field*}).
     *
     * @param key the record key
     * @param out where to write
     */
    public static void writeRecord(long key, ByteBuf out) {
        byte[] scratch = new byte[FIELD_SIZE];
        out.writeLong(key);
        out.writeByte(FIELD_COUNT);
        for (int f = 0; f < FIELD_COUNT; f++) {
            value(key, f, scratch, 0);
            out.writeByte(f);
            out.writeBytes(scratch);
        }
    }
}
