package io.doubleface.driver.spi;

import io.doubleface.driver.Command;
import io.doubleface.driver.ShardException;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * What a {@link ResilientDriver} does between a shard and a failure: per-shard circuit breaking,
 * budgeted retries and budgeted hedged calls. Immutable; start from {@link #none()} and add what you
 * want:
 *
 * <pre>{@code
 * Resilience<RedisCommand<?>> policy = Resilience.<RedisCommand<?>>none()
 *         .idempotent(c -> c.readOnly())                       // which commands may be sent twice
 *         .circuitBreaker(5, Duration.ofSeconds(1))            // 5 failures in a row: fail fast for 1 s
 *         .retries(1, Resilience.Budget.of(0.1, 10))     // 1 retry, at most 10% of calls + 10/s
 *         .hedging(Duration.ofMillis(20), Resilience.Budget.of(0.05, 5));
 * builder.backend("cache", ResilientDriver.wrap(RedisDriver.of(uri), policy));
 * }</pre>
 *
 * <p><b>Circuit breaking</b> (per shard, shared by every client of the driver): after
 * {@code consecutiveFailures} calls in a row to one shard fail {@link ShardException.Kind#UNAVAILABLE}
 * or {@link ShardException.Kind#TIMEOUT}, calls to it fail at once with {@code UNAVAILABLE}
 * ("circuit open") for {@code openFor}; then one call is let through as a probe: its success closes
 * the circuit, its failure opens it for another {@code openFor}. A shard error (the shard answered)
 * does not count.
 *
 * <p><b>Retries</b> repeat a call that failed {@code UNAVAILABLE} or {@code TIMEOUT}, at most
 * {@code maxRetries} times, only if the command is {@link #idempotent idempotent} and the retry
 * budget has a token. <b>Hedging</b> sends a second copy of an idempotent call that has had no reply
 * after {@code delay}, if the hedge budget has a token; the first reply wins, the other is released
 * when it comes. Hedging works under the event-loop models; the thread models' blocking clients get
 * circuit breaking and retries only. Neither outlives the request: the server answers at its
 * deadline whatever is still in flight.
 *
 * <p>By default no command is idempotent, so retries and hedges never happen until you say which
 * commands are safe to send twice.
 *
 * @param <C> the driver's command type
 */
public final class Resilience<C extends Command<?>> {

    /**
     * A budget of extra calls (Finagle's retry-budget shape): every call eligible for an extra one
     * deposits {@code ratio} of a token, a floor of {@code minPerSecond} tokens is added every
     * second, and each extra call takes one token. The balance is capped at
     * {@value #CAP_SECONDS} seconds' worth of the floor, or {@value #MIN_CAP} tokens if that is
     * more, so a long calm period cannot fund a storm.
     *
     * @param ratio extra calls per eligible call, {@code 0 ..} 1 (e.g. 0.1: at most 10% more calls)
     * @param minPerSecond extra calls allowed per second whatever the traffic, {@code >= 0}
     */
    public record Budget(double ratio, int minPerSecond) {

        /** Seconds of the floor the balance may hold: {@value}. */
        public static final int CAP_SECONDS = 10;
        /** Smallest cap of the balance, in tokens: {@value}. */
        public static final int MIN_CAP = 100;

        /**
         * Checks the components.
         *
         * @throws IllegalArgumentException if {@code ratio} is outside {@code 0..1} or
         *     {@code minPerSecond} is negative
         */
        public Budget {
            if (!(ratio >= 0 && ratio <= 1)) {
                throw new IllegalArgumentException("ratio: " + ratio + " (expected: 0..1)");
            }
            if (minPerSecond < 0) {
                throw new IllegalArgumentException("minPerSecond: " + minPerSecond + " (expected: >= 0)");
            }
        }

        /**
         * A budget.
         *
         * @param ratio extra calls per eligible call, {@code 0..1}
         * @param minPerSecond extra calls allowed per second whatever the traffic, {@code >= 0}
         * @return the budget
         */
        public static Budget of(double ratio, int minPerSecond) {
            return new Budget(ratio, minPerSecond);
        }
    }

    private static final Predicate<Object> NOTHING = c -> false;

    private final Predicate<? super C> idempotent;
    private final int consecutiveFailures;
    private final Duration openFor;
    private final int maxRetries;
    private final Budget retryBudget;
    private final Duration hedgeDelay;
    private final Budget hedgeBudget;
    private final double hedgePercentile; // 0: a fixed delay

    private Resilience(Predicate<? super C> idempotent, int consecutiveFailures, Duration openFor,
            int maxRetries, Budget retryBudget, Duration hedgeDelay, Budget hedgeBudget, double hedgePercentile) {
        this.idempotent = idempotent;
        this.consecutiveFailures = consecutiveFailures;
        this.openFor = openFor;
        this.maxRetries = maxRetries;
        this.retryBudget = retryBudget;
        this.hedgeDelay = hedgeDelay;
        this.hedgeBudget = hedgeBudget;
        this.hedgePercentile = hedgePercentile;
    }

    /**
     * {@return a policy that does nothing: no circuit breaking, no retries, no hedging, no
     * command idempotent}
     *
     * @param <C> the driver's command type
     */
    public static <C extends Command<?>> Resilience<C> none() {
        return new Resilience<>(NOTHING, 0, Duration.ZERO, 0, null, null, null, 0);
    }

    /**
     * This policy with the commands that may be sent twice (retried or hedged): reads, and writes
     * that set rather than add.
     *
     * @param idempotent true for a command that may run twice without harm; called on the sending
     *     thread, so keep it cheap
     * @return a new policy
     */
    public Resilience<C> idempotent(Predicate<? super C> idempotent) {
        return new Resilience<>(Objects.requireNonNull(idempotent, "idempotent"), consecutiveFailures, openFor,
                maxRetries, retryBudget, hedgeDelay, hedgeBudget, hedgePercentile);
    }

    /**
     * This policy with per-shard circuit breaking.
     *
     * @param consecutiveFailures failures in a row ({@code UNAVAILABLE} or {@code TIMEOUT}) that open
     *     a shard's circuit, {@code > 0}
     * @param openFor how long an open circuit fails calls at once before it lets a probe through,
     *     {@code > 0}
     * @return a new policy
     */
    public Resilience<C> circuitBreaker(int consecutiveFailures, Duration openFor) {
        if (consecutiveFailures < 1) {
            throw new IllegalArgumentException("consecutiveFailures: " + consecutiveFailures + " (expected: > 0)");
        }
        positive("openFor", openFor);
        return new Resilience<>(idempotent, consecutiveFailures, openFor, maxRetries, retryBudget,
                hedgeDelay, hedgeBudget, hedgePercentile);
    }

    /**
     * This policy with retries of idempotent calls.
     *
     * @param maxRetries most retries of one call, {@code > 0}
     * @param budget the budget all retries of the driver share
     * @return a new policy
     */
    public Resilience<C> retries(int maxRetries, Budget budget) {
        if (maxRetries < 1) {
            throw new IllegalArgumentException("maxRetries: " + maxRetries + " (expected: > 0)");
        }
        return new Resilience<>(idempotent, consecutiveFailures, openFor, maxRetries,
                Objects.requireNonNull(budget, "budget"), hedgeDelay, hedgeBudget, hedgePercentile);
    }

    /**
     * This policy with hedged idempotent calls (event-loop models).
     *
     * @param delay how long a call waits for its reply before a second copy is sent, {@code > 0}
     * @param budget the budget all hedges of the driver share
     * @return a new policy
     */
    public Resilience<C> hedging(Duration delay, Budget budget) {
        positive("delay", delay);
        return new Resilience<>(idempotent, consecutiveFailures, openFor, maxRetries, retryBudget, delay,
                Objects.requireNonNull(budget, "budget"), 0);
    }

    /**
     * This policy with hedged idempotent calls whose delay follows the backend's own latency: a call
     * with no reply after the live {@code percentile} of the first attempts' reply times gets a second
     * copy (event-loop models). Each loop measures its own calls over windows of
     * {@value #HEDGE_WINDOW_MILLIS} ms (and at least {@value #HEDGE_WINDOW_SAMPLES} replies) and uses
     * the last window's percentile, never less than {@code floor}; until its first window closes a
     * loop does not hedge. So the delay tracks what the machine and the shards do now, where a fixed
     * delay is either too short (hedging calls that were never slow) or too long.
     *
     * @param percentile e.g. {@code 95}: hedge the slowest 5% of calls, {@code > 0} and {@code < 100}
     * @param floor the shortest delay, {@code > 0}
     * @param budget the budget all hedges of the driver share
     * @return a new policy
     */
    public Resilience<C> hedgingAtPercentile(double percentile, Duration floor, Budget budget) {
        if (!(percentile > 0 && percentile < 100)) {
            throw new IllegalArgumentException("percentile: " + percentile + " (expected: > 0 and < 100)");
        }
        positive("floor", floor);
        return new Resilience<>(idempotent, consecutiveFailures, openFor, maxRetries, retryBudget, floor,
                Objects.requireNonNull(budget, "budget"), percentile);
    }

    /** Shortest window of the live hedge percentile: {@value} ms. */
    public static final long HEDGE_WINDOW_MILLIS = 1_000;
    /** Fewest replies in a window of the live hedge percentile: {@value}. */
    public static final int HEDGE_WINDOW_SAMPLES = 200;

    private static void positive(String name, Duration d) {
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
        }
    }

    /**
     * Whether this policy may send {@code command} twice (retry or hedge it).
     *
     * @param command a command of the driver
     * @return the {@link #idempotent} predicate's answer ({@code false} for every command by default)
     */
    public boolean isIdempotent(C command) {
        return idempotent.test(command);
    }

    /** {@return failures in a row that open a circuit, or 0 without circuit breaking} */
    public int consecutiveFailures() {
        return consecutiveFailures;
    }

    /** {@return how long an open circuit stays open before a probe ({@link Duration#ZERO} without circuit breaking)} */
    public Duration openFor() {
        return openFor;
    }

    /** {@return most retries of one call, or 0 without retries} */
    public int maxRetries() {
        return maxRetries;
    }

    /** {@return the retry budget, or {@code null} without retries} */
    public Budget retryBudget() {
        return retryBudget;
    }

    /**
     * {@return the live percentile the hedge delay follows ({@link #hedgingAtPercentile}), or 0 for a
     * fixed delay}
     */
    public double hedgePercentile() {
        return hedgePercentile;
    }

    /** {@return the hedge delay (the floor under a live percentile), or {@code null} without hedging} */
    public Duration hedgeDelay() {
        return hedgeDelay;
    }

    /** {@return the hedge budget, or {@code null} without hedging} */
    public Budget hedgeBudget() {
        return hedgeBudget;
    }

    /** {@return e.g. {@code circuit 5/1s, retries 1 (10% + 10/s), hedge after 20ms (5% + 5/s)}} */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        if (consecutiveFailures > 0) {
            b.append("circuit ").append(consecutiveFailures).append('/').append(openFor.toMillis()).append("ms");
        }
        if (maxRetries > 0) {
            b.append(b.isEmpty() ? "" : ", ").append("retries ").append(maxRetries).append(' ').append(budget(retryBudget));
        }
        if (hedgeDelay != null) {
            b.append(b.isEmpty() ? "" : ", ").append("hedge after ");
            if (hedgePercentile > 0) {
                b.append('p').append(new java.math.BigDecimal(Double.toString(hedgePercentile)).stripTrailingZeros()
                        .toPlainString()).append(" (at least ").append(hedgeDelay.toMillis()).append("ms) ");
            } else {
                b.append(hedgeDelay.toMillis()).append("ms ");
            }
            b.append(budget(hedgeBudget));
        }
        return b.isEmpty() ? "none" : b.toString();
    }

    private static String budget(Budget b) {
        return "(" + Math.round(b.ratio() * 100) + "% + " + b.minPerSecond() + "/s)";
    }
}
