package io.doubleface.internal.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The points in time ({@link System#nanoTime()}) of one traced request's stages, for
 * {@link StageStats}: made by the exchange only for the requests stage tracing samples, so that
 * the others carry none of them. Each point is of round 0; 0 means not reached. The first arrival
 * and the first reply may be stamped by several threads at once (the first stamp wins); the other
 * points by the one thread running that step.
 */
final class StageClock {

    private static final VarHandle FIRST_ARRIVAL;
    private static final VarHandle FIRST_REPLY;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            FIRST_ARRIVAL = l.findVarHandle(StageClock.class, "firstArrival", long.class);
            FIRST_REPLY = l.findVarHandle(StageClock.class, "firstReply", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final StageStats stats;
    long planStart;
    long planEnd;
    @SuppressWarnings("unused") // via FIRST_ARRIVAL
    private volatile long firstArrival;
    @SuppressWarnings("unused") // via FIRST_REPLY
    private volatile long firstReply;
    long lastReply;
    long mergeEnd;

    StageClock(StageStats stats) {
        this.stats = stats;
    }

    /** A reply (or a failure) reached the mid-tier at {@code now}: the first one's time is kept. */
    void arrived(long now) {
        FIRST_ARRIVAL.compareAndSet(this, 0L, now);
    }

    /** A reply's handler (or a failure) was counted at {@code now}: the first one's time is kept. */
    void replied(long now) {
        FIRST_REPLY.compareAndSet(this, 0L, now);
    }

    /** Records the stages into the server's {@link StageStats}, under configuration {@code config}. */
    void record(String config, long admitted) {
        stats.record(config, admitted, planStart, planEnd, (long) FIRST_ARRIVAL.getAcquire(this),
                (long) FIRST_REPLY.getAcquire(this), lastReply, mergeEnd, System.nanoTime());
    }
}
