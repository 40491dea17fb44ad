package io.doubleface.tune;

/**
 * Estimates the offered load (arrivals per second) from request arrival times. A pluggable axis
 * of the load adapter: {@link RingBufferDetector} (event-based, μTune's) and
 * {@link WindowDetector} (fixed time windows, the baseline); {@link #create} builds one by name.
 *
 * <p>Threading: {@link #arrival} is called at admission by every upstream I/O loop at once; it is
 * lock-free and allocation-free. {@link #rate} is called by one thread (the adapter's) at a time.
 * Times are {@link System#nanoTime()} values (or a test's fake clock).
 */
public interface LoadDetector {

    /** Records one arrival at {@code nanoTime}. */
    void arrival(long nanoTime);

    /** The estimated arrival rate in requests per second at {@code nowNanos}; 0 before any estimate. */
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
