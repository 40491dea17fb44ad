package io.doubleface.internal.engine;


/**
 * Observes the requests an engine admits and answers: the hook the load adapter
 * ({@link io.doubleface.tune}) uses for its load monitor and its live latency table.
 *
 * <p>Threading: {@link #admitted} is called on the upstream loop of every request, concurrently
 * from all loops, on the request path: it must be lock-free and should not allocate.
 * {@link #finished} is called once per admitted request on whichever thread answers it.
 */
public interface EngineListener {

    /** A request was admitted at {@code nanoTime} ({@link System#nanoTime()}). */
    void admitted(long nanoTime);

    /**
     * An admitted request was answered.
     *
     * @param model the configuration it ran under
     * @param latencyNanos from admission to the answer
     * @param outcome {@link Outcome#OK} or the failure
     */
    void finished(ThreadingModel model, long latencyNanos, Outcome outcome);
}
