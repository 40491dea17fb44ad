package io.doubleface.internal.engine;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.ShardException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first connection of one client of a configuration (warm start): one backend's client on one
 * loop ({@link LoopClient#connect()}, started on that loop) or its blocking client
 * ({@link BlockingClient#connect()}, on a virtual thread of its own). A failed attempt is retried
 * after a backoff that grows from {@value #RETRY_MIN_MILLIS} to {@value #RETRY_MAX_MILLIS} ms,
 * until the connection is made or the warm-up is cancelled (its client closes).
 *
 * <p>Only the first connection counts: once made, a later loss is the driver's business
 * (reconnect on use), not this warm-up's.
 *
 * <p>Threading: started by the thread that builds a model; its state is read from any thread.
 */
final class ClientWarmup {

    private static final Logger log = LoggerFactory.getLogger(ClientWarmup.class);

    /** First retry delay after a failed attempt: {@value} ms (doubled on each failure). */
    static final long RETRY_MIN_MILLIS = 100;
    /** Longest retry delay: {@value} ms. */
    static final long RETRY_MAX_MILLIS = 2000;

    private final String backend;
    private final String where;
    private final CompletableFuture<Void> connected = new CompletableFuture<>();
    private volatile String failure;
    private volatile boolean cancelled;
    private volatile Thread thread;

    private ClientWarmup(String backend, String where) {
        this.backend = backend;
        this.where = where;
    }

    /**
     * Starts connecting {@code client} on its loop.
     *
     * @param backend the backend's name
     * @param where the loop's name, e.g. {@code io-0}
     */
    static ClientWarmup start(String backend, String where, LoopClient<?> client) {
        ClientWarmup w = new ClientWarmup(backend, where);
        w.scheduleAttempt(client, 0, RETRY_MIN_MILLIS);
        return w;
    }

    /**
     * Starts connecting {@code client} on a virtual thread.
     *
     * @param backend the backend's name
     */
    static ClientWarmup start(String backend, BlockingClient<?> client) {
        ClientWarmup w = new ClientWarmup(backend, "blocking");
        w.thread = Thread.ofVirtual().name("warm-" + backend).start(() -> w.runBlocking(client));
        return w;
    }

    private void scheduleAttempt(LoopClient<?> client, long delayMillis, long nextDelay) {
        try {
            if (delayMillis == 0) {
                client.loop().execute(() -> attempt(client, nextDelay));
            } else {
                client.loop().schedule(() -> attempt(client, nextDelay), delayMillis, TimeUnit.MILLISECONDS);
            }
        } catch (RejectedExecutionException e) {
            cancelled = true; // the loop is shutting down: so is the server
        }
    }

    private void attempt(LoopClient<?> client, long delay) {
        if (cancelled) {
            return;
        }
        CompletableFuture<Void> f;
        try {
            f = client.connect();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((v, e) -> {
            if (e == null) {
                connected();
            } else if (!cancelled) {
                failed(e);
                scheduleAttempt(client, delay, Math.min(RETRY_MAX_MILLIS, delay * 2));
            }
        });
    }

    private void runBlocking(BlockingClient<?> client) {
        long delay = RETRY_MIN_MILLIS;
        while (!cancelled) {
            try {
                client.connect();
                connected();
                return;
            } catch (ShardException | RuntimeException e) {
                if (cancelled) {
                    return;
                }
                failed(e);
            }
            try {
                Thread.sleep(delay); // the retry backoff, not a synchronisation
            } catch (InterruptedException e) {
                return;
            }
            delay = Math.min(RETRY_MAX_MILLIS, delay * 2);
        }
    }

    private void connected() {
        boolean retried = failure != null;
        failure = null;
        if (connected.complete(null) && retried) {
            log.info("backend {} ({}): connected", backend, where);
        }
    }

    private void failed(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        String why = e instanceof ShardException ? e.getMessage() : e.toString();
        if (failure == null) {
            log.warn("backend {} ({}): cannot connect yet, retrying: {}", backend, where, why);
        } else {
            log.debug("backend {} ({}): cannot connect yet, retrying: {}", backend, where, why);
        }
        failure = why;
    }

    /** Stops retrying (the client is being closed). */
    void cancel() {
        cancelled = true;
        Thread t = thread;
        if (t != null) {
            t.interrupt();
        }
    }

    /** {@return the backend's name} */
    String backend() {
        return backend;
    }

    /** {@return where the client runs: a loop's name, or {@code blocking}} */
    String where() {
        return where;
    }

    /** {@return whether the first connection is made} */
    boolean isConnected() {
        return connected.isDone();
    }

    /** {@return completed when the first connection is made} */
    CompletableFuture<Void> whenConnected() {
        return connected;
    }

    /** {@return why the last attempt failed, or {@code null} (connected, or the first attempt under way)} */
    String failure() {
        return failure;
    }
}
