package io.doubleface.jmh;

import java.util.concurrent.locks.LockSupport;

/**
 * A reusable one-shot completion signal between the benchmark thread and a loop or pool thread:
 * the benchmark thread {@link #arm()}s it, starts work elsewhere and {@link #await()}s; the last
 * step of that work calls {@link #complete()}. The waiter spins briefly, then parks, so the
 * signal itself adds about one wake-up per operation (amortised by batching many round trips
 * into one operation where that matters).
 *
 * <p>Threading: one waiter (the benchmark thread) and one completer at a time.
 */
public final class Signal {

    private static final int SPINS = 2_000;

    private volatile boolean done;
    private volatile Thread waiter;

    /** Benchmark thread: prepares for the next operation. */
    public void arm() {
        done = false;
        waiter = Thread.currentThread();
    }

    /** Any thread: the operation finished. */
    public void complete() {
        done = true;
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** Benchmark thread: waits until {@link #complete()}. */
    public void await() {
        for (int i = 0; i < SPINS; i++) {
            if (done) {
                return;
            }
            Thread.onSpinWait();
        }
        while (!done) {
            LockSupport.parkNanos(this, 1_000_000L);
        }
    }
}
