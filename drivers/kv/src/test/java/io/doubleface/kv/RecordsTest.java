package io.doubleface.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RecordsTest {

    private static final long RECORDS = 1000;

    @Test
    void valueIsAPureFunctionOfKeyAndField() {
        for (long key : new long[] {0, 1, 999, 123_456_789_012L, Long.MAX_VALUE}) {
            for (int f = 0; f < Records.FIELD_COUNT; f++) {
                byte[] a = Records.value(key, f);
                byte[] b = new byte[Records.FIELD_SIZE + 10];
                Records.value(key, f, b, 5);
                assertEquals(Records.FIELD_SIZE, a.length);
                assertArrayEquals(a, Arrays.copyOfRange(b, 5, 5 + Records.FIELD_SIZE));
                assertArrayEquals(a, Records.value(key, f));
                assertEquals(0, b[4], "writes nothing before the offset");
                assertEquals(0, b[5 + Records.FIELD_SIZE], "writes nothing after the value");
            }
        }
    }

    @Test
    void valuesArePrintableAlphanumeric() {
        for (long key = 0; key < 200; key++) {
            for (int f = 0; f < Records.FIELD_COUNT; f++) {
                for (byte c : Records.value(key, f)) {
                    assertTrue((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'),
                            "key " + key + " field " + f + ": byte " + c);
                }
            }
        }
    }

    @Test
    void valuesDifferAcrossKeysAndFields() {
        Set<String> seen = new HashSet<>();
        int n = 0;
        for (long key = 0; key < 300; key++) {
            for (int f = 0; f < Records.FIELD_COUNT; f++) {
                seen.add(new String(Records.value(key, f), java.nio.charset.StandardCharsets.US_ASCII));
                n++;
            }
        }
        assertEquals(n, seen.size(), "every (key, field) has its own value");
    }

    @Test
    void valuesUseMostOfTheAlphabet() {
        Set<Byte> chars = new HashSet<>();
        for (long key = 0; key < 50; key++) {
            for (byte c : Records.value(key, 0)) {
                chars.add(c);
            }
        }
        assertEquals(62, chars.size());
    }

    @Test
    void readReplySizeMatchesReplySize() {
        for (int field : new int[] {KvRequest.ALL_FIELDS, 0, 3, Records.FIELD_COUNT - 1}) {
            KvRequest r = new KvRequest(KvRequest.Op.READ, 42, field, 1);
            ByteBuf out = Unpooled.buffer();
            try {
                Records.writeReply(r, RECORDS, out);
                assertEquals(Records.replySize(r), out.readableBytes(), "field " + field);
            } finally {
                out.release();
            }
        }
        assertEquals(2 + 8 + 1 + 1 + Records.FIELD_SIZE, Records.replySize(KvRequest.readField(0, 0)));
    }

    @Test
    void scanReplySizeMatchesReplySize() {
        for (int count : new int[] {1, 2, 17, KvRequest.MAX_SCAN}) {
            KvRequest r = KvRequest.scan(7, count);
            ByteBuf out = Unpooled.buffer();
            try {
                Records.writeReply(r, RECORDS, out);
                assertEquals(Records.replySize(r), out.readableBytes(), "count " + count);
                assertEquals(2 + count * (8 + 1 + Records.FIELD_COUNT * (1 + Records.FIELD_SIZE)), out.readableBytes());
            } finally {
                out.release();
            }
        }
    }

    @Test
    void readFieldReplyDecodesToTheFieldValue() {
        ByteBuf out = Unpooled.buffer();
        try {
            Records.writeReply(KvRequest.readField(42, 3), RECORDS, out);
            assertEquals(1, out.readUnsignedShort());
            assertEquals(42, out.readLong());
            assertEquals(1, out.readUnsignedByte());
            assertEquals(3, out.readUnsignedByte());
            byte[] v = new byte[Records.FIELD_SIZE];
            out.readBytes(v);
            assertArrayEquals(Records.value(42, 3), v);
            assertFalse(out.isReadable());
        } finally {
            out.release();
        }
    }

    @Test
    void scanWrapsAtTheEndOfTheKeySpace() {
        KvRequest scan = KvRequest.scan(RECORDS - 2, 5);
        long[] expected = {RECORDS - 2, RECORDS - 1, 0, 1, 2};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], Records.keyAt(scan, i, RECORDS));
        }
        ByteBuf out = Unpooled.buffer();
        try {
            Records.writeReply(scan, RECORDS, out);
            assertEquals(5, out.readUnsignedShort());
            for (long key : expected) {
                assertEquals(key, out.readLong());
                assertEquals(Records.FIELD_COUNT, out.readUnsignedByte());
                for (int f = 0; f < Records.FIELD_COUNT; f++) {
                    assertEquals(f, out.readUnsignedByte());
                    byte[] v = new byte[Records.FIELD_SIZE];
                    out.readBytes(v);
                    assertArrayEquals(Records.value(key, f), v);
                }
            }
            assertFalse(out.isReadable());
        } finally {
            out.release();
        }
    }

    @Test
    void writeRecordMatchesAWholeRecordRead() {
        ByteBuf record = Unpooled.buffer();
        ByteBuf reply = Unpooled.buffer();
        try {
            Records.writeRecord(5, record);
            Records.writeReply(KvRequest.readRecord(5), RECORDS, reply);
            reply.skipBytes(2);
            assertEquals(reply, record);
        } finally {
            record.release();
            reply.release();
        }
    }

    @Test
    void keyOutsideTheDatasetIsRejected() {
        ByteBuf out = Unpooled.buffer();
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Records.writeReply(KvRequest.readRecord(RECORDS), RECORDS, out));
            assertTrue(e.getMessage().contains("key: " + RECORDS), e.getMessage());
            assertEquals(0, out.writerIndex(), "nothing written");
        } finally {
            out.release();
        }
    }
}
