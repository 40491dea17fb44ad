package io.doubleface.driver.spi;

import io.doubleface.driver.FlushMode;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The flush bookkeeping of one shard connection under a {@link FlushMode}: a driver calls
 * {@link #queued} after each call it queued on the connection, and this flushes at once
 * ({@code per-write}), when the batch is full, or when the batch's timer is up — or answers that
 * the driver's own end-of-iteration flush is to do it ({@code per-iteration}).
 *
 * <p>The timer is armed while any call waits in a batch, and not cancelled when a batch fills
 * early: it then flushes the next partial batch sooner, or nothing. So a steady stream costs one
 * scheduled task per delay, not one per batch, and no call waits longer than the delay, whatever
 * the policy is switched to meanwhile (the timer flushes what waits regardless).
 *
 * <p>Threading: confined to the connection's loop.
 */
public final class FlushBatch {

    private final EventLoop loop;
    private final Runnable flush;
    private final Runnable timeUp = this::timeUp;
    private int count;
    private ScheduledFuture<?> timer;

    /**
     * Bookkeeping for one connection, with no call waiting.
     *
     * @param loop the connection's loop, where the timer runs
     * @param flush writes and flushes what is queued on the connection (it must tolerate nothing
     *     queued, and a connection not yet or no longer connected)
     */
    public FlushBatch(EventLoop loop, Runnable flush) {
        this.loop = Objects.requireNonNull(loop, "loop");
        this.flush = Objects.requireNonNull(flush, "flush");
    }

    /**
     * A call was queued on the connection.
     *
     * @param policy the loop's policy now ({@link LoopFlush#policy()})
     * @return {@code true} if the policy is per iteration: the caller flushes at the end of the
     *     iteration; {@code false} if this has flushed or will flush
     */
    public boolean queued(FlushMode policy) {
        int n = policy.batchSize();
        if (n == 0) {
            return true;
        }
        if (++count >= n) {
            count = 0;
            flush.run(); // per write (n = 1), or a full batch
        } else if (timer == null) {
            timer = loop.schedule(timeUp, policy.maxDelayNanos(), TimeUnit.NANOSECONDS);
        }
        return false;
    }

    /** The connection was flushed (or its queue dropped) by other means: the batch starts afresh. */
    public void reset() {
        count = 0;
    }

    /** Cancels the timer (the connection is closing). */
    public void cancel() {
        count = 0;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void timeUp() {
        timer = null;
        count = 0;
        flush.run();
    }
}
