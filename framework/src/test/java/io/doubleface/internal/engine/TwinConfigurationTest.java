package io.doubleface.internal.engine;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.doubleface.api.Backend;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.model.Configuration;
import io.doubleface.testing.TestRead;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine keeps one model per distinct threads: a μTune name and the plain name of the same
 * threads are one model, and switching from one to the other is no switch.
 */
@Timeout(60)
class TwinConfigurationTest {

    private LoopGroup io;
    private FanoutEngine engine;

    @BeforeEach
    void start() {
        io = new LoopGroup("twin", 2, Transport.AUTO);
        Backend<TestRead> backend = new Backend<>("echo", 0, new GeneratedShards(2), new Object());
        ModelContext ctx = new ModelContext(io, List.of(backend), "completion-first", 100);
        engine = new FanoutEngine(ctx, Configuration.DoubleFace.of(), TimeUnit.SECONDS.toNanos(5));
    }

    @AfterEach
    void stop() {
        engine.close();
        io.close();
    }

    private static Configuration c(String name) {
        return Configuration.parse(name);
    }

    @Test
    void theThreadsOfATaxonomyNameAreThoseOfItsPlainTwin() {
        assertEquals(c("thread-1f-8"), FanoutEngine.threadsOf(c("sdb-1n-8w")));
        assertEquals(c("type2a-1f2b"), FanoutEngine.threadsOf(c("aib-1n-2r")));
        assertEquals(c("type2a-1f2b-2w-poll"), FanoutEngine.threadsOf(c("adp-1n-2w-2r")));
        assertEquals(new Configuration.ThreadPerRequest(0, 0, false, true, true, null), FanoutEngine.threadsOf(c("sip")));
        assertEquals(c("type1-4"), FanoutEngine.threadsOf(c("type1-4")), "a plain name is its own identity");
        assertEquals(c("doubleface-poll"), FanoutEngine.threadsOf(c("doubleface-poll")));
        assertNotEquals(FanoutEngine.threadsOf(c("sdb-1n-8w")), FanoutEngine.threadsOf(c("sdp-1n-8w")),
                "block and poll are different threads");
    }

    @Test
    void switchingToATwinKeepsTheModelAndCountsNoSwitch() {
        assertEquals(c("sdb-1n-8w"), engine.switchTo(c("sdb-1n-8w")));
        assertEquals(2, engine.models().size());
        assertEquals(1, engine.switches());
        ThreadingModel sdb = engine.model(c("sdb-1n-8w"));

        // the plain spelling of the same threads: no second model, no switch, the new name reported
        assertEquals(c("thread-1f-8"), engine.switchTo(c("thread-1f-8")));
        assertEquals(2, engine.models().size(), "one model per distinct threads: " + engine.models());
        assertEquals(1, engine.switches(), "a twin is no switch");
        assertEquals(1, engine.switchLog().size());
        assertEquals("thread-1f-8", engine.active().name(), "the name switched to last");
        assertSame(sdb, engine.model(c("thread-1f-8")));
        assertEquals("sdb-1n-8w", sdb.configuration().name(), "the model keeps the name it was built under");

        // away and back by the other name: the same model, switches counted as usual
        engine.switchTo(Configuration.DoubleFace.of());
        assertEquals(c("sdb-1n-8w"), engine.switchTo(c("sdb-1n-8w")));
        assertEquals(2, engine.models().size());
        assertEquals(3, engine.switches());
        FanoutEngine.SwitchRecord last = engine.switchLog().getLast();
        assertEquals("doubleface", last.from());
        assertEquals("sdb-1n-8w", last.to());
        assertSame(sdb, engine.model(c("sdb-1n-8w")));
    }

    @Test
    void preparingTwinsBuildsOneModel() {
        List<Configuration> prepared = engine.prepare(List.of(c("aib-1n-2r"), c("type2a-1f2b"), c("type1-2")));
        assertEquals(List.of(c("aib-1n-2r"), c("type2a-1f2b"), c("type1-2")), prepared);
        assertEquals(3, engine.models().size(), "doubleface, aib-1n-2r = type2a-1f2b, type1-2: " + engine.models());
        assertSame(engine.model(c("aib-1n-2r")), engine.model(c("type2a-1f2b")));
        assertNull(engine.model(c("type1-4")), "not built");
        assertEquals(0, engine.switches(), "prepared, not switched to");

        engine.switchTo(c("type2a-1f2b"));
        assertEquals(3, engine.models().size(), "the prepared twin serves it");
        assertEquals(1, engine.switches());
        assertEquals("type2a-1f2b", engine.active().name());
    }
}
