package io.doubleface.kv;

import io.doubleface.driver.Command;
import io.netty.buffer.ByteBuf;

/**
 * A READ or SCAN of the deterministic record set ({@link Records}): the command of the built-in
 * KV shards ({@code kv://}, the benchmark store), whose reply is the records in the canonical
 * encoding of {@link Records#writeReply}. Immutable; safe to share between threads and reuse
 * across requests.
 *
 * @param op the operation
 * @param key the record key (READ) or the first key (SCAN); {@code 0 <= key}
 * @param field the field to return of each record (a projection, for READ and SCAN alike), or
 *     {@link #ALL_FIELDS}
 * @param count the number of records to return (SCAN); 1 for READ
 */
public record KvRequest(Op op, long key, int field, int count) implements Command<ByteBuf> {

    /** {@link #field} value meaning "every field of the record". */
    public static final int ALL_FIELDS = -1;

    /** Largest SCAN {@link #count} a driver must serve: {@value}. */
    public static final int MAX_SCAN = 1000;

    /** Shard operations. */
    public enum Op {
        /** One record (one field or all of them). */
        READ,
        /** {@code count} consecutive records starting at {@code key}, wrapping at the end of the key space. */
        SCAN
    }

    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if {@code op} is {@code null}, {@code key < 0}, {@code field} is
     *     neither {@link #ALL_FIELDS} nor a field index, or {@code count} is not 1 for READ or not
     *     {@code 1 ..} {@value #MAX_SCAN} for SCAN
     */
    public KvRequest {
        if (op == null) {
            throw new IllegalArgumentException("op: null");
        }
        if (key < 0) {
            throw new IllegalArgumentException("key: " + key + " (expected: >= 0)");
        }
        if (field < ALL_FIELDS || field >= io.doubleface.kv.Records.FIELD_COUNT) {
            throw new IllegalArgumentException("field: " + field + " (expected: -1 or 0.."
                    + (io.doubleface.kv.Records.FIELD_COUNT - 1) + ")");
        }
        if (op == Op.READ) {
            if (count != 1) {
                throw new IllegalArgumentException("count: " + count + " (expected: 1 for READ)");
            }
        } else if (count < 1 || count > MAX_SCAN) {
            throw new IllegalArgumentException("count: " + count + " (expected: 1.." + MAX_SCAN + ")");
        }
    }

    /**
     * A point read of one field.
     *
     * @param key the record key, {@code >= 0}
     * @param field the field index, {@code 0 .. Records.FIELD_COUNT-1}, or {@link #ALL_FIELDS}
     * @return a READ of {@code field} of record {@code key}
     * @throws IllegalArgumentException if {@code key} or {@code field} is out of range
     */
    public static KvRequest readField(long key, int field) {
        return new KvRequest(Op.READ, key, field, 1);
    }

    /**
     * A read of a whole record.
     *
     * @param key the record key, {@code >= 0}
     * @return a READ of every field of record {@code key}
     * @throws IllegalArgumentException if {@code key < 0}
     */
    public static KvRequest readRecord(long key) {
        return new KvRequest(Op.READ, key, ALL_FIELDS, 1);
    }

    /**
     * A range scan of {@code count} whole records from {@code key}.
     *
     * @param key the first record key, {@code >= 0}
     * @param count the number of records, {@code 1 ..} {@value #MAX_SCAN}; the scan wraps at the end of
     *     the key space
     * @return a SCAN of whole records
     * @throws IllegalArgumentException if {@code key} or {@code count} is out of range
     */
    public static KvRequest scan(long key, int count) {
        return new KvRequest(Op.SCAN, key, ALL_FIELDS, count);
    }
}
