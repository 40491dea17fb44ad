package io.doubleface.kv;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The records {@code 0 .. records-1} of the deterministic dataset, encoded once with
 * {@link Records#writeRecord} into one array, so that serving a READ or SCAN is a copy of
 * precomputed bytes. Every shard holds the whole key space, so one store is shared by all shards
 * of a leaf server.
 *
 * <p>Immutable after construction; safe for any number of threads.
 */
final class KvStore {

    /** Encoded bytes of one whole record: {@value}. */
    static final int RECORD_SIZE = 8 + 1 + Records.FIELD_COUNT * (1 + Records.FIELD_SIZE);

    /** Bytes before the first field of a record (key, field count): {@value}. */
    private static final int RECORD_HEADER = 8 + 1;

    /** Bytes of one encoded field (index, value): {@value}. */
    private static final int FIELD_ENTRY = 1 + Records.FIELD_SIZE;

    /** Most records a store holds, so the store fits one array: {@value}. */
    static final int MAX_RECORDS = Integer.MAX_VALUE / RECORD_SIZE;

    private final byte[] bytes;
    private final int records;

    KvStore(int records) {
        if (records < 1 || records > MAX_RECORDS) {
            throw new IllegalArgumentException("records: " + records + " (expected: 1.." + MAX_RECORDS + ")");
        }
        this.records = records;
        this.bytes = new byte[records * RECORD_SIZE];
        ByteBuf out = Unpooled.wrappedBuffer(bytes).writerIndex(0);
        for (long key = 0; key < records; key++) {
            Records.writeRecord(key, out);
        }
        assert out.writerIndex() == bytes.length;
    }

    int records() {
        return records;
    }

    /**
     * Writes the canonical reply of READ/SCAN {@code count} records from {@code key}, of field
     * {@code field} or all of them ({@link KvProtocol#ALL_FIELDS}); byte-identical to
     * {@link Records#writeReply}. The caller has checked {@code 0 <= key < records}.
     */
    void writeReply(long key, int field, int count, ByteBuf out) {
        out.writeShort(count);
        int k = (int) key;
        if (field == KvProtocol.ALL_FIELDS) {
            // Whole records are contiguous: copy runs up to the end of the key space, then wrap.
            int left = count;
            while (left > 0) {
                int run = Math.min(left, records - k);
                out.writeBytes(bytes, k * RECORD_SIZE, run * RECORD_SIZE);
                left -= run;
                k = 0;
            }
        } else {
            int fieldOffset = RECORD_HEADER + field * FIELD_ENTRY;
            for (int i = 0; i < count; i++) {
                int base = k * RECORD_SIZE;
                out.writeBytes(bytes, base, 8); // key
                out.writeByte(1);
                out.writeBytes(bytes, base + fieldOffset, FIELD_ENTRY);
                if (++k == records) {
                    k = 0;
                }
            }
        }
    }

    /** Encoded size of {@link #writeReply}'s output. */
    static int replySize(int field, int count) {
        int perRecord = RECORD_HEADER + (field == KvProtocol.ALL_FIELDS ? Records.FIELD_COUNT : 1) * FIELD_ENTRY;
        return 2 + count * perRecord;
    }
}
