package io.doubleface.cli;

import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.internal.loop.LoopStats;
import io.doubleface.internal.loop.ThreadStats;
import io.doubleface.server.FanoutServer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A snapshot of a mid-tier's counters — the same ones {@code /admin/stats} reports
 * ({@link FanoutServer#statsJson()}), read from the loops and {@code /proc} rather than parsed back from JSON:
 * event-loop iterations and I/O events summed over the server's loops (I/O loops and the models'
 * backend loops and reactors), and context switches summed over the mid-tier's threads.
 *
 * <p>Which threads count: the loops above and the models' worker pools. The KV leaf, the demo's
 * own client threads and JVM threads (GC, JIT) run in the same process but are not the mid-tier,
 * so they are left out.
 *
 * @param iterations event-loop iterations (≈ epoll_wait calls)
 * @param events I/O events handled
 * @param contextSwitches voluntary + involuntary context switches of the mid-tier's threads
 */
record MidTierCounters(long iterations, long events, long contextSwitches) {

    /**
     * Thread-name groups of the framework's worker pools ({@code io.doubleface.model}): request
     * threads, Type-1 workers, Type-2b workers. Loop threads are found by their group names.
     */
    private static final Set<String> WORKER_POOLS = Set.of("req", "t1-wk", "t2b-wk");

    /** Carriers of virtual threads ({@code thread-virtual}), e.g. {@code ForkJoinPool-1-worker-3}. */
    private static final String VIRTUAL_THREAD_CARRIERS = "ForkJoinPool-";

    /** Reads the counters now. Takes a few hundred microseconds ({@code /proc}). */
    static MidTierCounters of(FanoutServer server) {
        List<LoopGroup> groups = server.internals().loopGroups();
        long iterations = 0;
        long events = 0;
        Set<String> threadGroups = new HashSet<>(WORKER_POOLS);
        for (LoopGroup g : groups) {
            threadGroups.add(g.name());
            for (LoopStats s : g.stats()) {
                iterations += s.iterations();
                events += s.events();
            }
        }
        long switches = 0;
        for (ThreadStats.Group g : ThreadStats.snapshot().values()) {
            if (threadGroups.contains(g.name()) || g.name().startsWith(VIRTUAL_THREAD_CARRIERS)) {
                switches += g.switches();
            }
        }
        return new MidTierCounters(iterations, events, switches);
    }

    /** Whether per-thread counters can be read here ({@code /proc}, i.e. Linux). */
    static boolean threadsVisible() {
        return java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task"));
    }

    /** The counts since {@code before}. */
    MidTierCounters minus(MidTierCounters before) {
        return new MidTierCounters(iterations - before.iterations, events - before.events,
                contextSwitches - before.contextSwitches);
    }

    /** I/O events per loop iteration (0 if no iteration). */
    double eventsPerIteration() {
        return iterations == 0 ? 0 : (double) events / iterations;
    }
}
