package io.doubleface.cli;

import io.doubleface.internal.loop.Threads;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends a long-running command ({@code serve}, {@code leaf}) and closes its servers cleanly.
 *
 * <pre>
 *   command thread:  start servers ─▶ awaitThenClose(servers) ─ waits ─▶ closes them ─▶ returns
 *   SIGINT/SIGTERM:  JVM shutdown hook ─▶ stop() ─▶ waits until the servers are closed
 *   tests:           stop()
 * </pre>
 *
 * The closing runs on the command's thread; the shutdown hook only waits for it (at most
 * {@value #CLOSE_WAIT_SECONDS} s), so the JVM does not exit half-way through a close.
 *
 * <p>Threading: {@link #stop()} from any thread, any number of times; {@link #awaitThenClose}
 * once, from the command's thread.
 */
final class StopSignal {

    private static final Logger log = LoggerFactory.getLogger(StopSignal.class);

    /** Longest the shutdown hook waits for the servers to close: {@value} s. */
    static final long CLOSE_WAIT_SECONDS = 10;

    private final CountDownLatch stopRequested = new CountDownLatch(1);
    private final CountDownLatch closed = new CountDownLatch(1);
    private final boolean onJvmShutdown;

    private StopSignal(boolean onJvmShutdown) {
        this.onJvmShutdown = onJvmShutdown;
    }

    /** A signal raised by the JVM's shutdown (SIGINT, SIGTERM, System.exit) — and by {@link #stop()}. */
    static StopSignal onJvmShutdown() {
        return new StopSignal(true);
    }

    /** A signal raised only by {@link #stop()}. */
    static StopSignal manual() {
        return new StopSignal(false);
    }

    /** Asks the command to stop. */
    void stop() {
        stopRequested.countDown();
    }

    /** Whether {@link #awaitThenClose} has finished closing. */
    boolean isClosed() {
        return closed.getCount() == 0;
    }

    /**
     * Blocks until the stop is requested, then closes {@code resources} in the given order
     * ({@code null}s skipped), also when interrupted.
     */
    void awaitThenClose(AutoCloseable... resources) {
        awaitThenClose(java.time.Duration.ofSeconds(CLOSE_WAIT_SECONDS), resources);
    }

    /** {@link #awaitThenClose(AutoCloseable...)}, the shutdown hook waiting up to {@code closeWait} for the close. */
    void awaitThenClose(java.time.Duration closeWait, AutoCloseable... resources) {
        Thread hook = null;
        if (onJvmShutdown) {
            hook = Threads.platform("shutdown").newThread(() -> {
                stop();
                try {
                    if (!closed.await(closeWait.toMillis(), TimeUnit.MILLISECONDS)) {
                        log.warn("servers did not close within {} ms; exiting anyway", closeWait.toMillis());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Runtime.getRuntime().addShutdownHook(hook);
        }
        try {
            stopRequested.await();
            log.info("stopping");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeAll(resources);
            closed.countDown();
        }
    }

    static void closeAll(AutoCloseable... resources) {
        for (AutoCloseable r : resources) {
            if (r == null) {
                continue;
            }
            try {
                r.close();
            } catch (Exception e) {
                log.warn("closing {} failed: {}", r, e.toString());
            }
        }
    }
}
