package io.doubleface.internal.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;

/**
 * Rate-limited logging of one kind of per-request error (a service's decode, encode or plan
 * throwing): at most one log line with its stack trace per {@value #INTERVAL_SECONDS} s, the
 * others counted and reported with the next line ("N more like it ... not logged"). So a bug hit
 * by every request under load costs a counter increment per request, not a stack trace. Every
 * occurrence is counted ({@link #count}, {@link #unlogged}: {@code /admin/stats} {@code errors},
 * {@code /metrics} {@code doubleface_errors_total}, {@code doubleface_errors_unlogged_total}).
 *
 * <p>Thread-safe and lock-free.
 */
public final class ErrorLog {

    /** The least time between two logged lines of one kind: {@value} s. */
    public static final long INTERVAL_SECONDS = 10;
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(INTERVAL_SECONDS);

    private final String kind;
    private final AtomicLong nextLogAt = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);
    private final LongAdder count = new LongAdder();
    private final LongAdder unlogged = new LongAdder();
    private final LongAdder unloggedSinceLine = new LongAdder();

    /**
     * @param kind the label in stats and metrics, e.g. {@code decode}
     */
    public ErrorLog(String kind) {
        this.kind = kind;
    }

    /**
     * Counts one error and logs it at ERROR with {@code cause}'s stack trace, unless a line of this
     * kind was logged less than {@value #INTERVAL_SECONDS} s ago.
     *
     * @param log the caller's logger
     * @param message what failed
     * @param cause the exception
     */
    public void error(Logger log, String message, Throwable cause) {
        String line = lineToLog(message);
        if (line != null) {
            log.error(line, cause);
        }
    }

    /**
     * Counts one failure and logs {@code message} at WARN, without a stack trace, unless a line of
     * this kind was logged less than {@value #INTERVAL_SECONDS} s ago: for failures that are not
     * the server's bugs (a shard down) and come in storms.
     *
     * @param log the caller's logger
     * @param message what failed, with the detail
     */
    public void warn(Logger log, String message) {
        String line = lineToLog(message);
        if (line != null) {
            log.warn(line);
        }
    }

    /** Counts one; the line to log now (with how many went unlogged before it), or {@code null} if too soon. */
    private String lineToLog(String message) {
        count.increment();
        long now = System.nanoTime();
        long next = nextLogAt.get();
        if (now - next >= 0 && nextLogAt.compareAndSet(next, now + INTERVAL_NANOS)) {
            long skipped = unloggedSinceLine.sumThenReset();
            return skipped == 0 ? message : message + " (and " + skipped + " more like it in the last "
                    + INTERVAL_SECONDS + " s, not logged)";
        }
        unlogged.increment();
        unloggedSinceLine.increment();
        return null;
    }

    /** {@return the label, e.g. {@code decode}} */
    public String kind() {
        return kind;
    }

    /** {@return every error of this kind since start} */
    public long count() {
        return count.sum();
    }

    /** {@return the errors of this kind that were counted but not logged (rate limit)} */
    public long unlogged() {
        return unlogged.sum();
    }
}
