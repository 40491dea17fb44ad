package io.doubleface.cli.demo;

/**
 * The demo's measurements of one configuration.
 *
 * @param configuration canonical configuration name
 * @param closedThroughput closed-loop responses per second
 * @param closedRequests closed-loop measured responses
 * @param closedErrors closed-loop errors
 * @param openRate offered open-loop rate, requests/s
 * @param openAchieved open-loop requests sent per second
 * @param openRequests open-loop measured responses
 * @param openErrors open-loop errors
 * @param rateKept whether the generator kept the open-loop schedule
 * @param sendLagP99 open-loop p99 of the generator's send lag (dispatch − intended), ms, or {@code null}
 * @param p50 open-loop p50 from the intended send time, ms, or {@code null} (too few samples)
 * @param p99 open-loop p99, ms, or {@code null}
 * @param p999 open-loop p99.9, ms, or {@code null}
 * @param max open-loop max, ms, or {@code null}
 * @param closedCounters mid-tier counter deltas over the closed-loop run
 * @param openCounters mid-tier counter deltas over the open-loop run
 */
public record DemoRow(String configuration, double closedThroughput, long closedRequests, long closedErrors,
        double openRate, double openAchieved, long openRequests, long openErrors, boolean rateKept, Double sendLagP99, Double p50,
        Double p99, Double p999, Double max, Counters closedCounters, Counters openCounters) {

    /**
     * Mid-tier counter deltas over one run.
     *
     * @param iterations event-loop wake-ups (iterations)
     * @param events I/O events handled
     * @param contextSwitches context switches of the mid-tier's threads, or {@code -1} if unreadable
     * @param requests responses of the run (the denominator of {@link #switchesPerRequest})
     */
    public record Counters(long iterations, long events, long contextSwitches, long requests) {
        /** I/O events per wake-up (0 without wake-ups). */
        public double eventsPerWakeup() {
            return iterations == 0 ? 0 : (double) events / iterations;
        }

        /** Context switches per request, or {@code null} if not readable or no requests. */
        public Double switchesPerRequest() {
            return contextSwitches < 0 || requests == 0 ? null : (double) contextSwitches / requests;
        }
    }
}
