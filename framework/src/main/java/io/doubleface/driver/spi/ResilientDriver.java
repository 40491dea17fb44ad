package io.doubleface.driver.spi;

import io.doubleface.driver.Command;
import io.doubleface.driver.ShardException;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * A driver with a {@link Resilience} around it: per-shard circuit breaking, budgeted retries
 * and hedged calls, for any driver and under every threading model. Give it to the server in place
 * of the driver it wraps:
 *
 * <pre>{@code
 * builder.backend("cache", ResilientDriver.wrap(RedisDriver.of(uri), policy));
 * }</pre>
 *
 * <p>Every send still ends in exactly one callback to the caller's listener, on the client's loop,
 * never inside {@code send}: when a hedge or retry is in flight, the first reply wins and the later
 * reply is released; a failure is delivered only when no other attempt of the call is left. The
 * counters ({@link #stats()}) are in {@code /metrics} as {@code doubleface_backend_*} when the driver
 * is a server's backend.
 *
 * <p>Threading: thread-safe. Circuits and budgets are per driver, shared by the clients of every
 * loop and every blocking caller; the per-call state of a loop client lives on its loop. Closing
 * this driver closes the wrapped one.
 *
 * @param <C> the driver's command type
 */
public final class ResilientDriver<C extends Command<?>> implements ShardDriver<C> {

    /**
     * What the policy did so far (counts since the driver was made).
     *
     * @param retries retries sent
     * @param retriesDenied failed idempotent calls not retried because the retry budget was empty
     * @param hedges hedged copies sent
     * @param hedgeWins calls answered by their hedged copy first
     * @param hedgesDenied hedges not sent because the hedge budget was empty
     * @param circuitsOpened times a shard's circuit opened (from closed)
     * @param rejected calls failed at once because their shard's circuit was open
     * @param openCircuits shards whose circuit is open or half-open now
     */
    public record Stats(long retries, long retriesDenied, long hedges, long hedgeWins, long hedgesDenied,
            long circuitsOpened, long rejected, int openCircuits) {}

    private final ShardDriver<C> inner;
    private final Resilience<? super C> policy;
    private final ShardCircuit[] circuits; // null without circuit breaking
    private final TokenBudget retryBudget; // null without retries
    private final TokenBudget hedgeBudget; // null without hedging
    private final long hedgeDelayNanos;
    private final boolean perCallState;

    final LongAdder retries = new LongAdder();
    final LongAdder retriesDenied = new LongAdder();
    final LongAdder hedges = new LongAdder();
    final LongAdder hedgeWins = new LongAdder();
    final LongAdder hedgesDenied = new LongAdder();
    final LongAdder circuitsOpened = new LongAdder();
    final LongAdder rejected = new LongAdder();

    private ResilientDriver(ShardDriver<C> inner, Resilience<? super C> policy) {
        this.inner = Objects.requireNonNull(inner, "driver");
        this.policy = Objects.requireNonNull(policy, "policy");
        if (policy.consecutiveFailures() > 0) {
            circuits = new ShardCircuit[inner.shardCount()];
            for (int i = 0; i < circuits.length; i++) {
                circuits[i] = new ShardCircuit(i, policy.consecutiveFailures(), policy.openFor().toNanos(),
                        circuitsOpened);
            }
        } else {
            circuits = null;
        }
        retryBudget = policy.maxRetries() > 0 ? new TokenBudget(policy.retryBudget()) : null;
        hedgeBudget = policy.hedgeDelay() != null ? new TokenBudget(policy.hedgeBudget()) : null;
        hedgeDelayNanos = policy.hedgeDelay() != null ? policy.hedgeDelay().toNanos() : 0;
        perCallState = retryBudget != null || hedgeBudget != null || circuits != null;
    }

    /**
     * Wraps {@code driver} with {@code policy}.
     *
     * @param driver the driver to wrap; closed with this one
     * @param policy what to do between a shard and a failure: a policy of the driver's command type,
     *     or of a supertype (e.g. one {@code Resilience<Command<?>>} for drivers of any kind)
     * @param <C> the driver's command type
     * @return the wrapping driver
     */
    public static <C extends Command<?>> ResilientDriver<C> wrap(ShardDriver<C> driver,
            Resilience<? super C> policy) {
        return new ResilientDriver<>(driver, policy);
    }

    /** {@return the policy} */
    public Resilience<? super C> resilience() {
        return policy;
    }

    /** {@return the wrapped driver} */
    public ShardDriver<C> unwrap() {
        return inner;
    }

    /** {@return what the policy did so far} */
    public Stats stats() {
        int open = 0;
        if (circuits != null) {
            for (ShardCircuit c : circuits) {
                if (c.isOpen()) {
                    open++;
                }
            }
        }
        return new Stats(retries.sum(), retriesDenied.sum(), hedges.sum(), hedgeWins.sum(), hedgesDenied.sum(),
                circuitsOpened.sum(), rejected.sum(), open);
    }

    @Override
    public int shardCount() {
        return inner.shardCount();
    }

    @Override
    public int shardFor(C command) {
        return inner.shardFor(command);
    }

    @Override
    public java.util.Map<String, Object> topology() {
        return inner.topology();
    }

    @Override
    public String describe() {
        return inner.describe();
    }

    @Override
    public LoopClient<C> openOn(EventLoop loop) {
        LoopClient<C> client = inner.openOn(loop);
        return perCallState ? new Loop(client) : client;
    }

    @Override
    public BlockingClient<C> openBlocking() {
        BlockingClient<C> client = inner.openBlocking();
        return perCallState ? new Blocking(client) : client;
    }

    @Override
    public void close() {
        inner.close();
    }

    @Override
    public String toString() {
        return "ResilientDriver[" + inner + ", " + policy + "]";
    }

    /** {@return whether a call may go to {@code shard} now (always without circuit breaking)} */
    private boolean allow(int shard, long now) {
        return circuits == null || circuits[shard].allow(now);
    }

    private ShardException rejection(int shard, long now) {
        rejected.increment();
        return circuits[shard].openFailure(now);
    }

    private void succeeded(int shard) {
        if (circuits != null) {
            circuits[shard].onSuccess();
        }
    }

    private void failed(int shard, ShardException cause) {
        if (circuits != null) {
            circuits[shard].onFailure(cause);
        }
    }

    private static boolean retryable(ShardException cause) {
        ShardException.Kind k = cause.kind();
        return k == ShardException.Kind.UNAVAILABLE || k == ShardException.Kind.TIMEOUT;
    }

    /** Whether a failed idempotent call may be retried now: takes a budget token and, last, the circuit's leave. */
    private boolean mayRetry(int shard, ShardException cause, int retriesSoFar) {
        if (retryBudget == null || retriesSoFar >= policy.maxRetries() || !retryable(cause)) {
            return false;
        }
        if (!retryBudget.tryWithdraw()) {
            retriesDenied.increment();
            return false;
        }
        if (!allow(shard, System.nanoTime())) { // last: a half-open circuit's leave is a promise to send
            return false;
        }
        retries.increment();
        return true;
    }

    /** The loop face: a {@link Call} per send carries the attempts. Confined to the loop. */
    private final class Loop implements LoopClient<C> {
        private final LoopClient<C> client;
        private final EventLoop loop;
        private final LatencyWindow window; // null unless the hedge delay follows a live percentile

        Loop(LoopClient<C> client) {
            this.client = client;
            this.loop = client.loop();
            this.window = hedgeBudget != null && policy.hedgePercentile() > 0
                    ? new LatencyWindow(policy.hedgePercentile(), hedgeDelayNanos, System.nanoTime()) : null;
        }

        /** {@return the hedge delay for a call sent now; 0: do not hedge} */
        long hedgeDelay() {
            return window == null ? hedgeDelayNanos : window.delayNanos();
        }

        @Override
        public EventLoop loop() {
            return loop;
        }

        @Override
        public void send(int shard, C command, ReplyListener listener, int tag) {
            ShardDrivers.requireOnLoop(loop, "send");
            Objects.checkIndex(shard, circuits != null ? circuits.length : inner.shardCount());
            Objects.requireNonNull(listener, "listener");
            long now = System.nanoTime();
            if (!allow(shard, now)) {
                ShardException e = rejection(shard, now);
                loop.execute(() -> ShardDrivers.deliverFailure(listener, tag, e));
                return;
            }
            boolean idempotent = (retryBudget != null || hedgeBudget != null) && policy.isIdempotent(command);
            if (idempotent) {
                if (retryBudget != null) {
                    retryBudget.deposit();
                }
                if (hedgeBudget != null) {
                    hedgeBudget.deposit();
                }
            }
            new Call(this, shard, command, listener, tag, idempotent, now).start();
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> connect() {
            return client.connect();
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /**
     * One call and its attempts (the first, a hedge, retries): exactly one outcome to the caller.
     * Attempt tags: 0 the first, 1 the hedge, 2.. retries. Confined to the loop.
     */
    private final class Call implements ReplyListener, Runnable {
        private final Loop owner;
        private final int shard;
        private final C command;
        private final ReplyListener listener;
        private final int tag;
        private final boolean idempotent;
        private final long sentAt;
        private int outstanding;
        private int retriesSoFar;
        private boolean done;
        private ScheduledFuture<?> hedgeTimer;

        Call(Loop owner, int shard, C command, ReplyListener listener, int tag, boolean idempotent, long sentAt) {
            this.owner = owner;
            this.sentAt = sentAt;
            this.shard = shard;
            this.command = command;
            this.listener = listener;
            this.tag = tag;
            this.idempotent = idempotent;
        }

        void start() {
            outstanding = 1;
            owner.client.send(shard, command, this, 0);
            if (idempotent && hedgeBudget != null && !done) {
                long delay = owner.hedgeDelay();
                if (delay > 0) {
                    hedgeTimer = owner.loop.schedule(this, delay, TimeUnit.NANOSECONDS);
                }
            }
        }

        /** The hedge timer: no reply yet after the delay. */
        @Override
        public void run() {
            hedgeTimer = null;
            if (done) {
                return;
            }
            if (!hedgeBudget.tryWithdraw()) {
                hedgesDenied.increment();
                return;
            }
            if (!allow(shard, System.nanoTime())) {
                return;
            }
            hedges.increment();
            outstanding++;
            owner.client.send(shard, command, this, 1);
        }

        @Override
        public void onReply(int attempt, Object reply) {
            outstanding--;
            succeeded(shard);
            if (attempt == 0 && owner.window != null) {
                long now = System.nanoTime();
                owner.window.record(now - sentAt, now);
            }
            if (done) {
                ReferenceCountUtil.release(reply); // the other attempt won
                return;
            }
            finish();
            if (attempt == 1) {
                hedgeWins.increment();
            }
            ShardDrivers.deliverReply(listener, tag, reply);
        }

        @Override
        public void onFailure(int attempt, ShardException cause) {
            outstanding--;
            failed(shard, cause);
            if (done || outstanding > 0) {
                return; // answered already, or another attempt may still answer
            }
            if (idempotent && mayRetry(shard, cause, retriesSoFar)) {
                retriesSoFar++;
                outstanding++;
                owner.client.send(shard, command, this, 1 + retriesSoFar);
                return;
            }
            finish();
            ShardDrivers.deliverFailure(listener, tag, cause);
        }

        private void finish() {
            done = true;
            if (hedgeTimer != null) {
                hedgeTimer.cancel(false);
                hedgeTimer = null;
            }
        }
    }

    /** The blocking face: circuit breaking and retries (no hedging). Thread-safe. */
    private final class Blocking implements BlockingClient<C> {
        private final BlockingClient<C> client;

        Blocking(BlockingClient<C> client) {
            this.client = client;
        }

        @Override
        public void connect() throws ShardException {
            client.connect();
        }

        @Override
        public Object call(int shard, C command, long timeoutNanos) throws ShardException {
            long start = System.nanoTime();
            if (!allow(shard, start)) {
                throw rejection(shard, start);
            }
            boolean idempotent = retryBudget != null && policy.isIdempotent(command);
            if (idempotent) {
                retryBudget.deposit();
            }
            int retriesSoFar = 0;
            long left = timeoutNanos;
            for (;;) {
                try {
                    Object reply = client.call(shard, command, left);
                    succeeded(shard);
                    return reply;
                } catch (ShardException e) {
                    failed(shard, e);
                    left = timeoutNanos - (System.nanoTime() - start);
                    if (!idempotent || left <= 0 || !mayRetry(shard, e, retriesSoFar)) {
                        throw e;
                    }
                    retriesSoFar++;
                }
            }
        }

        @Override
        public void callAll(int[] shards, List<C> commands, long timeoutNanos, Sink sink) {
            long start = System.nanoTime();
            int n = shards.length;
            // indices still to call, and for each whether it is idempotent and how often it was retried
            int[] pending = new int[n];
            int count = 0;
            for (int i = 0; i < n; i++) {
                if (!allow(shards[i], start)) {
                    sink.onFailure(i, rejection(shards[i], start));
                    continue;
                }
                pending[count++] = i;
                if (retryBudget != null && policy.isIdempotent(commands.get(i))) {
                    retryBudget.deposit();
                }
            }
            int[] retried = new int[n];
            while (count > 0) {
                long left = timeoutNanos - (System.nanoTime() - start);
                if (left <= 0) {
                    ShardException late = new ShardException(ShardException.Kind.TIMEOUT, -1,
                            "no time left for a retry within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
                    for (int k = 0; k < count; k++) {
                        sink.onFailure(pending[k], late);
                    }
                    return;
                }
                int[] subShards = new int[count];
                List<C> subCommands = new ArrayList<>(count);
                for (int k = 0; k < count; k++) {
                    subShards[k] = shards[pending[k]];
                    subCommands.add(commands.get(pending[k]));
                }
                int[] index = java.util.Arrays.copyOf(pending, count);
                int[] again = new int[count];
                int[] againCount = {0};
                client.callAll(subShards, subCommands, left, new Sink() {
                    @Override
                    public void onReply(int k, Object reply) {
                        succeeded(subShards[k]);
                        sink.onReply(index[k], reply);
                    }

                    @Override
                    public void onFailure(int k, ShardException cause) {
                        int i = index[k];
                        failed(subShards[k], cause);
                        if (retryBudget != null && policy.isIdempotent(commands.get(i))
                                && mayRetry(subShards[k], cause, retried[i])) {
                            retried[i]++;
                            again[againCount[0]++] = i;
                        } else {
                            sink.onFailure(i, cause);
                        }
                    }
                });
                count = againCount[0];
                System.arraycopy(again, 0, pending, 0, count);
            }
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
