package io.doubleface.tune;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * μTune's event-based load monitor, done right: a ring buffer of the last N arrival timestamps,
 * and a rate estimate that a few outlying gaps cannot move.
 *
 * <h2>Estimate</h2>
 *
 * From the last N timestamps (sorted: several loops write concurrently) come N-1 inter-arrival
 * gaps. The estimate is {@code ln 2 / median(gap)}: the median of exponential gaps (Poisson
 * arrivals, which is what the load generator offers and what profiles are trained with) is
 * {@code ln 2 / rate}. A median is robust: a burst of fewer than N/2 back-to-back arrivals, or
 * fewer than N/2 long pauses, leaves it where it was; and a real step is seen after about N/2
 * arrivals at the new rate, in either direction. (μTune sorted a freshly zeroed array as its
 * "median".) The estimate describes the last N arrivals, so it does not decay
 * between arrivals — which would make it flicker after a step down, a new arrival putting it
 * back up each time; only after {@value #IDLE_MILLIS} ms without any arrival is it capped by
 * {@code (N-1) / silence}, so that a stopped load reads as (nearly) zero. With periodic (not
 * Poisson) arrivals the estimate reads {@code ln 2} = 0.69 of the true rate.
 *
 * <h2>Concurrency</h2>
 *
 * {@link #arrival}: one atomic increment of the sequence and one ordered store into the ring (a
 * power of two ≥ N slots); no lock, no allocation. {@link #rate}: one reader thread, which copies
 * the last N slots into preallocated scratch arrays. A writer that has taken a sequence number
 * but not stored yet leaves a slot from the previous lap: one stale timestamp, one outlying gap,
 * which the median ignores.
 */
public final class RingBufferDetector implements LoadDetector {

    /** Default number of timestamps: {@value}. */
    public static final int DEFAULT_SIZE = 16;
    /** Smallest ring accepted: {@value} timestamps (two gaps). */
    public static final int MIN_SIZE = 3;
    /** Largest ring accepted: {@value} timestamps. */
    public static final int MAX_SIZE = 4096;
    /** Silence after which the estimate decays: {@value} ms. */
    public static final long IDLE_MILLIS = 1000;

    private static final double LN2 = Math.log(2);
    private static final VarHandle SEQ;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

    static {
        try {
            SEQ = MethodHandles.lookup().findVarHandle(RingBufferDetector.class, "seq", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int size;
    private final int mask;
    private final long[] ring;
    // padding keeps the hot sequence off the cache line of the (read-mostly) fields above
    @SuppressWarnings("unused")
    private long p1, p2, p3, p4, p5, p6, p7;
    @SuppressWarnings("unused") // via SEQ
    private volatile long seq;
    @SuppressWarnings("unused")
    private long q1, q2, q3, q4, q5, q6, q7;

    // reader-confined scratch
    private final long[] times;
    private final long[] gaps;

    /**
     * @param size N, the number of arrivals the estimate looks at ({@value #MIN_SIZE}..{@value #MAX_SIZE})
     */
    public RingBufferDetector(int size) {
        if (size < MIN_SIZE || size > MAX_SIZE) {
            throw new IllegalArgumentException("ring size: " + size + " (expected: " + MIN_SIZE + ".." + MAX_SIZE + ")");
        }
        this.size = size;
        int cap = Integer.highestOneBit(size - 1) << 1;
        this.mask = cap - 1;
        this.ring = new long[cap];
        this.times = new long[size];
        this.gaps = new long[size - 1];
    }

    /** N. */
    public int size() {
        return size;
    }

    @Override
    public void arrival(long nanoTime) {
        long s = (long) SEQ.getAndAdd(this, 1L);
        SLOTS.setRelease(ring, (int) (s & mask), nanoTime);
    }

    /** Arrivals recorded so far. */
    public long arrivals() {
        return (long) SEQ.getAcquire(this);
    }

    @Override
    public double rate(long nowNanos) {
        long s = (long) SEQ.getAcquire(this);
        if (s < size) {
            return 0; // not enough arrivals for an estimate yet
        }
        for (int i = 0; i < size; i++) {
            times[i] = (long) SLOTS.getAcquire(ring, (int) ((s - size + i) & mask));
        }
        Arrays.sort(times);
        for (int i = 0; i < size - 1; i++) {
            gaps[i] = times[i + 1] - times[i];
        }
        Arrays.sort(gaps);
        int n = gaps.length;
        double median = (n & 1) == 1 ? gaps[n / 2] : (gaps[n / 2 - 1] + gaps[n / 2]) / 2.0;
        double byMedian = LN2 * 1e9 / Math.max(median, 1.0); // same-nanosecond arrivals: as fast as we can tell
        long silence = nowNanos - times[size - 1];
        double r = silence >= IDLE_MILLIS * 1_000_000 ? Math.min(byMedian, (size - 1) * 1e9 / silence) : byMedian;
        return r;
    }

    @Override
    public String describe() {
        return "ring-" + size;
    }
}
