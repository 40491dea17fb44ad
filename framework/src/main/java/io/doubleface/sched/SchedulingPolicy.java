package io.doubleface.sched;

import java.util.Locale;
import java.util.function.Supplier;

/**
 * The order in which the DoubleFace scheduler processes the replies of one loop iteration.
 * One interface, several policies; chosen per server (and per configuration name).
 *
 * <p>Threading: an instance is created per loop and used only by that loop's thread, so
 * implementations may keep scratch state without synchronisation.
 */
public interface SchedulingPolicy {

    /** The policy's name, as given on the command line. */
    String name();

    /**
     * Writes the processing order of {@code batch[0..size)} into {@code out[0..size)}, a
     * permutation of the batch. Must not allocate per call on the steady path.
     */
    void order(PendingReply[] batch, int size, PendingReply[] out);

    /**
     * Whether this policy puts first, in any batch, a reply that arrived first in it and completes
     * its request (the request's last outstanding reply). When it does, the scheduler processes
     * such a reply at once, as it arrives before any other reply of the loop iteration, instead of
     * parking it for the end of the iteration: the processing order is the one {@link #order} would
     * give, and that reply's request is answered without waiting for the rest of the iteration (at
     * fanout 1 every reply is such a reply). The built-in policies do; the default is {@code false},
     * so a policy of your own keeps every reply for the end of the iteration unless it says so.
     *
     * @return whether a lone completing reply may be processed at once
     */
    default boolean completingReplyFirst() {
        return false;
    }

    /**
     * Creates a fresh instance of the named policy: {@code fifo}, {@code completion-first} (alias
     * {@code cf}) or {@code completion-first-arrival} (alias {@code cfa}).
     */
    static SchedulingPolicy create(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "fifo" -> new FifoPolicy();
            case "completion-first", "cf" -> new CompletionFirstPolicy();
            case "completion-first-arrival", "cfa" -> CompletionFirstPolicy.arrivalOrder();
            default -> throw new IllegalArgumentException(
                    "scheduling policy: '" + name + "' (expected: fifo, completion-first or completion-first-arrival)");
        };
    }

    /**
     * A factory of fresh instances of the named policy (see {@link #create}), one per call: what a
     * server needs to give each loop its own. The name is checked now.
     *
     * @throws IllegalArgumentException if the policy is unknown
     */
    static Supplier<SchedulingPolicy> factory(String name) {
        String canonical = create(name).name();
        return () -> create(canonical);
    }
}
