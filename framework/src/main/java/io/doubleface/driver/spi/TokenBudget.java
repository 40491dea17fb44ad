package io.doubleface.driver.spi;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The live state of a {@link Resilience.Budget}: a balance in thousandths of a token, fed by
 * deposits per eligible call and by the floor per second, drawn one token per extra call.
 *
 * <p>Threading: thread-safe and lock-free (CAS on two atomics); shared by every client of a driver.
 */
final class TokenBudget {

    private static final long MILLI = 1_000;
    private static final long SECOND_NANOS = 1_000_000_000L;

    private final long depositMilli;
    private final long floorPerSecond;
    private final long capMilli;
    private final AtomicLong balance;
    private final AtomicLong lastRefill;

    TokenBudget(Resilience.Budget budget) {
        this.depositMilli = Math.round(budget.ratio() * MILLI);
        this.floorPerSecond = budget.minPerSecond();
        this.capMilli = Math.max(Resilience.Budget.MIN_CAP,
                (long) budget.minPerSecond() * Resilience.Budget.CAP_SECONDS) * MILLI;
        // Start with one second of the floor, so the first failures after start can be retried.
        this.balance = new AtomicLong(Math.min(capMilli, floorPerSecond * MILLI));
        this.lastRefill = new AtomicLong(System.nanoTime());
    }

    /** An eligible call was sent: adds its share of a token. */
    void deposit() {
        if (depositMilli > 0) {
            add(depositMilli);
        }
    }

    /** {@return whether a token was taken for one extra call} */
    boolean tryWithdraw() {
        refill();
        for (;;) {
            long b = balance.get();
            if (b < MILLI) {
                return false;
            }
            if (balance.compareAndSet(b, b - MILLI)) {
                return true;
            }
        }
    }

    /** {@return the balance in whole tokens (for stats)} */
    long tokens() {
        return balance.get() / MILLI;
    }

    private void refill() {
        if (floorPerSecond == 0) {
            return;
        }
        long now = System.nanoTime();
        long last = lastRefill.get();
        long elapsed = now - last;
        // at most once per millisecond of accrued floor, by the thread that wins the CAS
        if (elapsed * floorPerSecond >= SECOND_NANOS / MILLI && lastRefill.compareAndSet(last, now)) {
            add(Math.min(capMilli, elapsed * floorPerSecond / (SECOND_NANOS / MILLI)));
        }
    }

    private void add(long milli) {
        for (;;) {
            long b = balance.get();
            long n = Math.min(capMilli, b + milli);
            if (n == b || balance.compareAndSet(b, n)) {
                return;
            }
        }
    }
}
