package io.doubleface.services.ycsb;

import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import java.util.Locale;

/** Reply size classes of the YCSB fanout service (per shard). */
public enum Size {
    /** A point read of one 100-byte field (0.1 kB). */
    SMALL,
    /** A read of a whole record: 10 fields (1 kB). */
    MEDIUM,
    /** A range scan of {@link YcsbService#DEFAULT_SCAN_RECORDS} records (20 kB by default). */
    LARGE;

    /** The shard command for {@code key} (field of a point read: {@code key % 10}). */
    KvRequest request(long key, int scanRecords) {
        return switch (this) {
            case SMALL -> KvRequest.readField(key, (int) (key % Records.FIELD_COUNT));
            case MEDIUM -> KvRequest.readRecord(key);
            case LARGE -> KvRequest.scan(key, scanRecords);
        };
    }

    /** The name used in query strings: {@code small}, {@code medium}, {@code large}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code small|medium|large}; {@code null} if unknown. */
    static Size parse(String s) {
        for (Size v : values()) {
            if (v.label().equals(s)) {
                return v;
            }
        }
        return null;
    }
}
