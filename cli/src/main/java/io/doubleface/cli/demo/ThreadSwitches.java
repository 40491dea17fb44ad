package io.doubleface.cli.demo;

import io.doubleface.internal.loop.ThreadStats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Context switches per thread of this process ({@code /proc/self/task/<tid>/status}), for deltas
 * that stay right when threads come and go during a run: a delta sums, over the threads alive at
 * the end, their switches minus those at the start (0 for a thread started since). Summing per
 * group instead would go negative when a parked pool thread of another configuration exits.
 *
 * <p>Immutable; {@link #snapshot} reads {@code /proc} afresh (a few hundred microseconds).
 */
public final class ThreadSwitches {

    private static final Path TASKS = Path.of("/proc/self/task");

    /** tid → (group name, switches). */
    private final Map<String, Sample> threads;

    private record Sample(String group, long switches) {}

    private ThreadSwitches(Map<String, Sample> threads) {
        this.threads = threads;
    }

    /** Whether per-thread counters can be read here ({@code /proc}, i.e. Linux). */
    public static boolean available() {
        return Files.isDirectory(TASKS);
    }

    /** The switches of every thread now (empty without {@code /proc}). */
    public static ThreadSwitches snapshot() {
        Map<String, Sample> m = new HashMap<>();
        ThreadStats.threads().forEach((tid, t) -> m.put(tid, new Sample(t.group(), t.switches())));
        return new ThreadSwitches(m);
    }

    /** Switches since {@code before} of the threads whose group {@code counted} accepts. */
    public long since(ThreadSwitches before, Predicate<String> counted) {
        long sum = 0;
        for (Map.Entry<String, Sample> e : threads.entrySet()) {
            Sample now = e.getValue();
            if (!counted.test(now.group())) {
                continue;
            }
            Sample then = before.threads.get(e.getKey());
            sum += then == null || !then.group().equals(now.group()) ? now.switches()
                    : Math.max(0, now.switches() - then.switches());
        }
        return sum;
    }

}
