package io.doubleface.internal.loop;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place doubleface creates threads: named threads (so {@code /proc} counters can be
 * grouped by name), daemon, with an uncaught-exception handler that logs.
 *
 * <p>Names are {@code <prefix>-<n>} and are kept to 15 characters, the Linux {@code comm} limit, so
 * {@link ThreadStats} sees them whole.
 */
public final class Threads {

    private static final Logger log = LoggerFactory.getLogger(Threads.class);

    private static final Thread.UncaughtExceptionHandler LOG_UNCAUGHT =
            (t, e) -> log.error("uncaught exception in thread {}", t.getName(), e);

    /** Longest thread name Linux keeps in {@code /proc/<pid>/task/<tid>/comm}: {@value}. */
    public static final int MAX_NAME = 15;

    private Threads() {}

    /**
     * A factory of platform threads named {@code prefix-0}, {@code prefix-1}, …; Netty
     * {@link FastThreadLocalThread}s so Netty's thread-locals are fast on them too.
     *
     * @throws IllegalArgumentException if the prefix leaves no room for an index
     */
    public static ThreadFactory platform(String prefix) {
        if (prefix.isEmpty() || prefix.length() > MAX_NAME - 3) {
            throw new IllegalArgumentException("thread name prefix: '" + prefix + "' (expected: 1.."
                    + (MAX_NAME - 3) + " characters)");
        }
        AtomicInteger next = new AtomicInteger();
        return r -> {
            Thread t = new FastThreadLocalThread(r, prefix + "-" + next.getAndIncrement());
            t.setDaemon(true);
            t.setUncaughtExceptionHandler(LOG_UNCAUGHT);
            return t;
        };
    }

    /** A factory of virtual threads named {@code prefix-<n>}, for the thread-per-request variant. */
    public static ThreadFactory virtual(String prefix) {
        return Thread.ofVirtual().name(prefix + "-", 0).uncaughtExceptionHandler(LOG_UNCAUGHT).factory();
    }
}
