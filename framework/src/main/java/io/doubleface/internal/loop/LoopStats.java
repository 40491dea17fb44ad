package io.doubleface.internal.loop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Counters of one event loop: iterations of its I/O handler (≈ {@code epoll_wait} calls),
 * iterations that were allowed to block (wake-ups), I/O events handled, and DoubleFace tail batches.
 *
 * <p>Threading: single writer — only the loop's own thread records; any thread may read. Writes
 * are opaque stores (no fence on the hot path); readers see a recent, possibly slightly stale value.
 */
public final class LoopStats {

    private static final VarHandle ITERATIONS;
    private static final VarHandle WAKEUPS;
    private static final VarHandle EVENTS;
    private static final VarHandle BATCHES;
    private static final VarHandle BATCHED_REPLIES;
    private static final VarHandle MAX_BATCH;
    private static final VarHandle BUSY;
    private static final VarHandle IDLE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            ITERATIONS = l.findVarHandle(LoopStats.class, "iterations", long.class);
            WAKEUPS = l.findVarHandle(LoopStats.class, "wakeups", long.class);
            EVENTS = l.findVarHandle(LoopStats.class, "events", long.class);
            BATCHES = l.findVarHandle(LoopStats.class, "batches", long.class);
            BATCHED_REPLIES = l.findVarHandle(LoopStats.class, "batchedReplies", long.class);
            MAX_BATCH = l.findVarHandle(LoopStats.class, "maxBatch", long.class);
            BUSY = l.findVarHandle(LoopStats.class, "busyNanos", long.class);
            IDLE = l.findVarHandle(LoopStats.class, "idleNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    private final String group;
    private long iterations;
    private long wakeups;
    private long events;
    private long batches;
    private long batchedReplies;
    private long maxBatch;
    private long busyNanos;
    private long idleNanos;
    /** Batch-size histogram: bucket b counts batches of size in [2^b, 2^(b+1)). */
    private final long[] batchBuckets = new long[16];

    LoopStats(String group, String name) {
        this.group = group;
        this.name = name;
    }

    /**
     * Loop thread only: one I/O handler iteration that handled {@code ioEvents} events, was busy
     * {@code busy} ns (since the previous iteration ended: tasks, then processing ready I/O) and
     * idle {@code idle} ns (waiting for I/O, blocked or spinning).
     */
    void recordIteration(boolean couldBlock, int ioEvents, long busy, long idle) {
        BUSY.setOpaque(this, busyNanos + busy);
        IDLE.setOpaque(this, idleNanos + idle);
        ITERATIONS.setOpaque(this, iterations + 1);
        if (couldBlock) {
            WAKEUPS.setOpaque(this, wakeups + 1);
        }
        if (ioEvents > 0) {
            EVENTS.setOpaque(this, events + ioEvents);
        }
    }

    /** Loop thread only: the DoubleFace tail task processed a batch of {@code size} replies. */
    public void recordBatch(int size) {
        BATCHES.setOpaque(this, batches + 1);
        BATCHED_REPLIES.setOpaque(this, batchedReplies + size);
        if (size > maxBatch) {
            MAX_BATCH.setOpaque(this, (long) size);
        }
        int b = Math.min(batchBuckets.length - 1, 31 - Integer.numberOfLeadingZeros(Math.max(1, size)));
        batchBuckets[b]++;
    }

    public String name() {
        return name;
    }

    /** The loop group this loop belongs to, e.g. {@code shared}, {@code 2a-backend}. */
    public String group() {
        return group;
    }

    public long iterations() {
        return (long) ITERATIONS.getOpaque(this);
    }

    /** Iterations in which the loop was allowed to block in {@code epoll_wait} (no pending tasks). */
    public long wakeups() {
        return (long) WAKEUPS.getOpaque(this);
    }

    /**
     * Nanoseconds this loop spent busy: processing ready I/O, running tasks and timers — all but
     * {@link #idleNanos}. Counted per iteration when it ends, so a long wait or a long batch shows
     * only once it is over. {@code busy / (busy + idle)} over an interval is the loop's utilization.
     */
    public long busyNanos() {
        return (long) BUSY.getOpaque(this);
    }

    /** Nanoseconds this loop spent waiting for I/O (blocked in {@code epoll_wait} or spinning in the busy-poll wait). */
    public long idleNanos() {
        return (long) IDLE.getOpaque(this);
    }

    public long events() {
        return (long) EVENTS.getOpaque(this);
    }

    public long batches() {
        return (long) BATCHES.getOpaque(this);
    }

    public long batchedReplies() {
        return (long) BATCHED_REPLIES.getOpaque(this);
    }

    public long maxBatch() {
        return (long) MAX_BATCH.getOpaque(this);
    }

    /** A copy of the batch-size histogram (bucket b: sizes in [2^b, 2^(b+1))); racy but monotonic per bucket. */
    public long[] batchHistogram() {
        return batchBuckets.clone();
    }
}
