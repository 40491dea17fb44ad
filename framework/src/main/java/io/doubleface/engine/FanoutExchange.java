package io.doubleface.engine;

import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.ShardRequest;
import io.doubleface.driver.ShardException;
import io.doubleface.sched.ReplyOwner;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One upstream request in flight: its plan, its replies, and the guarantee that it completes
 * exactly once — with the merged response, a shard failure, or the deadline, whichever comes
 * first.
 *
 * <p>Concurrency: the plan is built by one thread before any call is sent. Each processed reply
 * is written to its own slot by the thread that ran {@code onReply}, then {@code remaining} is
 * decremented atomically; the thread that takes it to zero has seen every slot (the decrement
 * chain is a happens-before chain) and merges. {@code finished} is a CAS flag that lets exactly
 * one of merge, failure and deadline answer the client; later replies are released and dropped.
 * Under DoubleFace all of this happens on one thread and the atomics are uncontended.
 *
 * @param <Q> request
 * @param <P> processed reply
 * @param <R> response
 */
public final class FanoutExchange<Q, P, R> extends ReplyOwner implements FanoutPlan {

    /** Most calls one request may plan: {@value}. */
    public static final int MAX_FANOUT = 1024;

    private static final VarHandle REMAINING;
    private static final VarHandle FINISHED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            REMAINING = l.findVarHandle(FanoutExchange.class, "remaining", int.class);
            FINISHED = l.findVarHandle(FanoutExchange.class, "finished", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final FanoutService<Q, P, R> service;
    private final Q request;
    private final EventLoop upstreamLoop;
    private final ResponseSink<R> sink;
    private final int shardCount;
    private final long startNanos;
    private final long deadlineNanos;
    private final Runnable onFinish;

    private int calls;
    private int[] shards = new int[8];
    private ShardRequest[] requests = new ShardRequest[8];
    private Object[] processed;

    @SuppressWarnings("unused") // via REMAINING
    private volatile int remaining;
    @SuppressWarnings("unused") // via FINISHED
    private volatile int finished;
    private ScheduledFuture<?> deadlineTimer;

    /**
     * @param upstreamLoop the loop of the upstream connection (deadline timer runs there)
     * @param deadlineNanos the time budget, from now
     * @param onFinish run once when the exchange finishes, on the finishing thread (counters)
     */
    public FanoutExchange(FanoutService<Q, P, R> service, Q request, EventLoop upstreamLoop, ResponseSink<R> sink,
            int shardCount, long deadlineNanos, Runnable onFinish) {
        this.service = service;
        this.request = request;
        this.upstreamLoop = upstreamLoop;
        this.sink = sink;
        this.shardCount = shardCount;
        this.startNanos = System.nanoTime();
        this.deadlineNanos = deadlineNanos;
        this.onFinish = onFinish;
    }

    // ---- plan ----------------------------------------------------------------------------------

    @Override
    public int call(int shard, ShardRequest request) {
        if (shard < 0 || shard >= shardCount) {
            throw new IllegalArgumentException("shard: " + shard + " (expected: 0.." + (shardCount - 1) + ")");
        }
        if (request == null) {
            throw new IllegalArgumentException("request: null");
        }
        if (calls == MAX_FANOUT) {
            throw new IllegalArgumentException("fanout: more than " + MAX_FANOUT + " calls");
        }
        if (calls == shards.length) {
            shards = Arrays.copyOf(shards, calls * 2);
            requests = Arrays.copyOf(requests, calls * 2);
        }
        shards[calls] = shard;
        requests[calls] = request;
        return calls++;
    }

    @Override
    public int shardCount() {
        return shardCount;
    }

    /**
     * Runs the service's plan. Called once, by the thread the model runs plan on, before any
     * call is sent.
     *
     * @return {@code false} if planning failed (the client has been answered)
     */
    public boolean plan() {
        try {
            service.plan(request, this);
        } catch (RuntimeException e) {
            finish(Outcome.INTERNAL_ERROR, "plan failed: " + e);
            return false;
        }
        if (calls == 0) {
            finish(Outcome.INTERNAL_ERROR, "plan added no shard calls");
            return false;
        }
        processed = new Object[calls];
        REMAINING.setRelease(this, calls);
        return true;
    }

    /**
     * Arms the deadline timer. Called by the dispatcher on the upstream loop when the request is
     * admitted, so the deadline also covers time spent queued for a thread.
     */
    public void armDeadline() {
        assert upstreamLoop.inEventLoop();
        deadlineTimer = upstreamLoop.schedule(this::onDeadline, deadlineNanos, TimeUnit.NANOSECONDS);
    }

    // ---- replies -------------------------------------------------------------------------------

    /**
     * Runs the service's {@code onReply} for call {@code call} and releases {@code payload}.
     *
     * @return {@code true} if this was the last outstanding reply: the caller must now run
     *     {@link #mergeAndComplete()} (on the thread its model prescribes)
     */
    public boolean processReply(int call, ByteBuf payload) {
        try {
            if (finished != 0) {
                return false;
            }
            processed[call] = service.onReply(request, call, payload);
        } catch (RuntimeException e) {
            finish(Outcome.INTERNAL_ERROR, "onReply failed for call " + call + ": " + e);
            return false;
        } finally {
            payload.release();
        }
        return (int) REMAINING.getAndAdd(this, -1) == 1;
    }

    /** Merges the processed replies and answers the client (unless it was answered already). */
    @SuppressWarnings("unchecked")
    public void mergeAndComplete() {
        if (!FINISHED.compareAndSet(this, 0, 1)) {
            return;
        }
        R response;
        try {
            response = service.merge(request, (List<P>) Arrays.asList(processed));
        } catch (RuntimeException e) {
            processed = null;
            done();
            sink.fail(Outcome.INTERNAL_ERROR, "merge failed: " + e);
            return;
        }
        processed = null;
        done();
        sink.complete(response);
    }

    /** A shard call failed: answer 503, or 504 for a timeout, unless already answered. */
    public void fail(int call, ShardException cause) {
        Outcome o = cause.kind() == ShardException.Kind.TIMEOUT ? Outcome.TIMEOUT : Outcome.UNAVAILABLE;
        finish(o, cause.getMessage());
    }

    /** Answers the client with a failure unless it was answered already. */
    public void finish(Outcome outcome, String reason) {
        if (FINISHED.compareAndSet(this, 0, 1)) {
            processed = null;
            done();
            sink.fail(outcome, reason);
        }
    }

    private void onDeadline() {
        deadlineTimer = null;
        int left = (int) REMAINING.getAcquire(this);
        finish(Outcome.TIMEOUT, "deadline of " + TimeUnit.NANOSECONDS.toMillis(deadlineNanos) + " ms exceeded with "
                + left + " of " + calls + " shard replies missing");
    }

    private void done() {
        ScheduledFuture<?> t = deadlineTimer;
        if (t != null && upstreamLoop.inEventLoop()) {
            // Off-loop finishers leave the timer to fire as a no-op: cancelling it from another
            // thread would cost a cross-thread task per request.
            t.cancel(false);
            deadlineTimer = null;
        }
        if (onFinish != null) {
            onFinish.run();
        }
    }

    // ---- accessors for models -----------------------------------------------------------------

    /** Number of planned calls. */
    public int calls() {
        return calls;
    }

    /** Shard of call {@code i}. */
    public int shard(int i) {
        return shards[i];
    }

    /** Request of call {@code i}. */
    public ShardRequest request(int i) {
        return requests[i];
    }

    /** The loop of the upstream connection. */
    public EventLoop upstreamLoop() {
        return upstreamLoop;
    }

    /** Nanoseconds left before the deadline (may be negative). */
    public long nanosLeft() {
        return deadlineNanos - (System.nanoTime() - startNanos);
    }

    /** Whether the client has been answered. */
    public boolean isFinished() {
        return finished != 0;
    }

    // ---- DoubleFace scheduler hooks (loop-confined) --------------------------------------------

    @Override
    public int outstanding() {
        return (int) REMAINING.getOpaque(this);
    }

    @Override
    protected void processScheduled(int call, ByteBuf payload) {
        if (processReply(call, payload)) {
            mergeAndComplete();
        }
    }
}
