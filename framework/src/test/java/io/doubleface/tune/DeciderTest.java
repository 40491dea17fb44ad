package io.doubleface.tune;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.model.Configuration;
import io.doubleface.tune.LoadAdapterTest.Driver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Detectors and deciders plugged in by type ({@link TuneSettings#withDetector(Supplier)},
 * {@link TuneSettings#withDecider}), with the fake clock and fake engine of
 * {@link LoadAdapterTest}.
 */
class DeciderTest {

    /** A detector that reads whatever rate the test sets. */
    static final class FixedRateDetector implements LoadDetector {
        volatile double rate;
        long arrivals;

        @Override
        public void arrival(long nanoTime) {
            arrivals++; // the test's single thread
        }

        @Override
        public double rate(long nowNanos) {
            return rate;
        }

        @Override
        public String describe() {
            return "fixed";
        }
    }

    /** Asks μTune's policy and records what it saw and said: a decorator a user might write. */
    static final class Recording implements Decider {
        final Decider inner = Decider.profileDriven();
        final List<String> decisions = new ArrayList<>();
        long calls;

        @Override
        public Decision decide(Context ctx) {
            calls++;
            assertTrue(ctx.load() > 0, "decide is called only with a load estimate");
            Decision d = inner.decide(ctx);
            if (d != null) {
                decisions.add(d.configuration() + ":" + d.reason());
            }
            return d;
        }
    }

    @Test
    void aPolicyDecoratingTheBuiltInOneMakesTheSameSwitches() {
        List<Recording> made = new ArrayList<>();
        TuneSettings s = LoadAdapterTest.settings().withDecider(() -> {
            Recording r = new Recording();
            made.add(r);
            return r;
        });
        Driver builtIn = new Driver(LoadAdapterTest.settings());
        Driver decorated = new Driver(s);
        for (double rate : new double[] {100, 3000, 10_000, 200}) {
            builtIn.run(rate / Math.log(2), 500);
            decorated.run(rate / Math.log(2), 500);
        }
        assertEquals(List.of("sip", "sdp-1n-64w", "sdb-1n-64w", "sip"), decorated.engine.switches);
        assertEquals(builtIn.engine.switches, decorated.engine.switches);
        assertEquals(1, made.size(), "one policy per adapter");
        assertSame(made.get(0), decorated.adapter.decider());
        assertEquals(List.of("sip:better", "sdp-1n-64w:better", "sdb-1n-64w:rising", "sip:better"),
                made.get(0).decisions);
        assertTrue(made.get(0).calls > 1000, "asked every interval: " + made.get(0).calls);
        assertEquals(builtIn.adapter.switchesByReason(), decorated.adapter.switchesByReason());
    }

    @Test
    void aDetectorIsMadeForEachAdapterAndItsRateIsTheLoad() {
        List<FixedRateDetector> made = new ArrayList<>();
        TuneSettings s = LoadAdapterTest.settings().withCountWindow(Duration.ZERO).withSmoothing(Duration.ZERO)
                .withDetector(() -> {
                    FixedRateDetector d = new FixedRateDetector();
                    made.add(d);
                    return d;
                });
        Driver a = new Driver(s);
        Driver b = new Driver(s);
        assertEquals(2, made.size());
        assertNotSame(made.get(0), made.get(1));
        assertSame(made.get(0), a.adapter.detector());
        assertEquals("fixed", b.adapter.detector().describe());

        made.get(0).rate = 100;
        assertEquals("sip", a.run(10, 500), "the detector's 100 req/s, not the 10 req/s offered");
        assertEquals(100, a.adapter.load(), 1e-9);
        assertEquals(5, made.get(0).arrivals, "every admission reaches the detector");
        made.get(0).rate = 10_000;
        assertEquals("sdb-1n-64w", a.run(10, 10));
        assertEquals("infeasible", a.adapter.switchLog().getLast().reason());
        assertEquals(0, b.adapter.switches(), "the other adapter's detector read nothing");
    }

    @Test
    void reasonsOfAPolicyAreCountedAfterTheBuiltInOnes() {
        Decider flip = new Decider() {
            @Override
            public Decision decide(Context ctx) {
                String to = ctx.active().name().equals("sip") ? "sdb-1n-64w" : "sip";
                return new Decision(to, to.equals("sip") ? "down" : "surprise");
            }

            @Override
            public List<String> reasons() {
                return List.of("down", "better");
            }
        };
        Driver d = new Driver(LoadAdapterTest.settings().withDecider(() -> flip));
        assertEquals(List.of("better", "far-better", "infeasible", "saturated", "probe", "probe-abort", "unknown-load", "noise", "rising",
                "down"), List.copyOf(d.adapter.switchesByReason().keySet()), "declared ones from the start");
        d.run(1000, 40);
        assertTrue(d.adapter.switches() >= 2, "switches: " + d.adapter.switchLog());
        assertEquals(d.adapter.switches(), d.adapter.switchesByReason().get("down")
                + d.adapter.switchesByReason().get("surprise"));
        assertEquals("surprise", List.copyOf(d.adapter.switchesByReason().keySet()).getLast(), "undeclared: added on use");
    }

    @Test
    void aDecisionOutsideTheChoicesIsRefusedAndNothingSwitches() {
        Driver d = new Driver(LoadAdapterTest.settings()
                .withDecider(() -> ctx -> new Decider.Decision("thread-2", "mine")));
        d.now += LoadAdapterTest.MS;
        for (int i = 0; i < 20; i++) {
            d.adapter.admitted(d.now + i);
        }
        d.now += LoadAdapterTest.MS;
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> d.adapter.evaluate(d.now));
        assertTrue(e.getMessage().contains("thread-2"), e.getMessage());
        assertEquals(List.of(), d.engine.switches);
        assertEquals(0, d.adapter.switches());
        assertThrows(IllegalArgumentException.class, () -> new Decider.Decision("sip", " "));
    }

    @Test
    void aDetectorIsNamedOrMadeNeverBoth() {
        Supplier<LoadDetector> f = FixedRateDetector::new;
        TuneSettings named = LoadAdapterTest.settings();
        TuneSettings made = named.withDetector(f);
        assertNull(made.detector());
        assertNull(made.detectorName());
        assertSame(f, made.detectorFactory());
        assertEquals("fixed", made.newDetector().describe());
        TuneSettings back = made.withDetector("window");
        assertNull(back.detectorFactory());
        assertEquals("window-5ms", back.newDetector().describe());
        assertThrows(IllegalArgumentException.class, () -> new TuneSettings(named.strategy(), named.profile(), "ring",
                named.interval(), named.margin(), named.hysteresis(), named.dwell(), named.minSamples(),
                named.candidates(), named.smoothing(), named.countWindow(), named.saturation(),
                named.saturationWindow(), f, null));
        assertThrows(NullPointerException.class, () -> new LoadAdapter(new LoadAdapterTest.FakeSwitcher("sip"),
                named.withDetector(() -> null), () -> 0L));
    }

    @Test
    void theBuiltInPolicyFollowsTheProfileAndTheProfileDrivenOneNeedsOne() {
        assertTrue(LoadAdapterTest.settings().newDecider() instanceof ProfileDecider);
        TuneSettings none = TuneSettings.of(TuneStrategy.ADAPTIVE, null);
        assertTrue(none.newDecider() instanceof ExploringDecider);
        assertThrows(IllegalArgumentException.class, () -> new LoadAdapter(new LoadAdapterTest.FakeSwitcher("doubleface"),
                none.withDecider(Decider::profileDriven), () -> 0L));
        assertTrue(new LoadAdapter(new LoadAdapterTest.FakeSwitcher("sip"),
                LoadAdapterTest.settings().withDecider(Decider::exploring), () -> 0L)
                .decider() instanceof ExploringDecider, "exploring over a profile's choices is allowed");
    }

    @Test
    void aDecisionCarriesAConfigurationAndItsNameConstructorParses() {
        Decider.Decision byName = new Decider.Decision("sdb", "busy");
        assertEquals(new Decider.Decision(Configuration.parse("sdb-1n-64w"), "busy"), byName);
        assertEquals("sdb-1n-64w", byName.configuration().name());
        assertThrows(IllegalArgumentException.class, () -> new Decider.Decision("warp-9", "busy"));
        assertThrows(NullPointerException.class, () -> new Decider.Decision((String) null, "busy"));
        assertThrows(NullPointerException.class, () -> new Decider.Decision((Configuration) null, "busy"));
    }

    @Test
    void aPolicyReadsAndDecidesInTypedConfigurations() {
        Configuration quiet = Configuration.parse("sip");
        Configuration busy = Configuration.parse("sdb-1n-64w");
        List<Configuration> seen = new ArrayList<>();
        // the threshold policy of Decider's Javadoc, configurations parsed once
        Decider threshold = ctx -> {
            assertEquals(ctx.choices().get(2), ctx.anchor(), "the peak-sustaining one");
            assertTrue(ctx.choices().contains(ctx.active()), "the active one is a choice: " + ctx.active());
            assertEquals(200, ctx.predictedP99(quiet, 100), 1e-9, "the profile's p99 of a typed choice");
            assertTrue(ctx.feasible(busy, 10_000));
            seen.add(ctx.active());
            Configuration want = ctx.load() < 2000 ? quiet : busy;
            return want.equals(ctx.active()) ? null : new Decider.Decision(want, "threshold");
        };
        Driver d = new Driver(LoadAdapterTest.settings().withDecider(() -> threshold));
        assertEquals("sip", d.run(500, 200));
        assertEquals(quiet, d.adapter.evaluate(d.now));
        assertEquals("sdb-1n-64w", d.run(10_000, 200));
        assertEquals(List.of("sip", "sdb-1n-64w"), d.engine.switches);
        assertEquals(busy, seen.getLast());
    }
}
