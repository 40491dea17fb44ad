package io.doubleface.internal.loop;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Per-thread-group context switches and CPU time of this process, read from
 * {@code /proc/self/task/<tid>/status} and {@code stat}. Threads are grouped by their name with
 * the trailing {@code -<n>} removed, so {@code shared-0} and {@code shared-1} count as
 * {@code shared}. On systems without {@code /proc} the snapshot is empty.
 *
 * <p>Stateless; each call reads {@code /proc} afresh (a few hundred microseconds: admin path only).
 */
public final class ThreadStats {

    private static final Path TASKS = Path.of("/proc/self/task");
    private static final long CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

    private ThreadStats() {}

    /** Counters of one thread group. */
    public record Group(String name, int threads, long voluntarySwitches, long involuntarySwitches, long cpuMillis) {
        /** Both kinds of context switches. */
        public long switches() {
            return voluntarySwitches + involuntarySwitches;
        }
    }

    /**
     * Counters of one live thread.
     *
     * @param tid the kernel thread id
     * @param name the thread's name as the kernel keeps it ({@code comm}, at most 15 characters)
     * @param group {@link #groupOf(String) groupOf(name)}
     */
    public record Sample(String tid, String name, String group, long voluntarySwitches, long involuntarySwitches,
            long cpuMillis) {
        /** Both kinds of context switches. */
        public long switches() {
            return voluntarySwitches + involuntarySwitches;
        }
    }

    /**
     * Counters of every live thread, by kernel thread id. For deltas over a run, compare per thread
     * (threads come and go; a per-group sum can shrink when a pool thread exits).
     */
    public static Map<String, Sample> threads() {
        return threads(TASKS);
    }

    /**
     * Counters of every live thread of another process on this machine ({@code /proc/PID/task}),
     * e.g. a mid-tier an experiment runner started; empty if the process is gone or there is no
     * {@code /proc}.
     */
    public static Map<String, Sample> threadsOf(long pid) {
        return threads(Path.of("/proc", Long.toString(pid), "task"));
    }

    private static Map<String, Sample> threads(Path taskDir) {
        Map<String, Sample> out = new TreeMap<>();
        if (!Files.isDirectory(taskDir)) {
            return out;
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(taskDir)) {
            for (Path task : tasks) {
                try {
                    String comm = Files.readString(task.resolve("comm")).strip();
                    long vol = 0;
                    long invol = 0;
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            vol = Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                        } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                            invol = Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                        }
                    }
                    String stat = Files.readString(task.resolve("stat"));
                    // fields after the ")" of comm: state is field 3; utime 14, stime 15
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    String tid = task.getFileName().toString();
                    out.put(tid, new Sample(tid, comm, groupOf(comm), vol, invol,
                            ticks * 1000 / CLOCK_TICKS_PER_SECOND));
                } catch (IOException | RuntimeException e) {
                    // the thread exited while we read it: skip
                }
            }
        } catch (IOException e) {
            return Map.of();
        }
        return out;
    }

    /** Counters per thread group (live threads only), sorted by group name. */
    public static Map<String, Group> snapshot() {
        Map<String, long[]> acc = new TreeMap<>();
        for (Sample t : threads().values()) {
            long[] a = acc.computeIfAbsent(t.group(), k -> new long[4]);
            a[0]++;
            a[1] += t.voluntarySwitches();
            a[2] += t.involuntarySwitches();
            a[3] += t.cpuMillis();
        }
        Map<String, Group> out = new TreeMap<>();
        acc.forEach((k, a) -> out.put(k, new Group(k, (int) a[0], a[1], a[2], a[3])));
        return out;
    }

    /** {@code shared-12} → {@code shared}; names without a numeric suffix stay as they are. */
    public static String groupOf(String comm) {
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
