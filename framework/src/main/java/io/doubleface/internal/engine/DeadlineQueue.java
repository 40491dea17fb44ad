package io.doubleface.internal.engine;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The request deadlines of one event loop, for one deadline length: a FIFO, because requests
 * admitted on one loop with the same deadline length expire in the order they were admitted.
 * One scheduled task per queue (armed for the oldest entry's deadline) replaces one scheduled
 * task per request: adding is an array store, removing a request that finished on the loop is
 * an array store plus popping finished entries off the head — no timer-heap insert and
 * cancel per request (Netty's scheduled-task heap was 3 % of the mid-tier's CPU at fanout 5).
 *
 * <p>A request that finishes off the loop (a model that merges on a worker) is not removed; the
 * sweep meets it at its deadline and skips it, as the cancelled timer of the old scheme was left
 * to fire as a no-op. Finished entries keep no reference to their request (the slot is cleared).
 *
 * <p>Loop-confined: every method runs on {@link #loop}.
 */
final class DeadlineQueue implements Runnable {

    /** Most queues per loop thread (distinct deadline lengths); beyond, requests use a timer of their own. */
    static final int MAX_QUEUES_PER_THREAD = 8;

    private static final FastThreadLocal<DeadlineQueue[]> QUEUES = new FastThreadLocal<>() {
        @Override
        protected DeadlineQueue[] initialValue() {
            return new DeadlineQueue[0];
        }
    };

    private final EventLoop loop;
    private final long lengthNanos;
    private long[] deadlines = new long[64];
    private FanoutExchange<?, ?, ?>[] requests = new FanoutExchange<?, ?, ?>[64];
    private int head;
    private int size;
    /** Ticket of the entry at {@link #head}: tickets count every entry ever added. */
    private long headTicket;
    private ScheduledFuture<?> sweep;

    private DeadlineQueue(EventLoop loop, long lengthNanos) {
        this.loop = loop;
        this.lengthNanos = lengthNanos;
    }

    /**
     * The queue of {@code loop} (the calling thread's) for deadlines of {@code lengthNanos}, or
     * {@code null} when this thread already has {@value #MAX_QUEUES_PER_THREAD} queues of other lengths.
     */
    static DeadlineQueue of(EventLoop loop, long lengthNanos) {
        DeadlineQueue[] qs = QUEUES.get();
        for (DeadlineQueue q : qs) {
            if (q.lengthNanos == lengthNanos && q.loop == loop) {
                return q;
            }
        }
        if (qs.length >= MAX_QUEUES_PER_THREAD) {
            return null;
        }
        DeadlineQueue q = new DeadlineQueue(loop, lengthNanos);
        DeadlineQueue[] more = java.util.Arrays.copyOf(qs, qs.length + 1);
        more[qs.length] = q;
        QUEUES.set(more);
        return q;
    }

    /**
     * Adds {@code ex}, admitted at {@code now}; it expires at {@code now + lengthNanos}.
     *
     * @return its ticket, for {@link #remove}
     */
    long add(FanoutExchange<?, ?, ?> ex, long now) {
        if (size == deadlines.length) {
            grow();
        }
        int i = (head + size) & (deadlines.length - 1);
        deadlines[i] = now + lengthNanos;
        requests[i] = ex;
        size++;
        if (sweep == null) {
            sweep = loop.schedule(this, lengthNanos, TimeUnit.NANOSECONDS);
        }
        return headTicket + size - 1;
    }

    /** The request of {@code ticket} finished: forgets it, and every finished entry at the head. */
    void remove(long ticket) {
        long offset = ticket - headTicket;
        if (offset < 0 || offset >= size) {
            return; // expired and swept already
        }
        int mask = deadlines.length - 1;
        requests[(int) ((head + offset) & mask)] = null;
        while (size > 0 && requests[head] == null) {
            head = (head + 1) & mask;
            size--;
            headTicket++;
        }
    }

    /** The sweep: expires every entry whose deadline has passed, then re-arms for the oldest left. */
    @Override
    public void run() {
        sweep = null;
        int mask = deadlines.length - 1;
        long now = System.nanoTime();
        while (size > 0 && (requests[head] == null || deadlines[head] - now <= 0)) {
            FanoutExchange<?, ?, ?> ex = requests[head];
            requests[head] = null;
            head = (head + 1) & mask;
            size--;
            headTicket++;
            if (ex != null) {
                ex.onDeadline();
            }
            mask = deadlines.length - 1; // onDeadline may answer requests that add nothing, but be safe
        }
        if (size > 0 && sweep == null) {
            sweep = loop.schedule(this, Math.max(0, deadlines[head] - now), TimeUnit.NANOSECONDS);
        }
    }

    /** {@return entries held (finished ones behind an unfinished older one included)} */
    int size() {
        return size;
    }

    private void grow() {
        int n = deadlines.length;
        long[] d = new long[n * 2];
        FanoutExchange<?, ?, ?>[] r = new FanoutExchange<?, ?, ?>[n * 2];
        for (int k = 0; k < size; k++) {
            int i = (head + k) & (n - 1);
            d[k] = deadlines[i];
            r[k] = requests[i];
        }
        deadlines = d;
        requests = r;
        head = 0;
    }
}
