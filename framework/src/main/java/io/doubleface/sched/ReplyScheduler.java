package io.doubleface.sched;

import io.doubleface.api.Internal;
import io.doubleface.internal.loop.LoopStats;
import io.netty.channel.SingleThreadEventLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DoubleFace reply scheduler of one event loop.
 *
 * <p>Scheduling: during a loop iteration, shard replies are decoded as their sockets become
 * readable, but not processed: {@link #enqueue} parks them in this loop's batch. The first
 * enqueue of an iteration registers {@link #run()} as a tail task
 * ({@link SingleThreadEventLoop#executeAfterEventLoopIteration}), which Netty runs after the
 * iteration's I/O and tasks. The tail task asks the {@link ReplyOrder} for an order and
 * runs {@code onReply} (and merge, for a request's last reply) in that order.
 *
 * <pre>
 *   epoll_wait ─▶ read upstream (plan, send)  read shard replies ─▶ enqueue
 *              ─▶ run tasks ─▶ tail task: policy.order(batch) ─▶ onReply… merge… respond
 * </pre>
 *
 * <p>This gives the order the paper obtains by reordering selected keys inside a patched Netty,
 * without patching Netty: reading stays in epoll order, processing follows the policy.
 *
 * <p>Threading: loop-confined. Every method must be called on {@link #loop}.
 */
@Internal
public final class ReplyScheduler implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(ReplyScheduler.class);

    /** Most replies kept for reuse per loop: {@value}. */
    static final int MAX_POOLED = 4096;

    private final SingleThreadEventLoop loop;
    private final ReplyOrder policy;
    private final LoopStats stats;
    private PendingReply[] batch = new PendingReply[64];
    private PendingReply[] spare = new PendingReply[64];
    private PendingReply[] ordered = new PendingReply[64];
    private PendingReply[] free = new PendingReply[64];
    private int size;
    private int freeCount;
    private boolean scheduled;

    /**
     * @param stats counters to record batch sizes in, or {@code null}
     */
    public ReplyScheduler(SingleThreadEventLoop loop, ReplyOrder policy, LoopStats stats) {
        this.loop = loop;
        this.policy = policy;
        this.stats = stats;
    }

    public ReplyOrder order() {
        return policy;
    }

    /** Parks a reply until the end of this iteration; takes ownership of {@code payload}. */
    public void enqueue(ReplyOwner owner, int call, Object payload) {
        assert loop.inEventLoop();
        if (size == batch.length) {
            batch = java.util.Arrays.copyOf(batch, size * 2);
        }
        PendingReply r;
        if (freeCount > 0) {
            r = free[--freeCount];
            free[freeCount] = null;
            r.owner = owner;
            r.call = call;
            r.payload = payload;
        } else {
            r = new PendingReply(owner, call, payload);
        }
        batch[size++] = r;
        if (!scheduled) {
            scheduled = true;
            loop.executeAfterEventLoopIteration(this);
        }
    }

    /** The tail task: processes the batch in policy order. */
    @Override
    public void run() {
        scheduled = false;
        int n = size;
        if (n == 0) {
            return;
        }
        // Swap batches: replies that arrive while this batch is processed (a synchronous failure,
        // say) go to a fresh batch and a fresh tail task.
        PendingReply[] work = batch;
        batch = spare.length >= work.length ? spare : new PendingReply[work.length];
        spare = work;
        size = 0;
        if (ordered.length < n) {
            ordered = new PendingReply[work.length];
        }
        PendingReply[] out = ordered;
        policy.order(work, n, out);
        if (stats != null) {
            stats.recordBatch(n);
        }
        for (int i = 0; i < n; i++) {
            PendingReply r = out[i];
            out[i] = null;
            work[i] = null;
            ReplyOwner owner = r.owner;
            int call = r.call;
            Object payload = r.payload;
            r.owner = null;
            r.payload = null;
            r.nextInGroup = null;
            recycle(r);
            try {
                owner.processScheduled(call, payload);
            } catch (Throwable t) {
                // One request's failure must not strand the rest of the batch (and their buffers).
                log.error("processing a scheduled reply failed", t);
            }
        }
    }

    /**
     * Keeps {@code r} for the next enqueue. The pool grows with the batches (up to
     * {@link #MAX_POOLED} entries, ~32 B each), so a loop whose batches hold hundreds of replies
     * (fanout 20 at tens of thousands of requests per second) stops allocating one per reply.
     */
    private void recycle(PendingReply r) {
        if (freeCount == free.length) {
            if (free.length >= MAX_POOLED) {
                return;
            }
            free = java.util.Arrays.copyOf(free, free.length * 2);
        }
        free[freeCount++] = r;
    }

    /** Processed replies kept for reuse (for tests). */
    int pooled() {
        return freeCount;
    }

    /** Replies waiting for the tail task (for tests and stats). */
    public int pending() {
        return size;
    }
}
