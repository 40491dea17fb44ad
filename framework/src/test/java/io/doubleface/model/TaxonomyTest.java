package io.doubleface.model;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.model.Configuration.Kind;
import io.doubleface.model.Configuration.Style;
import java.util.Arrays;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** μTune's taxonomy names: how they parse, what they map to, and their errors. */
class TaxonomyTest {

    /** name, canonical name, kind, network (frontends), workers, response (backends), inline, poll. */
    private static final String[] NAMES = {
        "sib,            sib,            THREAD, 0, 0,  0, true,  false",
        "sib-2,          sib-2n,         THREAD, 2, 0,  0, true,  false",
        "sip-1n,         sip-1n,         THREAD, 1, 0,  0, true,  true",
        "sdb,            sdb-1n-64w,     THREAD, 1, 64, 0, false, false",
        "sdb-8,          sdb-1n-8w,      THREAD, 1, 8,  0, false, false",
        "sdp-2n-20w,     sdp-2n-20w,     THREAD, 2, 20, 0, false, true",
        "sdp-20w-2n,     sdp-2n-20w,     THREAD, 2, 20, 0, false, true",
        "aib,            aib-1r,         TYPE2A, 0, 0,  1, false, false",
        "aip-1n-2r,      aip-1n-2r,      TYPE2A, 1, 0,  2, false, true",
        "aip-3,          aip-3r,         TYPE2A, 0, 0,  3, false, true",
        "adb,            adb-1n-4w-4r,   TYPE2A, 1, 4,  4, false, false",
        "adp-1n-4w-2r,   adp-1n-4w-2r,   TYPE2A, 1, 4,  2, false, true",
        "ADB-8,          adb-1n-8w-4r,   TYPE2A, 1, 8,  4, false, false",
    };

    @Test
    void taxonomyNamesMapOntoTheModels() {
        assertAll(Arrays.stream(NAMES).<Executable>map(row -> () -> {
            String[] f = Arrays.stream(row.split(",")).map(String::strip).toArray(String[]::new);
            Configuration c = Configuration.parse(f[0]);
            assertEquals(f[1], c.name(), f[0]);
            assertEquals(Kind.valueOf(f[2]), c.kind(), f[0]);
            assertEquals(Integer.parseInt(f[3]), c.frontends(), f[0] + " network threads");
            int workers = switch (c) {
                case Configuration.ThreadPerRequest t -> t.threads();
                case Configuration.Type2a t -> t.dispatchWorkers();
                default -> throw new AssertionError(f[0] + " maps onto " + c.kind());
            };
            assertEquals(Integer.parseInt(f[4]), workers, f[0] + " workers");
            int response = c instanceof Configuration.Type2a t ? t.backends() : 0;
            assertEquals(Integer.parseInt(f[5]), response, f[0] + " response threads");
            boolean inline = c instanceof Configuration.ThreadPerRequest t && t.inline();
            assertEquals(Boolean.parseBoolean(f[6]), inline, f[0] + " in-line");
            assertEquals(Boolean.parseBoolean(f[7]), c.busyPoll(), f[0] + " poll");
            assertEquals(Style.valueOf(f[1].split("-")[0].toUpperCase(Locale.ROOT)), c.style());
            assertEquals(c, Configuration.parse(c.name()), f[0] + " round trip");
        }));
    }

    @Test
    void modelFormsOfTheNewAxesRoundTrip() {
        Configuration t = Configuration.parse("thread-1f-50");
        assertEquals("thread-1f-50", t.name());
        assertEquals(1, t.frontends());
        assertEquals("type1-2f-8", Configuration.parse("type1-2f-8").name());
        Configuration.Type2a d = (Configuration.Type2a) Configuration.parse("type2a-1f4b-4w-poll");
        assertEquals("type2a-1f4b-4w-poll", d.name());
        assertEquals(4, d.dispatchWorkers());
        assertNull(d.style());
        assertEquals(d, Configuration.parse(d.name()));
    }

    @Test
    void familiesDropThePoolSizes() {
        assertEquals("sdb", Configuration.parse("sdb-1n-8w").family());
        assertEquals("thread", Configuration.parse("thread-8").family());
        assertEquals("type2a-poll", Configuration.parse("type2a-1f2b-poll").family());
        assertEquals("type2b-fixed", Configuration.parse("type2b-fixed-4").family());
        assertEquals("doubleface-poll", Configuration.parse("doubleface-2-poll").family());
    }

    @Test
    void badTaxonomyNamesSayWhatIsExpected() {
        bad("sib-4w", "sib is in-line and has no worker pool");
        bad("sdb-2r", "sdb is synchronous and has no response threads");
        bad("adb-1n-2n", "bad option '2n' (expected: each pool size once)");
        bad("adb-poll", "bad option 'poll' (expected: Nn, Nw, Nr or N");
        bad("sip-0", "bad option '0' (expected: a number from 1 to 4096)");
        bad("sdb-99999w", "a number from 1 to 4096");
        bad("xyz", "or one of μTune's sib, sip, sdb, sdp, aib, aip, adb, adp");
        bad("type1-4w", "Nw (dispatch workers) applies to type2a");
    }

    private static void bad(String name, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Configuration.parse(name));
        assertTrue(e.getMessage().contains(expected), "'" + e.getMessage() + "' should contain '" + expected + "'");
        assertTrue(e.getMessage().startsWith("configuration '" + name + "'"), e.getMessage());
    }
}
