package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Durations and byte sizes as the command line writes them. */
class ParsingTest {

    @Test
    void durationsTakeMillisecondsSecondsAndMinutes() {
        assertEquals(Duration.ofMillis(250), Durations.parse("250ms"));
        assertEquals(Duration.ofSeconds(1), Durations.parse("1s"));
        assertEquals(Duration.ofMinutes(2), Durations.parse("2m"));
        assertEquals(Duration.ofMillis(0), Durations.parse("0ms"));
        assertEquals(Duration.ofSeconds(60), Durations.parse(" 60S "));
    }

    @Test
    void durationsRejectEverythingElseWithTheExpectedForm() {
        for (String bad : new String[] {"", "1", "1.5s", "-1s", "1h", "1 s", "ms", "1sec", "PT1S", "1s2", "99999999999s"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Durations.parse(bad), bad);
            assertTrue(e.getMessage().contains("e.g. 250ms, 1s, 2m"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> Durations.parse(null));
    }

    @Test
    void durationsFormatInTheirShortestExactUnit() {
        assertEquals("250ms", Durations.format(Duration.ofMillis(250)));
        assertEquals("1s", Durations.format(Duration.ofMillis(1000)));
        assertEquals("2m", Durations.format(Duration.ofSeconds(120)));
        assertEquals("90s", Durations.format(Duration.ofSeconds(90)));
    }

    @Test
    void byteSizesTakeBinaryMultiples() {
        assertEquals(8192, ByteSizes.parse("8192"));
        assertEquals(8192, ByteSizes.parse("8k"));
        assertEquals(65536, ByteSizes.parse("64KiB"));
        assertEquals(1 << 20, ByteSizes.parse("1m"));
        assertEquals(100, ByteSizes.parse("100b"));
    }

    @Test
    void byteSizesRejectGarbageAndOverflow() {
        for (String bad : new String[] {"", "k", "1g", "-1", "1.5k", "4096m"}) {
            assertThrows(IllegalArgumentException.class, () -> ByteSizes.parse(bad), bad);
        }
    }

    @Test
    void resilienceSpecsReadEveryPartAndRejectTheRestWithTheForm() {
        assertEquals(null, ResilienceSpecs.parse("off"));
        assertEquals("circuit 5/1000ms, retries 1 (10% + 10/s), hedge after 20ms (5% + 5/s)",
                ResilienceSpecs.parse("circuit:5:1s,retries:1,hedge:20ms:0.05:5").toString());
        assertEquals("retries 2 (50% + 0/s)", ResilienceSpecs.parse("retries:2:0.5:0").toString());
        assertEquals("hedge after p95 (at least 1ms) (10% + 10/s)", ResilienceSpecs.parse("hedge:p95").toString());
        assertEquals("hedge after p99.5 (at least 1ms) (5% + 1/s)", ResilienceSpecs.parse("hedge:p99.5:0.05:1").toString());
        assertTrue(ResilienceSpecs.parse("hedge:10ms").isIdempotent(null), "every YCSB read is idempotent");
        for (String bad : new String[] {"circuit:5", "retries", "retries:1:0.1", "hedge:5", "hedge:1ms:2:1",
                "circuit:x:1s", "breaker:1:1s", "retries:0", "hedge:p100", "hedge:px"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ResilienceSpecs.parse(bad), bad);
            assertTrue(!e.getMessage().isBlank(), bad);
        }
    }

    @Test
    void wildcardListenAddressesPrintAsLoopback() {
        assertEquals("127.0.0.1", Hosts.forUrl("0.0.0.0"));
        assertEquals("127.0.0.1", Hosts.forUrl("::"));
        assertEquals("[::1]", Hosts.forUrl("::1"));
        assertEquals("10.0.0.5", Hosts.forUrl("10.0.0.5"));
    }
}
