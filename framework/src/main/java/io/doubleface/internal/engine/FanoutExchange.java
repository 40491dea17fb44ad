package io.doubleface.internal.engine;

import io.doubleface.api.Backend;
import io.doubleface.api.Call;
import io.doubleface.api.CallHandler;
import io.doubleface.api.CallRef;
import io.doubleface.api.RequestContext;
import io.doubleface.driver.Command;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.api.RequestFailedException;
import io.doubleface.driver.ShardException;
import io.doubleface.sched.ReplyOwner;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ReferenceCounted;
import io.netty.util.concurrent.ScheduledFuture;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * One upstream request in flight: its rounds of calls, their replies, and the guarantee that it
 * completes exactly once — with the merged response, a failure, or the deadline, whichever comes
 * first.
 *
 * <p>Rounds: {@link #plan()} collects round 0; when every call of a round has an outcome, the
 * thread the model prescribes runs {@link #completeRound()}, which merges; a merge that plans more
 * calls starts the next round on that thread ({@link ThreadingModel#sendRound}). Tags carry the
 * round number (high 16 bits) and the call number (low 16 bits), so a reply can never land in the
 * wrong round.
 *
 * <p>Concurrency: a round's calls are planned by one thread before any is sent. Each reply
 * handler writes its own slot, publishes it with a release store of the slot's status, and
 * decrements {@code remaining}; the thread that takes it to zero has seen every slot (the decrement
 * chain is a happens-before chain). {@code roundState} (collecting → merging) lets exactly one of
 * the last outcome and the deadline merge a round; {@code finished} is a CAS flag that lets exactly
 * one of merge, failure and deadline answer the client; later replies are released and dropped.
 * Under DoubleFace all of this happens on one thread and the atomics are uncontended.
 *
 * <p>Reference-counted processed replies (a handler that returns its {@code ByteBuf} reply, or a
 * retained slice of it) belong to the exchange from the moment they are stored in their slot, and
 * are released once their round is over: after the round's merge returns, or when the request
 * finishes without merging it. A handler still running when its round ends (a late reply under a
 * multi-threaded model, racing the deadline or a failure) releases its own result: the handler
 * publishes {@code owned} and then reads {@code sweptRound}, the round's end publishes
 * {@code sweptRound} and then reads {@code owned}, so at least one of them sees the other, and a
 * compare-and-set of the slot's status from OK to RELEASED lets exactly one of them release it.
 *
 * <p>Services never get the exchange: {@code plan} and {@code merge} get a {@link FanoutPlan} and a
 * {@link Replies} view, a {@link CallHandler} a {@link Call} view, all of them a
 * {@link RequestContext} view — private inner classes over this exchange's state, so a service
 * cannot reach the methods the models drive the request with. The plan, replies and context views
 * are made once per exchange, on first use; a call view per handled reply.
 *
 * <p>Why this class is longer than the project's ~600 lines: the completion protocol above (rounds,
 * outcomes, the deadline, the release of kept replies) shares one set of fields and atomics and is
 * read as one; the service views are inner classes so that they reach that state without widening
 * its access. What stands apart is apart: a round's calls and slots ({@link Round}), a traced
 * request's stage times ({@link StageClock}), a request's spans ({@link RequestTrace}).
 *
 * @param <Q> request
 * @param <P> processed reply
 * @param <R> response
 */
public final class FanoutExchange<Q, P, R> extends ReplyOwner {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FanoutExchange.class);

    /** Most rounds one request may run: {@value}. */
    public static final int MAX_ROUNDS = 64;

    private static final int COLLECTING = 0;
    private static final int MERGING = 1;

    private static final VarHandle REMAINING;
    private static final VarHandle FINISHED;
    private static final VarHandle ROUND_STATE;
    private static final VarHandle OWNED;
    private static final VarHandle SWEPT_ROUND;
    private static final VarHandle STATUS = MethodHandles.arrayElementVarHandle(byte[].class);

    /** The handler of a call planned with a {@link CallRef} and no handler: its result is the reply. */
    private static final Object RAW = new Object();

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            REMAINING = l.findVarHandle(FanoutExchange.class, "remaining", int.class);
            FINISHED = l.findVarHandle(FanoutExchange.class, "finished", int.class);
            ROUND_STATE = l.findVarHandle(FanoutExchange.class, "roundState", int.class);
            OWNED = l.findVarHandle(FanoutExchange.class, "owned", boolean.class);
            SWEPT_ROUND = l.findVarHandle(FanoutExchange.class, "sweptRound", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final FanoutService<Q, P, R> service;
    private final Q request;
    private final EventLoop upstreamLoop;
    private final ResponseSink<R> sink;
    private final List<Backend<?>> backends;
    private final long startNanos;
    private final long deadlineNanos;
    private final Runnable onFinish;
    private ThreadingModel model;

    private Round cur = new Round();
    private Round spare;
    private Round target; // where call() adds: cur during plan, the next round once merge adds one, else null
    private boolean merging; // merge runs: call() starts the next round in 'spare' (created on first use)
    private int round;
    private FailurePolicy policy = FailurePolicy.failFast();
    private volatile boolean expired;
    private volatile boolean roundToSend; // thread-per-request: taken by the request thread (set there, or by a merge a call's time limit ran on the loop)

    @SuppressWarnings("unused") // via REMAINING
    private volatile int remaining;
    @SuppressWarnings("unused") // via FINISHED
    private volatile int finished;
    @SuppressWarnings("unused") // via ROUND_STATE
    private volatile int roundState;
    // the current round holds a reference-counted processed reply (set by its handler, cleared when a round opens)
    @SuppressWarnings("unused") // via OWNED
    private volatile boolean owned;
    // the last round whose processed replies were released (-1: none yet)
    @SuppressWarnings("unused") // via SWEPT_ROUND
    private volatile int sweptRound = -1;
    // the deadline: an entry in the upstream loop's DeadlineQueue (its ticket), or a timer of its
    // own when that loop has no queue for this length; both touched on the upstream loop only
    private DeadlineQueue deadlineQueue;
    private long deadlineTicket;
    private ScheduledFuture<?> deadlineTimer;

    // OpenTelemetry spans: null unless the server has an OpenTelemetry instance
    private RequestTrace otel;
    // stage tracing (StageStats): null unless this request was sampled
    private StageClock trace;

    /**
     * @param upstreamLoop the loop of the upstream connection (deadline timer runs there)
     * @param backends the server's backends, by {@link Backend#index()}: the only ones the plan may call
     * @param deadlineNanos the time budget, from now
     * @param onFinish run once when the exchange finishes, on the finishing thread (counters)
     */
    // public for the JMH ExchangeBenchmark (another package), as tag() says
    public FanoutExchange(FanoutService<Q, P, R> service, Q request, EventLoop upstreamLoop, ResponseSink<R> sink,
            List<Backend<?>> backends, long deadlineNanos, Runnable onFinish) {
        this.service = service;
        this.request = request;
        this.upstreamLoop = upstreamLoop;
        this.sink = sink;
        this.backends = backends;
        this.startNanos = System.nanoTime();
        this.deadlineNanos = deadlineNanos;
        this.onFinish = onFinish;
    }

    /** {@return when the request was admitted, in {@link System#nanoTime()}} */
    long startNanos() {
        return startNanos;
    }

    /** Records this request's spans; set by the engine before {@link ThreadingModel#execute}. */
    void otel(RequestTrace t) {
        this.otel = t;
    }

    /**
     * Where the exceptions of the service's code ({@link RequestStats#serviceErrors}) and the failed
     * shard calls ({@link RequestStats#shardFailures}) are logged, rate-limited; {@code null}: not logged.
     */
    private RequestStats stats;

    /** Sets where this request's errors are logged; set by the engine before {@link ThreadingModel#execute}. */
    void stats(RequestStats stats) {
        this.stats = stats;
    }

    /** Traces this request's stages into {@code stats}; set by the engine before {@link ThreadingModel#execute}. */
    void trace(StageStats stats) {
        this.trace = new StageClock(stats);
    }

    /** The model that runs this request; set once by the engine before {@link ThreadingModel#execute}. */
    void model(ThreadingModel model) {
        this.model = model;
    }

    // ---- the views services get ----------------------------------------------------------------

    // Services never get the exchange itself, whose model-facing methods they must not reach: they
    // get these views, each made once per exchange on first use (plan always uses the plan view,
    // merge the replies view; the context view only exists if service code asks for it). A race
    // between threads to make one is harmless: a view holds nothing but the exchange.
    private PlanView planView;
    private RepliesView repliesView;
    private ContextView contextView;

    private PlanView planView() {
        PlanView v = planView;
        return v != null ? v : (planView = new PlanView());
    }

    private RepliesView repliesView() {
        RepliesView v = repliesView;
        return v != null ? v : (repliesView = new RepliesView());
    }

    private RequestContext context() {
        ContextView v = contextView;
        return v != null ? v : (contextView = new ContextView());
    }

    /**
     * {@return the number of calls of the round being planned (0 for a next round a merge has not
     * added to yet), or outside plan and merge those of the current round}
     */
    int calls() {
        Round r = target;
        return r != null ? r.calls : merging ? 0 : cur.calls;
    }

    /** The plan as {@code plan} and {@code merge} (its {@code next}) see it: valid only while they run. */
    private final class PlanView implements FanoutPlan<Q, P> {

        @Override
        public <V, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command,
                ReplyHandler<? super Q, ? super V, ? extends P> onReply) {
            return add(backend, shard, command, Objects.requireNonNull(onReply, "onReply"), null);
        }

        @Override
        public <V, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command, CallRef<V> ref) {
            return add(backend, shard, command, RAW, Objects.requireNonNull(ref, "ref"));
        }

        @Override
        public <V, T, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command, CallRef<T> ref,
                CallHandler<? super Q, ? super V, ? extends T> onReply) {
            return add(backend, shard, command, Objects.requireNonNull(onReply, "onReply"),
                    Objects.requireNonNull(ref, "ref"));
        }

        private int add(Backend<?> backend, int shard, Object command, Object handler, CallRef<?> ref) {
            Round r = target;
            if (r == null) {
                if (!merging) {
                    throw new IllegalStateException("plan used outside plan/merge (calls may only be added while they run)");
                }
                r = target = spare != null ? spare : (spare = new Round());
            }
            Objects.requireNonNull(backend, "backend");
            Objects.requireNonNull(command, "command");
            int index = backend.index();
            if (index < 0 || index >= backends.size() || backends.get(index) != backend) {
                throw new IllegalArgumentException("backend '" + backend.name() + "' is not one of this server's");
            }
            if (shard < 0 || shard >= backend.shardCount()) {
                throw new IllegalArgumentException("shard: " + shard + " (expected: 0.." + (backend.shardCount() - 1)
                        + " for backend '" + backend.name() + "')");
            }
            if (r.calls == MAX_CALLS) {
                throw new IllegalArgumentException("fanout: more than " + MAX_CALLS + " calls in one round");
            }
            r.add(backend, shard, command, handler, ref);
            return r.calls - 1;
        }

        @Override
        public void optional(int call) {
            planned(call).optional(call);
        }

        @Override
        public void timeout(int call, Duration timeout) {
            Round r = planned(call);
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout: " + timeout + " (expected: positive)");
            }
            r.timeout(call, timeout.compareTo(MAX_TIMEOUT) >= 0 ? Long.MAX_VALUE >>> 1 : timeout.toNanos());
        }

        /** The round being planned, which has call {@code call}. */
        private Round planned(int call) {
            Round r = target;
            if (r == null) {
                if (!merging) {
                    throw new IllegalStateException("plan used outside plan/merge");
                }
                throw new IndexOutOfBoundsException("call " + call + ": the next round has no calls yet");
            }
            Objects.checkIndex(call, r.calls);
            return r;
        }

        @Override
        public void failurePolicy(FailurePolicy policy) {
            if (target == null && !merging) {
                throw new IllegalStateException("plan used outside plan/merge");
            }
            FanoutExchange.this.policy = Objects.requireNonNull(policy, "policy");
        }

        @Override
        public int calls() {
            return FanoutExchange.this.calls();
        }

        @Override
        public RequestContext context() {
            return FanoutExchange.this.context();
        }
    }

    private static final Duration MAX_TIMEOUT = Duration.ofDays(365);

    /**
     * Runs the service's plan. Called once, by the thread the model runs plan on, before any
     * call is sent. A plan of no calls is merged at once, on this thread, with no replies.
     *
     * @return {@code true} if a round of calls is ready to send (the plan's, or the one the merge of
     *     a plan of no calls planned); {@code false} if the client has been answered (planning
     *     failed, or a plan of no calls was merged into an answer)
     */
    public boolean plan() {
        target = cur;
        if (trace != null) {
            trace.planStart = System.nanoTime();
        }
        try {
            service.plan(request, planView());
        } catch (RuntimeException e) {
            failBy(e, "plan failed");
            return false;
        } finally {
            target = null;
        }
        if (trace != null) {
            trace.planEnd = System.nanoTime();
        }
        if (otel != null) {
            long now = System.nanoTime();
            otel.event("planned", now);
            startCallSpans(now);
        }
        openRound();
        if (cur.calls == 0) {
            // A round of no calls (a health check, an answer from a cache): merge it now, on this
            // thread, with no replies; a merge that plans calls opens round 1 for the caller to send.
            // The CAS keeps a deadline that fired meanwhile from merging too.
            if (finished != 0 || !ROUND_STATE.compareAndSet(this, COLLECTING, MERGING)) {
                return false;
            }
            return mergeRound(false, false);
        }
        return true;
    }

    private void startCallSpans(long now) {
        Round r = target != null ? target : cur;
        otel.startRound(round, r.calls, i -> {
            Backend<?> b = r.backend(i);
            return b == null ? "?" : b.name();
        }, r::shard, now);
    }

    private void openRound() {
        cur.open(policy);
        OWNED.setOpaque(this, false);
        REMAINING.setRelease(this, cur.calls);
        ROUND_STATE.setRelease(this, COLLECTING);
        if (cur.limited) {
            armCallTimeouts(cur);
        }
    }

    /**
     * Arms the per-call time limits of the round about to be sent, on the upstream loop (where the
     * deadline runs too). A limit not shorter than the time left is left to the deadline.
     */
    private void armCallTimeouts(Round r) {
        long left = nanosLeft();
        for (int i = 0; i < r.calls; i++) {
            long t = r.limit(i);
            if (t > 0 && t < left) {
                int tag = tag(i);
                int shard = r.shard(i);
                upstreamLoop.schedule(() -> callTimedOut(tag, shard, t), t, TimeUnit.NANOSECONDS);
            }
        }
    }

    /** A call's own time limit passed: it fails as a timeout unless its reply (or failure) came first. */
    private void callTimedOut(int tag, int shard, long nanos) {
        if (finished != 0 || (tag >>> 16) != (round & 0x7FFF)) {
            return;
        }
        ShardException e = new ShardException(ShardException.Kind.TIMEOUT, shard, "no reply within the call's timeout of "
                + TimeUnit.NANOSECONDS.toMillis(nanos) + " ms");
        if (failCall(tag, e)) {
            completeRound();
        }
    }

    /** With per-call time limits, whether this outcome is the call's one (its reply and its timeout race). */
    private static boolean claim(Round r, int call) {
        return !r.limited || STATUS.compareAndSet(r.status, call, Round.PENDING, Round.CLAIMED);
    }

    /**
     * Arms the deadline timer. Called by the dispatcher on the upstream loop when the request is
     * admitted, so the deadline also covers time spent queued for a thread.
     */
    void armDeadline() {
        assert upstreamLoop.inEventLoop();
        DeadlineQueue q = DeadlineQueue.of(upstreamLoop, deadlineNanos);
        if (q != null) {
            deadlineQueue = q;
            deadlineTicket = q.add(this, startNanos);
        } else {
            deadlineTimer = upstreamLoop.schedule(this::onDeadline, deadlineNanos, TimeUnit.NANOSECONDS);
        }
    }

    // ---- outcomes of calls ---------------------------------------------------------------------

    /**
     * A reply of this request reached the mid-tier: called by a model's reply listener when the
     * driver hands it the reply, before any hop to the thread that will run {@link #processReply}.
     * Stamps the first reply's arrival of a traced request (stage {@code round_trip} ends, and
     * {@code reply_wait} begins, there); nothing otherwise. Any thread.
     */
    void replyArrived() {
        StageClock t = trace;
        if (t != null && round == 0) {
            t.arrived(System.nanoTime());
        }
    }

    /**
     * Runs the handler of the call {@code tag} names and releases {@code reply}, unless the handler
     * returned it: then the call's slot owns it until the round ends ({@link #sweep}).
     *
     * @return {@code true} if this was the round's last outstanding outcome: the caller must now
     *     run {@link #completeRound()} (on the thread its model prescribes)
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public boolean processReply(int tag, Object reply) {
        int call = tag & 0xFFFF;
        Object kept = null;
        try {
            int rd = round;
            if (finished != 0 || (tag >>> 16) != (rd & 0x7FFF)) {
                return false;
            }
            Round r = cur;
            if (!claim(r, call)) {
                return false; // its time limit passed: the late reply is dropped
            }
            Object h = r.handler(call);
            Object p;
            if (h == RAW) {
                p = reply;
            } else if (h instanceof ReplyHandler rh) {
                p = rh.onReply(request, call, reply);
            } else {
                p = ((CallHandler) h).onReply(new CallView(call), reply);
            }
            r.processed[call] = p;
            STATUS.setRelease(r.status, call, Round.OK);
            if (p instanceof ReferenceCounted) {
                kept = p;
                OWNED.setVolatile(this, true);
                if ((int) SWEPT_ROUND.getVolatile(this) == rd) {
                    releaseSlot(r, call); // the round ended while the handler ran
                }
            }
        } catch (RuntimeException e) {
            failBy(e, "onReply failed for call " + call);
            return false;
        } finally {
            if (reply != kept) {
                ReferenceCountUtil.release(reply);
            }
        }
        return lastOutcome(call, null);
    }

    /**
     * Ends the current round's ownership of its processed replies: releases every reference-counted
     * one (once; a handler still running releases its own, see the class comment). Called by the
     * thread that ended the round: after its merge returned, or when the request finished without it.
     */
    private void sweep() {
        Round r = cur;
        SWEPT_ROUND.setVolatile(this, round);
        if ((boolean) OWNED.getVolatile(this) && r.status != null) {
            for (int i = 0; i < r.calls; i++) {
                releaseSlot(r, i);
            }
        }
    }

    private static void releaseSlot(Round r, int call) {
        if (STATUS.compareAndSet(r.status, call, Round.OK, Round.RELEASED)) {
            ReferenceCountUtil.release(r.processed[call]);
        }
    }

    /** Counts one outcome of the round; whether it was the last (then the caller completes the round). */
    private boolean lastOutcome(int call, String error) {
        if (otel != null) {
            otel.endCall(call, error, System.nanoTime());
        }
        StageClock t = trace;
        if (t == null) {
            return (int) REMAINING.getAndAdd(this, -1) == 1;
        }
        long now = System.nanoTime();
        if (round == 0) {
            t.arrived(now); // a failure first: it arrives as it is counted
            t.replied(now);
        }
        boolean last = (int) REMAINING.getAndAdd(this, -1) == 1;
        if (last && round == 0) {
            t.lastReply = now;
        }
        return last;
    }

    /**
     * The call {@code tag} names failed. Under fail-fast (and the call not optional) the client is
     * answered now: 503, or 504 for a timeout. Otherwise the failure is recorded for
     * {@link Replies#failure}.
     *
     * @return {@code true} if this was the round's last outstanding outcome: the caller must now
     *     run {@link #completeRound()} (on the thread its model prescribes)
     */
    boolean failCall(int tag, ShardException cause) {
        int call = tag & 0xFFFF;
        if (finished != 0 || (tag >>> 16) != (round & 0x7FFF)) {
            return false;
        }
        Round r = cur;
        if (!claim(r, call)) {
            return false; // the reply came first, or the call's own time limit passed first
        }
        ShardException normal = normalize(r, call, cause);
        if (r.failures == null || (policy.isFailFast() && !r.isOptional(call))) {
            Outcome o = cause.kind() == ShardException.Kind.TIMEOUT ? Outcome.TIMEOUT : Outcome.UNAVAILABLE;
            finish(o, normal.getMessage());
            return false;
        }
        r.failures[call] = normal;
        STATUS.setRelease(r.status, call, Round.FAILED);
        return lastOutcome(call, cause.getMessage());
    }

    /**
     * The framework's account of a call's failure: {@code backend <name>: shard <n> <kind>}, the
     * same under every model and driver; the driver's own failure is its cause.
     */
    private ShardException normalize(Round r, int call, ShardException cause) {
        Backend<?> b = r.backend(call);
        if (b == null || cause.backend() != null) {
            return cause;
        }
        ShardException e = new ShardException(b.name(), cause);
        RequestStats st = stats;
        if (st != null) {
            st.shardFailures.warn(LOG, e.getMessage() + " (" + cause.getMessage() + ")");
        }
        return e;
    }

    /** {@return how an answer of the service's choosing counts: {@code OK} for a 2xx, else {@code SERVICE_STATUS}} */
    static Outcome outcomeOf(io.doubleface.api.StatusException s) {
        return s.status() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS;
    }

    /** Merges the round whose last outcome the caller delivered, unless the deadline took it. */
    public void completeRound() {
        if (finished == 0 && ROUND_STATE.compareAndSet(this, COLLECTING, MERGING)) {
            mergeRound(false, true);
        }
    }

    /** The deadline has passed (on the upstream loop: {@link DeadlineQueue}'s sweep, or the request's own timer). */
    void onDeadline() {
        deadlineTimer = null;
        deadlineQueue = null;
        expired = true;
        if (finished != 0 || !ROUND_STATE.compareAndSet(this, COLLECTING, MERGING)) {
            return; // answered, or a merge is running: it sees 'expired' before starting a round
        }
        Round r = cur;
        int missing = 0;
        boolean required = false;
        for (int i = 0; i < r.calls; i++) {
            if ((byte) STATUS.getAcquire(r.status, i) != Round.OK) {
                missing++;
                required |= policy.isFailFast() && !r.isOptional(i);
            }
        }
        if (required) {
            sweep();
            finish(Outcome.TIMEOUT, "deadline of " + TimeUnit.NANOSECONDS.toMillis(deadlineNanos)
                    + " ms exceeded with " + missing + " of " + r.calls + " shard replies missing"
                    + (round > 0 ? " (round " + round + ")" : ""));
            return;
        }
        mergeRound(true, true);
    }

    /**
     * Fails the request for an exception of the service's code: the status and reason a
     * {@link RequestFailedException} or {@link io.doubleface.api.StatusException} chose, else {@code 500}
     * with {@code context} (the exception is logged, rate-limited, not answered).
     */
    private void failBy(RuntimeException e, String context) {
        if (e instanceof io.doubleface.api.StatusException s) {
            if (FINISHED.compareAndSet(this, 0, 1)) {
                if (ROUND_STATE.compareAndSet(this, COLLECTING, MERGING)) {
                    sweep();
                }
                done(outcomeOf(s), s.getMessage());
                sink.fail(s);
                recordStages();
            }
        } else if (e instanceof RequestFailedException f) {
            finish(f.isTimeout() ? Outcome.TIMEOUT : Outcome.UNAVAILABLE, f.getMessage());
        } else {
            // the answer names the step, never the exception: that goes to the log
            RequestStats st = stats;
            if (st != null) {
                st.serviceErrors.error(LOG, context + " (" + service.getClass().getName() + ")", e);
            }
            finish(Outcome.INTERNAL_ERROR, context);
        }
    }

    /**
     * Merges the current round: answers, fails, or opens the next round the merge planned.
     *
     * @param send whether to hand an opened next round to the model; if not, the caller sends it
     * @return whether a next round was opened and not sent
     */
    @SuppressWarnings("unchecked")
    private boolean mergeRound(boolean atDeadline, boolean send) {
        Round r = cur;
        int failed = 0;
        for (int i = 0; i < r.calls; i++) {
            if ((byte) STATUS.getAcquire(r.status, i) != Round.OK) {
                failed++;
            }
        }
        r.failed = failed;
        int min = policy.minReplies();
        if (r.calls > 0 && r.calls - failed < min) { // a round of no calls is merged under every policy
            sweep();
            finish(atDeadline ? Outcome.TIMEOUT : Outcome.UNAVAILABLE, "only " + (r.calls - failed) + " of "
                    + r.calls + " shard calls answered" + (atDeadline ? " by the deadline" : "") + " (quorum: " + min
                    + ")" + firstFailure(r));
            return false;
        }
        merging = true;
        R response;
        try {
            response = service.merge(request, repliesView(), planView());
            if (trace != null && round == 0) {
                trace.mergeEnd = System.nanoTime();
            }
            if (otel != null) {
                otel.event("merged", System.nanoTime());
            }
        } catch (RuntimeException e) {
            if (target != null) {
                target.clear();
                target = null;
            }
            failBy(e, "merge failed");
            return false;
        } finally {
            merging = false;
            sweep(); // the merge is over: the response holds what it retained
        }
        Round nx = target;
        target = null;
        if (nx == null) {
            if (response == null) {
                finish(Outcome.INTERNAL_ERROR, "merge returned no response and planned no further calls");
                return false;
            }
            complete(response);
            return false;
        }
        if (response != null) {
            ReferenceCountUtil.release(response);
            nx.clear();
            finish(Outcome.INTERNAL_ERROR, "merge returned a response and also planned further calls");
            return false;
        }
        if (round + 1 >= MAX_ROUNDS) {
            nx.clear();
            finish(Outcome.INTERNAL_ERROR, "more than " + MAX_ROUNDS + " rounds");
            return false;
        }
        if (expired || atDeadline || nanosLeft() <= 0) {
            nx.clear();
            finish(Outcome.TIMEOUT, "deadline of " + TimeUnit.NANOSECONDS.toMillis(deadlineNanos)
                    + " ms exceeded before round " + (round + 1) + " could start");
            return false;
        }
        r.clear();
        spare = r;
        cur = nx;
        round++;
        openRound();
        if (otel != null) {
            startCallSpans(System.nanoTime());
        }
        if (send) {
            model.sendRound(this);
            return false;
        }
        return true;
    }

    private String firstFailure(Round r) {
        for (int i = 0; i < r.calls; i++) {
            if (r.failures != null && r.failures[i] != null) {
                return "; first failure: " + r.failures[i].getMessage();
            }
        }
        return "";
    }

    private void complete(R response) {
        if (FINISHED.compareAndSet(this, 0, 1)) {
            done(Outcome.OK, null);
            sink.complete(response);
            recordStages();
        } else {
            ReferenceCountUtil.release(response);
        }
    }

    /** Answers the client with a failure unless it was answered already. */
    void finish(Outcome outcome, String reason) {
        if (FINISHED.compareAndSet(this, 0, 1)) {
            if (ROUND_STATE.compareAndSet(this, COLLECTING, MERGING)) {
                sweep(); // nobody merges this round now; a merge or the deadline holding it sweeps it itself
            }
            done(outcome, reason);
            sink.fail(outcome, reason);
            recordStages();
        }
    }

    /**
     * Records a traced request's stages once the sink has taken its answer: on the connection's
     * loop that is after the answer was encoded, written and flushed (stage {@code respond});
     * elsewhere after it was handed to that loop.
     */
    private void recordStages() {
        StageClock t = trace;
        if (t != null) {
            t.record(model.configuration().name(), startNanos);
        }
    }

    private void done(Outcome outcome, String reason) {
        if (otel != null) {
            otel.end(outcome, reason, System.nanoTime());
        }
        if (upstreamLoop.inEventLoop()) {
            // Off-loop finishers leave the deadline to fire as a no-op: forgetting it from another
            // thread would cost a cross-thread task per request.
            DeadlineQueue q = deadlineQueue;
            if (q != null) {
                q.remove(deadlineTicket);
                deadlineQueue = null;
            }
            ScheduledFuture<?> t = deadlineTimer;
            if (t != null) {
                t.cancel(false);
                deadlineTimer = null;
            }
        }
        if (onFinish != null) {
            onFinish.run();
        }
    }

    /** The current round's outcomes as {@code merge} sees them: valid only while it runs. */
    private final class RepliesView implements Replies<P> {

        @Override
        public int size() {
            return cur.calls;
        }

        @Override
        @SuppressWarnings("unchecked")
        public P get(int call) {
            Objects.checkIndex(call, cur.calls);
            return Round.ok(cur.status[call]) ? (P) cur.processed[call] : null;
        }

        @Override
        public boolean ok(int call) {
            Objects.checkIndex(call, cur.calls);
            return Round.ok(cur.status[call]);
        }

        /**
         * The first take of a reply moves the round's reference to the caller: its slot becomes
         * {@code TAKEN}, which the sweep after merge leaves alone. A slot is no longer written
         * while merge runs, so the compare-and-set only guards against a second take.
         */
        @Override
        @SuppressWarnings("unchecked")
        public P take(int call) {
            Objects.checkIndex(call, cur.calls);
            Round r = cur;
            if (STATUS.compareAndSet(r.status, call, Round.OK, Round.TAKEN)) {
                return (P) r.processed[call];
            }
            return (byte) STATUS.getAcquire(r.status, call) == Round.TAKEN
                    ? (P) ReferenceCountUtil.retain(r.processed[call]) : null;
        }

        @Override
        public ShardException failure(int call) {
            return cur.failure(call, deadlineNanos);
        }

        @Override
        public Backend<?> backend(int call) {
            Objects.checkIndex(call, cur.calls);
            return cur.backend(call);
        }

        @Override
        public int shard(int call) {
            return FanoutExchange.this.shard(call);
        }

        @Override
        public int failed() {
            return cur.failed;
        }

        /** Without failures, a view of the round's slots (no copy; the slots are never reused). */
        @Override
        @SuppressWarnings("unchecked")
        public List<P> values() {
            Round r = cur;
            if (r.failed == 0) {
                return (List<P>) Arrays.asList(r.processed);
            }
            return Replies.super.values();
        }

        @Override
        public int round() {
            return round;
        }

        @Override
        public CallRef<?> ref(int call) {
            Objects.checkIndex(call, cur.calls);
            return cur.ref(call);
        }

        /** The first call of the round planned with {@code ref}: one pass, no allocation. */
        @Override
        public int indexOf(CallRef<?> ref) {
            return cur.indexOf(ref);
        }

        @Override
        public RequestContext context() {
            return FanoutExchange.this.context();
        }
    }

    /** What the server knows about the request, as plan, merge and handlers see it: readable from any thread. */
    private final class ContextView implements RequestContext {

        @Override
        public String route() {
            return sink.info().route();
        }

        @Override
        public String method() {
            return sink.info().method();
        }

        @Override
        public String path() {
            return sink.info().path();
        }

        @Override
        public String pathVariable(String name) {
            return sink.info().pathVariable(name);
        }

        @Override
        public String header(String name) {
            return sink.info().header(name);
        }

        @Override
        public long nanosLeft() {
            return FanoutExchange.this.nanosLeft();
        }

        @Override
        public String configuration() {
            return model.configuration().name();
        }
    }

    /** A call as its {@link CallHandler} sees it while the handler runs. */
    private final class CallView implements Call<Q> {
        private final int call;

        CallView(int call) {
            this.call = call;
        }

        @Override
        public Q request() {
            return request;
        }

        @Override
        public int index() {
            return call;
        }

        @Override
        public Backend<?> backend() {
            return cur.backend(call);
        }

        @Override
        public int shard() {
            return cur.shard(call);
        }

        @Override
        public RequestContext context() {
            return FanoutExchange.this.context();
        }

        @Override
        public String toString() {
            return "call " + call + " of round " + round + " (backend " + backend().name() + ", shard " + shard() + ")";
        }
    }

    // ---- accessors for models -----------------------------------------------------------------

    /** Shard of call {@code i} of the current round. */
    int shard(int i) {
        Objects.checkIndex(i, cur.calls);
        return cur.shard(i);
    }

    /** Backend index ({@link Backend#index()}) of call {@code i} of the current round. */
    int backendIndex(int i) {
        return cur.backend(i).index();
    }

    /** Command of call {@code i} of the current round. */
    Command<?> command(int i) {
        return (Command<?>) cur.command(i);
    }

    /**
     * {@return the headers that carry call {@code i}'s OpenTelemetry span to its shard
     * ({@code traceparent}, …), or {@code null} when the server traces no spans} The models hand
     * them to the driver with {@link io.doubleface.driver.spi.CallTrace} around the send.
     */
    java.util.Map<String, String> callHeaders(int i) {
        RequestTrace t = otel;
        return t == null ? null : t.callHeaders(i);
    }

    /** The current round's number: 0 for the plan's calls, 1 for those of the first merge, … */
    int round() {
        return round;
    }

    /**
     * The tag to send call {@code i} of the current round with (round and call number). Public, as
     * are {@link #plan()}, {@link #processReply} and {@link #completeRound()}, for
     * {@code io.doubleface.jmh.engine.ExchangeBenchmark}, which drives an exchange as a model does.
     */
    public int tag(int i) {
        return ((round & 0x7FFF) << 16) | i;
    }

    /** For models that send rounds from their own loop (thread-per-request): a round waits to be sent. */
    void markRoundToSend() {
        roundToSend = true;
    }

    /** Takes the mark of {@link #markRoundToSend()}: whether a round waits to be sent. */
    boolean takeRoundToSend() {
        boolean r = roundToSend;
        roundToSend = false;
        return r && finished == 0;
    }

    /** The loop of the upstream connection. */
    EventLoop upstreamLoop() {
        return upstreamLoop;
    }

    /** Nanoseconds left before the deadline (may be negative). */
    long nanosLeft() {
        return deadlineNanos - (System.nanoTime() - startNanos);
    }

    /** Whether the client has been answered. */
    boolean isFinished() {
        return finished != 0;
    }

    // ---- DoubleFace scheduler hooks (loop-confined) --------------------------------------------

    @Override
    public int outstanding() {
        return (int) REMAINING.getOpaque(this);
    }

    @Override
    protected void processScheduled(int tag, Object payload) {
        if (processReply(tag, payload)) {
            completeRound();
        }
    }
}
