package io.doubleface.api;

/**
 * What a failed or late shard call does to its request.
 *
 * <ul>
 *   <li>{@link #failFast()} (the default): the first failed call answers the request at once —
 *       {@code 504} for a timeout, {@code 503} otherwise — and the deadline answers {@code 504};
 *   <li>{@link #bestEffort()}: a failed call is recorded and the round goes on; when every call has
 *       answered or failed, or when the request deadline passes, {@link FanoutService#merge} runs
 *       with what arrived and {@link Replies} says which calls are missing and why;
 *   <li>{@link #quorum(int) quorum(n)}: as best effort, but a round with fewer than {@code n}
 *       successful replies fails the request ({@code 503}, or {@code 504} at the deadline).
 * </ul>
 *
 * <p>A round of no calls (a plan that found nothing to ask) is merged at once under every policy,
 * a quorum included: no call failed.
 *
 * <p>Set per request with {@link FanoutPlan#failurePolicy} (it stays for later rounds until set
 * again); a single call can be made optional with {@link FanoutPlan#optional}. Under best effort,
 * set the driver's call timeout below the request deadline if the answer should not wait for the
 * deadline when a shard is slow. Immutable.
 */
public final class FailurePolicy {

    private static final FailurePolicy FAIL_FAST = new FailurePolicy(-1);
    private static final FailurePolicy BEST_EFFORT = new FailurePolicy(0);

    private final int minReplies;

    private FailurePolicy(int minReplies) {
        this.minReplies = minReplies;
    }

    /** {@return the policy where any failed call fails the request (the default)} */
    public static FailurePolicy failFast() {
        return FAIL_FAST;
    }

    /** {@return the policy that merges whatever arrived; failed and late calls are reported by {@link Replies}} */
    public static FailurePolicy bestEffort() {
        return BEST_EFFORT;
    }

    /**
     * Merge what arrived if at least {@code minReplies} calls of the round succeeded; else fail.
     *
     * @param minReplies successful replies a round needs, {@code >= 1}
     * @return a new quorum policy
     * @throws IllegalArgumentException if {@code minReplies < 1}
     */
    public static FailurePolicy quorum(int minReplies) {
        if (minReplies < 1) {
            throw new IllegalArgumentException("minReplies: " + minReplies + " (expected: > 0)");
        }
        return new FailurePolicy(minReplies);
    }

    /** {@return whether a failed call fails the request at once (only for {@link #failFast()})} */
    public boolean isFailFast() {
        return minReplies < 0;
    }

    /** {@return the successful replies a round needs to be merged (0 for best effort and fail-fast)} */
    public int minReplies() {
        return Math.max(0, minReplies);
    }

    @Override
    public String toString() {
        return minReplies < 0 ? "fail-fast" : minReplies == 0 ? "best-effort" : "quorum(" + minReplies + ")";
    }
}
