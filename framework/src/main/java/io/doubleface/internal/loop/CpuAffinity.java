package io.doubleface.internal.loop;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Platform;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Pins threads to CPUs with Linux {@code sched_setaffinity(2)}, called through JNA: the
 * {@code --pin-io-threads} knob.
 *
 * <p>Why JNA and not the Java FFM API: the project targets Java 21, where {@code java.lang.foreign}
 * is a preview API (final only in 22); JNA is small, has no other dependency and has been kept up
 * for two decades. The thread-affinity libraries (OpenHFT {@code affinity}) wrap the same call on
 * top of JNA and add CPU-layout and lock-file machinery this knob does not need.
 *
 * <p>Threading: every method acts on, or reads, the calling thread only (pid {@code 0} of the
 * system call), so a loop pins itself from a task run on it.
 */
public final class CpuAffinity {

    /** CPUs a mask can name: {@value} (the kernel's {@code cpu_set_t} size in glibc). */
    static final int MAX_CPUS = 1024;

    private CpuAffinity() {}

    private interface LibC extends Library {
        int sched_setaffinity(int pid, NativeLong cpusetsize, long[] mask) throws LastErrorException;

        int sched_getaffinity(int pid, NativeLong cpusetsize, long[] mask) throws LastErrorException;
    }

    /** Loaded on first use, so a server that pins nothing never loads JNA. */
    private static final class Holder {
        static final LibC LIBC = Native.load(Platform.C_LIBRARY_NAME, LibC.class);
    }

    /**
     * Reads a CPU list as Linux prints them: {@code 0,1}, {@code 0-3}, {@code 0-1,4}.
     *
     * @param spec the list
     * @return the CPUs in the order given (a range ascending), without repeats
     * @throws IllegalArgumentException if {@code spec} is not such a list, or names a CPU {@code >=}
     *     {@value #MAX_CPUS}
     */
    public static List<Integer> parseList(String spec) {
        String expected = " (expected: a CPU list such as 0,1 or 0-3 or 0-1,4)";
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("CPU list: '" + spec + "'" + expected);
        }
        List<Integer> cpus = new ArrayList<>();
        BitSet seen = new BitSet();
        for (String part : spec.trim().split(",", -1)) {
            String[] ends = part.trim().split("-", -1);
            int lo;
            int hi;
            try {
                lo = Integer.parseInt(ends[0].trim());
                hi = ends.length == 2 ? Integer.parseInt(ends[1].trim()) : lo;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("CPU list: '" + spec + "'" + expected, e);
            }
            if (ends.length > 2 || lo < 0 || hi < lo || hi >= MAX_CPUS) {
                throw new IllegalArgumentException("CPU list: '" + spec + "': '" + part + "'" + expected
                        + (hi >= MAX_CPUS ? ", CPUs below " + MAX_CPUS : ""));
            }
            for (int c = lo; c <= hi; c++) {
                if (!seen.get(c)) {
                    seen.set(c);
                    cpus.add(c);
                }
            }
        }
        return List.copyOf(cpus);
    }

    /** {@return a CPU list in the form {@link #parseList} reads, ranges folded: {@code 0-2,5}} */
    public static String format(BitSet cpus) {
        StringBuilder sb = new StringBuilder();
        for (int c = cpus.nextSetBit(0); c >= 0; ) {
            int end = cpus.nextClearBit(c) - 1;
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            sb.append(c);
            if (end > c) {
                sb.append('-').append(end);
            }
            c = cpus.nextSetBit(end + 1);
        }
        return sb.toString();
    }

    /**
     * Restricts the calling thread to {@code cpus}.
     *
     * @param cpus the CPUs it may run on, at least one
     * @throws UnsupportedOperationException if this is not Linux
     * @throws IllegalArgumentException if the kernel refuses the set (e.g. none of the CPUs is
     *     online or in the process's cpuset), with the errno
     */
    public static void setCurrentThread(BitSet cpus) {
        requireLinux();
        if (cpus.isEmpty() || cpus.length() > MAX_CPUS) {
            throw new IllegalArgumentException("CPU set: " + cpus + " (expected: 1 or more CPUs below " + MAX_CPUS + ")");
        }
        long[] mask = new long[MAX_CPUS / 64];
        long[] words = cpus.toLongArray();
        System.arraycopy(words, 0, mask, 0, words.length);
        try {
            Holder.LIBC.sched_setaffinity(0, new NativeLong(mask.length * 8L), mask);
        } catch (LastErrorException e) {
            throw new IllegalArgumentException("cannot pin thread " + Thread.currentThread().getName() + " to CPUs "
                    + format(cpus) + ": sched_setaffinity errno " + e.getErrorCode()
                    + " (22 = none of them online or allowed to this process)", e);
        }
    }

    /**
     * {@return the CPUs the calling thread may run on, as the kernel holds them}
     *
     * @throws UnsupportedOperationException if this is not Linux
     */
    public static BitSet currentThread() {
        requireLinux();
        long[] mask = new long[MAX_CPUS / 64];
        Holder.LIBC.sched_getaffinity(0, new NativeLong(mask.length * 8L), mask);
        return BitSet.valueOf(mask);
    }

    /**
     * {@return the {@code Cpus_allowed_list} of the calling thread in {@code /proc/thread-self/status}}
     * A reading independent of the system call, for tests and diagnostics.
     *
     * @throws IOException if the file cannot be read (not Linux)
     */
    public static String procAllowedList() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/thread-self/status"))) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring("Cpus_allowed_list:".length()).trim();
            }
        }
        throw new IOException("/proc/thread-self/status has no Cpus_allowed_list");
    }

    private static void requireLinux() {
        if (!Platform.isLinux()) {
            throw new UnsupportedOperationException("CPU pinning needs Linux sched_setaffinity (this is "
                    + System.getProperty("os.name") + ")");
        }
    }
}
