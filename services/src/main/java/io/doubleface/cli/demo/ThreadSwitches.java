package io.doubleface.cli.demo;

import java.io.IOException;
import java.nio.file.DirectoryStream;
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
        if (!available()) {
            return new ThreadSwitches(m);
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                try {
                    String comm = Files.readString(task.resolve("comm")).strip();
                    long n = 0;
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                            n += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                        }
                    }
                    m.put(task.getFileName().toString(), new Sample(groupOf(comm), n));
                } catch (IOException | RuntimeException e) {
                    // the thread exited while we read it: skip
                }
            }
        } catch (IOException e) {
            return new ThreadSwitches(Map.of());
        }
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

    /** {@code shared-12} → {@code shared} (as {@code io.doubleface.loop.ThreadStats} groups threads). */
    static String groupOf(String comm) {
        int dash = comm.lastIndexOf('-');
        if (dash > 0 && dash < comm.length() - 1) {
            for (int i = dash + 1; i < comm.length(); i++) {
                if (!Character.isDigit(comm.charAt(i))) {
                    return comm;
                }
            }
            return comm.substring(0, dash);
        }
        return comm;
    }
}
