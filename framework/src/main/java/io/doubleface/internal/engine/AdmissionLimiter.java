package io.doubleface.internal.engine;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The engine's admission control (see {@code io.doubleface.server.Admission}): {@link #tryAcquire}
 * either grants a request a place in flight, returning what to run when it is answered, or refuses
 * it ({@code null}). Thread-safe: called from every upstream loop, released from whichever thread
 * answers.
 */
public abstract class AdmissionLimiter {

    private final LongAdder refused = new LongAdder();

    AdmissionLimiter() {}

    /**
     * A fixed limit: a compare-and-set loop on one counter; the release runs {@code finished} too.
     *
     * @param limit the most requests in flight
     * @param finished run when a granted request is answered (the engine's own count)
     * @return the limiter
     */
    public static AdmissionLimiter fixed(int limit, Runnable finished) {
        return new Fixed(limit, finished);
    }

    /**
     * A limit adapted to latency: Netflix {@code concurrency-limits}' {@link SimpleLimiter} over a
     * {@link Gradient2Limit}, sampling each granted request's time from admission to answer.
     *
     * @param initial the starting limit
     * @param min the lowest limit
     * @param max the highest limit
     * @param finished run when a granted request is answered (the engine's own count)
     * @return the limiter
     */
    public static AdmissionLimiter adaptive(int initial, int min, int max, Runnable finished) {
        return new Adaptive(initial, min, max, finished);
    }

    /**
     * Asks for a place in flight.
     *
     * @return what to run exactly once when the request is answered, or {@code null} when refused
     */
    abstract Runnable tryAcquire();

    /** {@return the current limit} */
    public abstract int limit();

    /** {@return the requests granted and not yet answered} */
    public abstract int inFlight();

    /** {@return {@code fixed} or {@code adaptive}} */
    public abstract String mode();

    /** {@return the requests refused since start} */
    public long refused() {
        return refused.sum();
    }

    final Runnable refuse() {
        refused.increment();
        return null;
    }

    private static final class Fixed extends AdmissionLimiter {
        private final int limit;
        private final AtomicInteger inFlight = new AtomicInteger();
        private final Runnable release;

        Fixed(int limit, Runnable finished) {
            this.limit = limit;
            this.release = () -> {
                inFlight.decrementAndGet();
                finished.run();
            };
        }

        @Override
        Runnable tryAcquire() {
            for (;;) {
                int n = inFlight.get();
                if (n >= limit) {
                    return refuse();
                }
                if (inFlight.compareAndSet(n, n + 1)) {
                    return release;
                }
            }
        }

        @Override
        public int limit() {
            return limit;
        }

        @Override
        public int inFlight() {
            return inFlight.get();
        }

        @Override
        public String mode() {
            return "fixed";
        }
    }

    private static final class Adaptive extends AdmissionLimiter {
        private final SimpleLimiter<Void> limiter;
        private final Runnable finished;

        Adaptive(int initial, int min, int max, Runnable finished) {
            this.finished = finished;
            this.limiter = SimpleLimiter.newBuilder()
                    .named("doubleface")
                    .limit(Gradient2Limit.newBuilder().initialLimit(initial).minLimit(min).maxConcurrency(max).build())
                    .build();
        }

        @Override
        Runnable tryAcquire() {
            Optional<Limiter.Listener> granted = limiter.acquire(null);
            if (granted.isEmpty()) {
                return refuse();
            }
            Limiter.Listener l = granted.get();
            return () -> {
                // every answer is a latency sample (a 504 at the deadline is the strongest one);
                // Gradient2 does not use the dropped flag
                l.onSuccess();
                finished.run();
            };
        }

        @Override
        public int limit() {
            return limiter.getLimit();
        }

        @Override
        public int inFlight() {
            return limiter.getInflight();
        }

        @Override
        public String mode() {
            return "adaptive";
        }
    }
}
