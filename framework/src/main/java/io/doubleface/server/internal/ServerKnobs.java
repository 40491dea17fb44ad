package io.doubleface.server.internal;

import io.doubleface.driver.FlushMode;
import io.doubleface.driver.spi.LoopFlush;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.model.Configuration;
import io.netty.channel.EventLoop;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * What a running server lets be changed: the active configuration, the downstream flush mode
 * and CPU pinning of every loop, and stage tracing. {@code FanoutServer}'s run-time methods, the
 * admin listener ({@code PUT /admin/config}, {@code /admin/knobs}) and doubleface's tools all
 * change the server through this one object, so each change has one implementation.
 *
 * <p>Threading: thread-safe; the loop knobs are set under this object's lock, so two changes do
 * not interleave their loops.
 */
public final class ServerKnobs {

    private static final Logger log = ServerRuntime.LOG;

    private final FanoutEngine engine;
    private final Loops loops;
    private final Supplier<List<LoopGroup>> loopGroups;
    private final Runnable afterSwitch;

    /**
     * @param engine the server's engine (configurations, stage tracing)
     * @param loops the loop knobs' values, applied to each loop group as it starts
     * @param loopGroups every loop group of the server now (I/O loops and the models' own)
     * @param afterSwitch run after each switch made here (registers the meters of new loops)
     */
    ServerKnobs(FanoutEngine engine, Loops loops, Supplier<List<LoopGroup>> loopGroups, Runnable afterSwitch) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.loops = Objects.requireNonNull(loops, "loops");
        this.loopGroups = Objects.requireNonNull(loopGroups, "loopGroups");
        this.afterSwitch = Objects.requireNonNull(afterSwitch, "afterSwitch");
    }

    // ---- the active configuration ----

    /** {@return the configuration requests admitted now run under} */
    public Configuration configuration() {
        return engine.active();
    }

    /**
     * Switches the active configuration ({@link FanoutEngine#switchTo}): requests admitted from now
     * on use it, requests in flight finish under theirs.
     *
     * @param configuration the configuration, not {@code null}
     * @return the now active configuration
     * @throws IllegalArgumentException if it does not fit this server
     */
    public Configuration switchTo(Configuration configuration) {
        Configuration active = engine.switchTo(configuration);
        afterSwitch.run();
        return active;
    }

    // ---- the loop knobs ----

    /** {@return the downstream flush mode of the server's loops} */
    public FlushMode flushMode() {
        return loops.flushMode;
    }

    /**
     * Sets the downstream flush mode of every loop of the server from now on, and of the loops
     * configurations start later.
     *
     * @param policy the policy, not {@code null}
     */
    public synchronized void flushMode(FlushMode policy) {
        loops.flushMode = Objects.requireNonNull(policy, "policy");
        for (LoopGroup g : loopGroups.get()) {
            for (EventLoop loop : g.loops()) {
                LoopFlush.set(loop, policy);
            }
        }
        log.info("flush mode: {}", policy);
    }

    /** {@return the CPUs the loops are pinned to, or {@code null} if they are not} */
    public List<Integer> pinnedCpus() {
        return loops.pinCpus;
    }

    /**
     * Pins every loop group's loops to CPUs ({@link LoopGroup#pin}), or unpins them, and the loops
     * configurations start later. Returns when every loop has pinned itself.
     *
     * @param cpus the CPUs, or {@code null} to unpin
     * @throws IllegalArgumentException if {@code cpus} is empty or the kernel refuses a CPU
     * @throws UnsupportedOperationException if this is not Linux
     */
    public synchronized void pinIoThreads(List<Integer> cpus) {
        if (cpus != null && cpus.isEmpty()) {
            throw new IllegalArgumentException("pinIoThreads: empty CPU list (expected: 1 or more, or null to unpin)");
        }
        List<Integer> list = cpus == null ? null : List.copyOf(cpus);
        loops.pinCpus = list;
        for (LoopGroup g : loopGroups.get()) {
            g.pin(list);
        }
    }

    // ---- stage tracing ----

    /** {@return how many requests per traced one (0: tracing is off)} */
    public int traceStages() {
        return engine.stages().every();
    }

    /**
     * Traces one request in {@code oneIn} from now on; figures gathered so far are kept.
     *
     * @param oneIn 0 = off, 1 = all
     * @throws IllegalArgumentException if {@code oneIn < 0}
     */
    public void traceStages(int oneIn) {
        engine.stages().every(oneIn);
    }

    /** Forgets the stage figures gathered so far (a new window; the histograms are emptied in place). */
    public void resetStages() {
        engine.stages().reset();
    }

    /**
     * The loop knobs' values. Made before the engine, because the engine's first configuration
     * may start loop groups of its own, which {@link #applyTo} gets as they start.
     */
    static final class Loops {
        private volatile FlushMode flushMode;
        private volatile List<Integer> pinCpus;

        Loops(FlushMode flushMode, List<Integer> pinCpus) {
            this.flushMode = Objects.requireNonNull(flushMode, "flushMode");
            this.pinCpus = pinCpus == null ? null : List.copyOf(pinCpus);
        }

        /** Applies the flush mode and the pinning to {@code g}'s loops (a group that has just started). */
        void applyTo(LoopGroup g) {
            FlushMode f = flushMode;
            for (EventLoop loop : g.loops()) {
                LoopFlush.set(loop, f);
            }
            List<Integer> cpus = pinCpus;
            if (cpus != null || g.pinned() != null) {
                g.pin(cpus);
            }
        }
    }
}
