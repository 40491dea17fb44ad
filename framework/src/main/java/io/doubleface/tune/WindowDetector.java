package io.doubleface.tune;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The baseline load monitor (time-window-based detection, as FM and TBD in μTune's comparison):
 * arrivals are counted in fixed windows of W nanoseconds (default {@value #DEFAULT_WINDOW_MS} ms),
 * and the estimate is the count of the last complete window divided by W. A step is therefore
 * seen between W and 2W after it happens, whatever the rate.
 *
 * <p>Concurrency: four slots, each one {@code long} packing the window number (high bits) and its
 * count (low {@value #COUNT_BITS} bits); an arrival CASes its slot — incrementing the count, or
 * restarting the slot for a new window. Lock-free, allocation-free. {@link #rate}: one reader.
 * An arrival that comes late (its window already recycled) is dropped. Window numbers are
 * {@code nanoTime / W}, which fit the slot's {@value #BITS_FOR_WINDOW} bits for any
 * {@link System#nanoTime()} on Linux (time since boot).
 */
public final class WindowDetector implements LoadDetector {

    /** Default window: {@value} ms. */
    public static final long DEFAULT_WINDOW_MS = 5;
    /** Bits of a slot holding the count: {@value}. */
    static final int COUNT_BITS = 24;
    static final int BITS_FOR_WINDOW = 64 - COUNT_BITS;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final int SLOTS_N = 4;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

    private final long windowNanos;
    private final long[] slots = new long[SLOTS_N * 8]; // one slot per 64-byte line

    /**
     * @param windowNanos W, at least 100 µs
     */
    public WindowDetector(long windowNanos) {
        if (windowNanos < 100_000 || windowNanos > 10_000_000_000L) {
            throw new IllegalArgumentException("window: " + windowNanos + " ns (expected: 100 µs .. 10 s)");
        }
        this.windowNanos = windowNanos;
        for (int i = 0; i < SLOTS_N; i++) {
            slots[i * 8] = Long.MIN_VALUE; // a window older than any real one: empty
        }
    }

    public long windowNanos() {
        return windowNanos;
    }

    private long window(long nanoTime) {
        return Math.floorDiv(nanoTime, windowNanos);
    }

    @Override
    public void arrival(long nanoTime) {
        long w = window(nanoTime);
        int i = (int) (w & (SLOTS_N - 1)) * 8;
        long tag = w << COUNT_BITS;
        for (;;) {
            long v = (long) SLOTS.getVolatile(slots, i);
            long vw = v >> COUNT_BITS;
            long next;
            if (vw == w) {
                if ((v & COUNT_MASK) == COUNT_MASK) {
                    return; // saturated count; more than 16M arrivals in one window
                }
                next = v + 1;
            } else if (vw < w) {
                next = tag | 1;
            } else {
                return; // late arrival: its window has been recycled
            }
            if (SLOTS.compareAndSet(slots, i, v, next)) {
                return;
            }
        }
    }

    @Override
    public double rate(long nowNanos) {
        long last = window(nowNanos) - 1;
        long v = (long) SLOTS.getVolatile(slots, (int) (last & (SLOTS_N - 1)) * 8);
        long count = (v >> COUNT_BITS) == last ? v & COUNT_MASK : 0;
        return count * 1e9 / windowNanos;
    }

    @Override
    public String describe() {
        return windowNanos % 1_000_000 == 0 ? "window-" + windowNanos / 1_000_000 + "ms" : "window-" + windowNanos + "ns";
    }
}
