package io.doubleface.model;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.model.Configuration.DoubleFace;
import io.doubleface.model.Configuration.Kind;
import io.doubleface.model.Configuration.Style;
import io.doubleface.model.Configuration.ThreadPerRequest;
import io.doubleface.model.Configuration.Type1;
import io.doubleface.model.Configuration.Type2a;
import io.doubleface.model.Configuration.Type2b;
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
        assertEquals(new ThreadPerRequest(0, Configuration.DEFAULT_REQUEST_THREADS, false, false, false, null), c);
        assertEquals(64, ((ThreadPerRequest) c).threads());
        assertEquals(ThreadPerRequest.pool(64), c);
    }

    @Test
    void type1DefaultsTo32Workers() {
        Configuration c = Configuration.parse("type1");
        assertEquals(Kind.TYPE1, c.kind());
        assertEquals(new Type1(0, 32, false), c);
    }

    @Test
    void threadVirtualHasNoPoolSize() {
        Configuration c = Configuration.parse("thread-virtual");
        assertEquals(ThreadPerRequest.virtual(), c);
        assertTrue(((ThreadPerRequest) c).virtualThreads());
        assertEquals(0, ((ThreadPerRequest) c).threads());
    }

    @Test
    void type2aSplitsFrontendAndBackendLoops() {
        Configuration c = Configuration.parse("type2a-1f2b");
        assertEquals(Kind.TYPE2A, c.kind());
        assertEquals(Type2a.of(1, 2), c);
        assertEquals(Type2a.of(2, 0), Configuration.parse("type2a-2f"));
        assertEquals(Type2a.of(0, 3), Configuration.parse("type2a-3b"));
        assertEquals(new Type2a(1, 4, 4, true, null), Configuration.parse("type2a-1f4b-4w-poll"));
    }

    @Test
    void type2bIsCachedUnlessFixedOrSized() {
        Type2b cached = (Type2b) Configuration.parse("type2b");
        assertFalse(cached.fixedPool());
        assertEquals(0, cached.fixedWorkers());
        Type2b fixed = (Type2b) Configuration.parse("type2b-fixed");
        assertTrue(fixed.fixedPool());
        assertEquals(Configuration.DEFAULT_TYPE2B_WORKERS, fixed.fixedWorkers());
        assertEquals(8, ((Type2b) Configuration.parse("type2b-8")).fixedWorkers());
        assertEquals(new Type2b(1, 2, 4, false), Configuration.parse("type2b-1f2b-fixed-4"));
    }

    @Test
    void doublefaceTakesLoopsPollAndPolicy() {
        DoubleFace plain = (DoubleFace) Configuration.parse("doubleface");
        assertEquals(Kind.DOUBLEFACE, plain.kind());
        assertEquals(DoubleFace.of(), plain);
        assertEquals(0, plain.frontends());
        assertFalse(plain.busyPoll());
        assertNull(plain.replyOrder(), "no policy named: the server's default applies");
        DoubleFace all = (DoubleFace) Configuration.parse("doubleface-2-poll-fifo");
        assertEquals(2, all.loops());
        assertEquals(2, all.frontends(), "DoubleFace's loops are its frontends");
        assertTrue(all.busyPoll());
        assertEquals("fifo", all.replyOrder());
        assertEquals("completion-first", ((DoubleFace) Configuration.parse("doubleface-cf")).replyOrder());
        assertEquals("completion-first-arrival", ((DoubleFace) Configuration.parse("doubleface-cfa")).replyOrder());
    }

    @Test
    void typedValuesNameThemselvesAsTheGrammarDoes() {
        assertAll(Arrays.stream(DOCUMENTED).<Executable>map(row -> () -> {
            Configuration c = Configuration.parse(row.split(",")[0].strip());
            // rebuild the same record from its components: the name comes from the fields, not the input
            Configuration rebuilt = switch (c) {
                case ThreadPerRequest t -> new ThreadPerRequest(t.frontends(), t.threads(), t.virtualThreads(),
                        t.inline(), t.busyPoll(), t.style());
                case Type1 t -> new Type1(t.frontends(), t.workers(), t.busyPoll());
                case Type2a t -> new Type2a(t.frontends(), t.backends(), t.dispatchWorkers(), t.busyPoll(), t.style());
                case Type2b t -> new Type2b(t.frontends(), t.reactors(), t.fixedWorkers(), t.busyPoll());
                case DoubleFace d -> new DoubleFace(d.loops(), d.busyPoll(), d.replyOrder());
            };
            assertEquals(c.name(), rebuilt.name());
            assertEquals(c, rebuilt);
        }));
        assertEquals("doubleface-cf", new DoubleFace(0, false, "CF").name(), "policy aliases are canonicalised");
    }

    /** Typed values that no name could describe: each refused, naming the field. */
    @Test
    void typedValuesThatCannotRunAreRejectedNamingTheField() {
        Object[][] bad = {
            {(Executable) () -> new ThreadPerRequest(0, 0, false, false, false, null), "threads: 0"},
            {(Executable) () -> new ThreadPerRequest(0, 8, true, false, false, null), "threads: 8"},
            {(Executable) () -> new ThreadPerRequest(0, 0, true, true, false, null), "pick one"},
            {(Executable) () -> new ThreadPerRequest(1, 0, false, true, false, Style.SDB), "style sdb"},
            {(Executable) () -> new Type1(0, 0, false), "workers: 0"},
            {(Executable) () -> new Type2a(1, 0, 0, false, Style.AIB), "style aib"},
            {(Executable) () -> new Type2a(1, 2, 0, false, Style.ADB), "style adb"},
            {(Executable) () -> new Type2b(-1, 0, 0, false), "frontends: -1"},
            {(Executable) () -> new DoubleFace(Configuration.MAX_THREADS + 1, false, null), "loops: "},
            {(Executable) () -> new DoubleFace(0, false, "lifo"), "reply order: 'lifo'"},
        };
        assertAll(Arrays.stream(bad).<Executable>map(row -> () -> {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, (Executable) row[0]);
            assertTrue(e.getMessage().contains((String) row[1]), () -> e.getMessage() + " should contain " + row[1]);
        }));
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
        assertEquals(Configuration.MAX_THREADS,
                ((ThreadPerRequest) Configuration.parse("thread-" + Configuration.MAX_THREADS)).threads());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Configuration.parse("thread-" + (Configuration.MAX_THREADS + 1)));
        assertTrue(e.getMessage().contains("up to " + Configuration.MAX_THREADS), e.getMessage());
    }

    @Test
    void constructorRejectsNegativeSizes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Type1(0, -1, false));
        assertTrue(e.getMessage().startsWith("workers"), e.getMessage());
    }
}
