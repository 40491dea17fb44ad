package io.doubleface.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** The precomputed store against the generator. */
class KvStoreTest {

    private static byte[] fromStore(KvStore store, KvRequest r) {
        ByteBuf b = Unpooled.buffer();
        try {
            store.writeReply(r.key(), r.field(), r.count(), b);
            assertEquals(KvStore.replySize(r.field(), r.count()), b.readableBytes());
            assertEquals(Records.replySize(r), b.readableBytes());
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    @Test
    void everyReadAndScanIsByteIdenticalToTheGeneratorIncludingManyWraps() {
        int records = 7; // small, so a SCAN wraps many times
        KvStore store = new KvStore(records);
        for (int key = 0; key < records; key++) {
            for (int field = -1; field < Records.FIELD_COUNT; field++) {
                KvRequest read = new KvRequest(KvRequest.Op.READ, key, field, 1);
                assertArrayEquals(TestShards.expected(read, records), fromStore(store, read), read.toString());
                for (int count : new int[] {1, 6, 7, 8, 50}) {
                    KvRequest scan = new KvRequest(KvRequest.Op.SCAN, key, field, count);
                    assertArrayEquals(TestShards.expected(scan, records), fromStore(store, scan), scan.toString());
                }
            }
        }
    }

    @Test
    void recordSizeMatchesTheCanonicalEncoding() {
        assertEquals(1019, KvStore.RECORD_SIZE);
        assertEquals(Records.replySize(KvRequest.readRecord(0)) - 2, KvStore.RECORD_SIZE);
    }
}
