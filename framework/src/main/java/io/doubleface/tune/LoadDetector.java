package io.doubleface.tune;

/**
 * Estimates the offered load (arrivals per second) from request arrival times: the first stage
 * of the load adapter's monitor, which smooths the estimate (median over
 * {@link TuneSettings#smoothing()}) and caps it by an admission count before a
 * {@link Decider} sees it. A pluggable axis: {@link RingBufferDetector} (event-based,
 * μTune's) and {@link WindowDetector} (fixed time windows, the baseline), built by name with
 * {@link #create}; your own through {@link TuneSettings#withDetector(java.util.function.Supplier)},
 * one instance per adapter.
 *
 * <p>Threading, and what an implementation must not do:
 * <ul>
 *   <li>{@link #arrival} is called at admission of every request, on the upstream I/O loop that
 *       admitted it — by all the loops at once. It is on the request path of every request: it
 *       must be thread-safe without locks, should not allocate, and must never block or do I/O
 *       (a blocked I/O loop stalls every connection on it). One atomic increment is the budget
 *       (the built-in ones cost 3–4 ns, docs/tuning.md).
 *   <li>{@link #rate} and {@link #describe} are called by one thread at a time — the adapter's
 *       ({@code tune-0}), {@link #rate} every {@link TuneSettings#interval()} (1 ms by default) —
 *       so state read and written only there needs no synchronisation; it must not block either.
 * </ul>
 * Times are {@link System#nanoTime()} values (or a test's fake clock); a rate of 0 means "no
 * estimate" and the adapter takes no decision on it.
 */
public interface LoadDetector {

    /** Records one arrival at {@code nanoTime} (any I/O loop, concurrently; lock-free). */
    void arrival(long nanoTime);

    /** The estimated arrival rate in requests per second at {@code nowNanos}; 0 before any estimate (adapter thread). */
    double rate(long nowNanos);

    /** A short description for banners and stats, e.g. {@code ring-32} or {@code window-5ms}. */
    String describe();

    /**
     * A detector by name: {@code ring} / {@code ring-N} (event-based, last N arrivals, default
     * {@value RingBufferDetector#DEFAULT_SIZE}) or {@code window} / {@code window-Nms} (fixed
     * windows, default {@value WindowDetector#DEFAULT_WINDOW_MS} ms).
     *
     * @throws IllegalArgumentException for any other name
     */
    static LoadDetector create(String name) {
        String n = name == null ? "" : name.strip();
        try {
            if (n.equals("ring")) {
                return new RingBufferDetector(RingBufferDetector.DEFAULT_SIZE);
            }
            if (n.startsWith("ring-")) {
                return new RingBufferDetector(Integer.parseInt(n.substring(5)));
            }
            if (n.equals("window")) {
                return new WindowDetector(WindowDetector.DEFAULT_WINDOW_MS * 1_000_000L);
            }
            if (n.startsWith("window-") && n.endsWith("ms")) {
                return new WindowDetector(Long.parseLong(n.substring(7, n.length() - 2)) * 1_000_000L);
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new IllegalArgumentException("load detector '" + name + "' (expected: ring, ring-N, window, window-Nms)");
    }
}
