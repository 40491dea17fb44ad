package io.doubleface.sched;

/**
 * A shard reply decoded during a loop iteration and waiting for the end-of-iteration tail task.
 * Loop-confined; pooled per loop by {@link ReplyScheduler}.
 */
public final class PendingReply {

    ReplyOwner owner;
    int call;
    Object payload;
    PendingReply nextInGroup;

    /** For policies and tests: a reply of {@code owner} to call {@code call} (payload may be null in tests). */
    public PendingReply(ReplyOwner owner, int call, Object payload) {
        this.owner = owner;
        this.call = call;
        this.payload = payload;
    }

    public ReplyOwner owner() {
        return owner;
    }

    public int call() {
        return call;
    }

    public Object payload() {
        return payload;
    }
}
