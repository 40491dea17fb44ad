package io.doubleface.sched;

/**
 * The request a {@link PendingReply} belongs to, as the reply orders see it.
 *
 * <p>Threading: the scratch fields are used only by the loop that owns the request's batch; they
 * need no synchronisation because under the DoubleFace model a request never changes thread.
 */
public abstract class ReplyOwner {

    // Scratch state of the policy for the batch being ordered (loop-confined).
    int mark;
    int batchCount;
    int firstArrival;
    PendingReply head;
    PendingReply tail;

    /** Replies of this request not yet processed (including those in the current batch). */
    public abstract int outstanding();

    /**
     * Processes one scheduled reply (the service's {@code onReply}, then merge if it was the last);
     * takes ownership of {@code payload} (released if reference-counted). Called by {@link ReplyScheduler} on the owning loop.
     */
    protected abstract void processScheduled(int call, Object payload);
}
