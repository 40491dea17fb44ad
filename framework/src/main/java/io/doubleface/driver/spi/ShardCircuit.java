package io.doubleface.driver.spi;

import io.doubleface.driver.ShardException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The circuit breaker of one shard of a {@link ResilientDriver}: closed → (N failures in a row)
 * open → (after {@code openFor}) half-open, one probe let through → closed on its success, open
 * again on its failure.
 *
 * <p>Threading: thread-safe; shared by every client (every loop, every blocking caller) of the
 * driver. Lock-free: the state is {@code openUntil} (0 = closed) plus a probe flag.
 */
final class ShardCircuit {

    private final int shard;
    private final int threshold;
    private final long openForNanos;
    private final AtomicInteger consecutive = new AtomicInteger();
    private final AtomicBoolean probing = new AtomicBoolean();
    private final LongAdder opened;
    /** nanoTime until which calls fail at once; 0 when closed. Never 0 when open (see {@link #open}). */
    private volatile long openUntil;
    private volatile String lastFailure = "";

    ShardCircuit(int shard, int threshold, long openForNanos, LongAdder opened) {
        this.shard = shard;
        this.threshold = threshold;
        this.openForNanos = openForNanos;
        this.opened = opened;
    }

    /** {@return whether a call may go to the shard now; in half-open state, true for one probe only} */
    boolean allow(long now) {
        long until = openUntil;
        if (until == 0) {
            return true;
        }
        if (now - until < 0) {
            return false;
        }
        return probing.compareAndSet(false, true);
    }

    /** {@return whether the circuit is open or half-open} */
    boolean isOpen() {
        return openUntil != 0;
    }

    void onSuccess() {
        consecutive.set(0);
        if (openUntil != 0) {
            openUntil = 0;
            probing.set(false);
        }
    }

    /** A call failed; {@code counts}: whether its kind says the shard is down or stuck. */
    void onFailure(ShardException cause) {
        ShardException.Kind k = cause.kind();
        if (k != ShardException.Kind.UNAVAILABLE && k != ShardException.Kind.TIMEOUT) {
            consecutive.set(0); // the shard answered
            return;
        }
        lastFailure = cause.kind().name().toLowerCase(java.util.Locale.ROOT) + ": " + cause.reason();
        if (openUntil != 0) {
            if (probing.get()) { // the probe (or a call from before the circuit opened) failed
                open();
                probing.set(false);
            }
            return;
        }
        if (consecutive.incrementAndGet() == threshold) { // exactly one thread crosses it
            open();
            opened.increment();
        }
    }

    private void open() {
        long until = System.nanoTime() + openForNanos;
        openUntil = until == 0 ? 1 : until;
        consecutive.set(0);
    }

    /** {@return the failure a call gets while the circuit is open} */
    ShardException openFailure(long now) {
        long until = openUntil;
        long inMillis = until == 0 ? 0 : Math.max(0, (until - now) / 1_000_000);
        return new ShardException(ShardException.Kind.UNAVAILABLE, shard, "circuit open after " + threshold
                + " failures in a row (last: " + lastFailure + "); next probe in " + inMillis + " ms");
    }
}
