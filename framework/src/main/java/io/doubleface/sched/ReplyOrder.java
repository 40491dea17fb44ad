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
public interface ReplyOrder {

    /** The policy's name, as given on the command line. */
    String name();

    /**
     * Writes the processing order of {@code batch[0..size)} into {@code out[0..size)}, a
     * permutation of the batch. Must not allocate per call on the steady path.
     */
    void order(PendingReply[] batch, int size, PendingReply[] out);

    /**
     * Creates a fresh instance of the named policy: {@code fifo}, {@code completion-first} (alias
     * {@code cf}) or {@code completion-first-arrival} (alias {@code cfa}).
     */
    static ReplyOrder create(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "fifo" -> new FifoOrder();
            case "completion-first", "cf" -> new CompletionFirstOrder();
            case "completion-first-arrival", "cfa" -> CompletionFirstOrder.arrivalOrder();
            default -> throw new IllegalArgumentException(
                    "reply order: '" + name + "' (expected: fifo, completion-first or completion-first-arrival)");
        };
    }

    /**
     * A factory of fresh instances of the named policy (see {@link #create}), one per call: what a
     * server needs to give each loop its own. The name is checked now.
     *
     * @throws IllegalArgumentException if the policy is unknown
     */
    static Supplier<ReplyOrder> factory(String name) {
        String canonical = create(name).name();
        return () -> create(canonical);
    }
}
