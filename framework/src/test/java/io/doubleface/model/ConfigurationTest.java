package io.doubleface.model;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.model.Configuration.Kind;
import java.util.Arrays;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class ConfigurationTest {

    /** Every name the documentation uses, with its canonical form. */
    private static final String[] DOCUMENTED = {
        "thread,                 thread-64",
        "thread-64,              thread-64",
        "thread-virtual,         thread-virtual",
        "type1,                  type1-32",
        "type1-32,               type1-32",
        "type2a,                 type2a",
        "type2a-1f2b,            type2a-1f2b",
        "type2a-2f,              type2a-2f",
        "type2a-3b,              type2a-3b",
        "type2b,                 type2b",
        "type2b-cached,          type2b",
        "type2b-fixed,           type2b-fixed-8",
        "type2b-fixed-8,         type2b-fixed-8",
        "type2b-8,               type2b-fixed-8",
        "type2b-1f2b-fixed-4,    type2b-1f2b-fixed-4",
        "doubleface,             doubleface",
        "doubleface-2,           doubleface-2",
        "doubleface-poll,        doubleface-poll",
        "doubleface-fifo,        doubleface-fifo",
        "doubleface-cf,          doubleface-cf",
        "doubleface-cfa,         doubleface-cfa",
        "doubleface-2-poll-fifo, doubleface-2-poll-fifo",
        "type2a-1f1b-poll,       type2a-1f1b-poll",
    };

    // Cases are looped (assertAll) rather than parameterized: the leak check costs a few GCs per test.
    @Test
    void documentedNamesParseToTheirCanonicalNamesAndRoundTrip() {
        assertAll(Arrays.stream(DOCUMENTED).<Executable>map(row -> () -> {
            String name = row.split(",")[0].strip();
            String canonical = row.split(",")[1].strip();
            Configuration c = Configuration.parse(name);
            assertEquals(canonical, c.name(), name);
            assertEquals(canonical, c.toString(), name);
            assertEquals(c, Configuration.parse(c.name()), name);
            assertEquals(c, Configuration.parse(name.toUpperCase(Locale.ROOT)), name + ": names are case-insensitive");
        }));
    }

    @Test
    void threadDefaultsTo64RequestThreads() {
        Configuration c = Configuration.parse("thread");
        assertEquals(Kind.THREAD, c.kind());
        assertEquals(Configuration.DEFAULT_REQUEST_THREADS, c.workers());
        assertEquals(64, c.workers());
        assertFalse(c.virtualThreads());
    }

    @Test
    void type1DefaultsTo32Workers() {
        Configuration c = Configuration.parse("type1");
        assertEquals(Kind.TYPE1, c.kind());
        assertEquals(32, c.workers());
    }

    @Test
    void threadVirtualHasNoPoolSize() {
        Configuration c = Configuration.parse("thread-virtual");
        assertTrue(c.virtualThreads());
        assertEquals(0, c.workers());
    }

    @Test
    void type2aSplitsFrontendAndBackendLoops() {
        Configuration c = Configuration.parse("type2a-1f2b");
        assertEquals(Kind.TYPE2A, c.kind());
        assertEquals(1, c.frontends());
        assertEquals(2, c.backends());
        Configuration f = Configuration.parse("type2a-2f");
        assertEquals(2, f.frontends());
        assertEquals(0, f.backends());
        Configuration b = Configuration.parse("type2a-3b");
        assertEquals(0, b.frontends());
        assertEquals(3, b.backends());
    }

    @Test
    void type2bIsCachedUnlessFixedOrSized() {
        Configuration cached = Configuration.parse("type2b");
        assertFalse(cached.fixedPool());
        assertEquals(0, cached.workers());
        Configuration fixed = Configuration.parse("type2b-fixed");
        assertTrue(fixed.fixedPool());
        assertEquals(Configuration.DEFAULT_TYPE2B_WORKERS, fixed.workers());
        Configuration sized = Configuration.parse("type2b-8");
        assertTrue(sized.fixedPool());
        assertEquals(8, sized.workers());
        Configuration all = Configuration.parse("type2b-1f2b-fixed-4");
        assertEquals(1, all.frontends());
        assertEquals(2, all.backends());
        assertEquals(4, all.workers());
        assertTrue(all.fixedPool());
    }

    @Test
    void doublefaceTakesLoopsPollAndPolicy() {
        Configuration plain = Configuration.parse("doubleface");
        assertEquals(Kind.DOUBLEFACE, plain.kind());
        assertEquals(0, plain.frontends());
        assertFalse(plain.busyPoll());
        assertNull(plain.policy(), "no policy named: the server's default applies");
        Configuration all = Configuration.parse("doubleface-2-poll-fifo");
        assertEquals(2, all.frontends());
        assertTrue(all.busyPoll());
        assertEquals("fifo", all.policy());
        assertEquals("completion-first", Configuration.parse("doubleface-cf").policy());
        assertEquals("completion-first-arrival", Configuration.parse("doubleface-cfa").policy());
    }

    @Test
    void blockIsTheDefaultAndCanBeNamed() {
        assertEquals(Configuration.parse("doubleface"), Configuration.parse("doubleface-block"));
        assertEquals("doubleface", Configuration.parse("doubleface-poll-block").name());
    }

    /** Invalid names, each with the part of the message that must say what is wrong. */
    private static final String[] INVALID = {
        "type9              | unknown model 'type9'",
        "thread-0           | bad option '0'",
        "thread-abc         | bad option 'abc'",
        "type2a-4           | bad option '4'",
        "doubleface-virtual | bad option 'virtual'",
        "type1-fifo         | bad option 'fifo'",
        "thread-virtual-8   | thread-virtual takes no pool size",
        "type2b-cached-8    | a cached pool takes no size",
        "type2b-8-cached    | a cached pool takes no size",
        "type2b-fixed-cached-4 | a cached pool takes no size",
        "doubleface-99999   | bad option '99999'",
        "doubleface-2f      | bad option '2f'",
        "thread-1f2b        | bad option '1f2b'",
        "type2b-virtual     | bad option 'virtual'",
    };

    @Test
    void invalidNamesAreRejectedNamingTheBadPart() {
        assertAll(Arrays.stream(INVALID).<Executable>map(row -> () -> {
            String name = row.split("\\|")[0].strip();
            String expected = row.split("\\|")[1].strip();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Configuration.parse(name),
                    name);
            // the message starts with the whole name: look for the bad part in the rest
            String reason = e.getMessage().replace("configuration '" + name + "'", "");
            assertTrue(reason.contains(expected), () -> "message '" + e.getMessage() + "' should contain: " + expected);
        }));
    }

    @Test
    void emptyNameIsRejected() {
        for (String name : new String[] {"", "   "}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Configuration.parse(name));
            assertTrue(e.getMessage().contains("empty"), e.getMessage());
        }
    }

    @Test
    void nullNameIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Configuration.parse(null));
    }

    @Test
    void poolSizesAboveTheMaximumAreRejected() {
        assertEquals(Configuration.MAX_THREADS, Configuration.parse("thread-" + Configuration.MAX_THREADS).workers());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Configuration.parse("thread-" + (Configuration.MAX_THREADS + 1)));
        assertTrue(e.getMessage().contains("up to " + Configuration.MAX_THREADS), e.getMessage());
    }

    @Test
    void constructorRejectsNegativeSizes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Configuration(Kind.THREAD, 0, 0, -1, false, false, false, null));
        assertTrue(e.getMessage().startsWith("workers"), e.getMessage());
    }
}
