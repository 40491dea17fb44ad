package io.doubleface.kv;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.kv.KvRequest.Op;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class KvRequestTest {

    @Test
    void factoriesBuildValidRequests() {
        assertEquals(new KvRequest(Op.READ, 5, 3, 1), KvRequest.readField(5, 3));
        assertEquals(new KvRequest(Op.READ, 5, KvRequest.ALL_FIELDS, 1), KvRequest.readRecord(5));
        assertEquals(new KvRequest(Op.SCAN, 5, KvRequest.ALL_FIELDS, 10), KvRequest.scan(5, 10));
        assertEquals(KvRequest.MAX_SCAN, KvRequest.scan(0, KvRequest.MAX_SCAN).count());
        assertEquals(Records.FIELD_COUNT - 1, KvRequest.readField(0, Records.FIELD_COUNT - 1).field());
    }

    @Test
    void scanIgnoresTheField() {
        assertEquals(7, new KvRequest(Op.SCAN, 0, 7, 2).field());
    }

    /** Invalid requests, each with the start of the message that says what is wrong. */
    private static final String[] INVALID = {
        "READ, -1,  0,  1,    key: -1",
        "READ,  0, -2,  1,    field: -2",
        "READ,  0, 10,  1,    field: 10",
        "READ,  0,  0,  2,    count: 2",
        "READ,  0,  0,  0,    count: 0",
        "SCAN,  0, -1,  0,    count: 0",
        "SCAN,  0, -1,  1001, count: 1001",
        "SCAN, -5, -1,  1,    key: -5",
    };

    @Test
    void invalidRequestsAreRejectedNamingTheBadValue() {
        assertAll(Arrays.stream(INVALID).<Executable>map(row -> () -> {
            String[] f = row.split(",");
            Op op = Op.valueOf(f[0].strip());
            long key = Long.parseLong(f[1].strip());
            int field = Integer.parseInt(f[2].strip());
            int count = Integer.parseInt(f[3].strip());
            String expected = f[4].strip();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new KvRequest(op, key, field, count), row);
            assertTrue(e.getMessage().startsWith(expected), e.getMessage());
            assertTrue(e.getMessage().contains("expected"), e.getMessage());
        }));
    }

    @Test
    void missingOpIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KvRequest(null, 0, 0, 1));
        assertEquals("op: null", e.getMessage());
    }
}
