package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@link YcsbReference} — the main-code reference {@code demo} checks answers with, computed by the
 * service's own plan, reply handling, merge and encoder — agrees with the answer written from the
 * data ({@link YcsbAnswer}) over every size, fanouts 1 to 20 and keys that wrap.
 */
class YcsbAnswerTest {

    @Test
    void theServicesOwnReferenceAgreesWithTheDataWrittenAnswer() {
        long records = 200;
        int scan = YcsbService.DEFAULT_SCAN_RECORDS;
        int checked = 0;
        for (Size size : Size.values()) {
            for (int fanout : new int[] {1, 2, 5, 20}) {
                for (long key : new long[] {0, 7, 185, 199}) {
                    YcsbQuery q = new YcsbQuery(fanout, size, key);
                    String written = YcsbAnswer.body(records, scan, q);
                    String service = new String(YcsbReference.body(records, scan, q), StandardCharsets.UTF_8);
                    assertEquals(written, service, q.toString());
                    checked++;
                }
            }
        }
        assertEquals(3 * 4 * 4, checked);
        assertTrue(YcsbAnswer.body(records, scan, new YcsbQuery(2, Size.SMALL, 199)).contains("\"key\":0"),
                "a key past the last record wraps to the first");
    }
}
