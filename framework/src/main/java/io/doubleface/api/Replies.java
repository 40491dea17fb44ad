package io.doubleface.api;

import io.doubleface.driver.ShardException;
import java.util.ArrayList;
import java.util.List;

/**
 * The outcome of every call of one round, by call number, as {@link FanoutService#merge} sees it:
 * the processed reply of each call that succeeded, and for each one that did not (allowed by
 * {@link FailurePolicy#bestEffort()}, {@link FailurePolicy#quorum} or {@link FanoutPlan#optional})
 * the reason. Valid only during the {@code merge} call it is given to. Not thread-safe.
 *
 * @param <P> the processed reply
 */
public interface Replies<P> {

    /** The number of calls in the round. */
    int size();

    /** The processed reply of call {@code call}, or {@code null} if it has none (see {@link #ok}). */
    P get(int call);

    /** Whether call {@code call} got a reply (that its handler processed). */
    boolean ok(int call);

    /**
     * Why call {@code call} has no reply: the driver's failure, or a {@link ShardException.Kind#TIMEOUT}
     * failure saying the request deadline passed first; {@code null} if it succeeded.
     */
    ShardException failure(int call);

    /** The backend of call {@code call}. */
    Backend<?> backend(int call);

    /** The shard of call {@code call} in its backend. */
    int shard(int call);

    /** The number of calls without a reply. */
    int failed();

    /** The round number (0 for the calls of {@code plan}). */
    int round();

    /**
     * The processed replies of the calls that succeeded, in call order. Safe to keep after merge
     * (a new list, or a view of slots the framework never reuses).
     */
    default List<P> values() {
        List<P> out = new ArrayList<>(size() - failed());
        for (int i = 0; i < size(); i++) {
            if (ok(i)) {
                out.add(get(i));
            }
        }
        return out;
    }

    /** The failures of the calls without a reply, in call order (a new list; empty if none). */
    default List<ShardException> failures() {
        List<ShardException> out = new ArrayList<>(failed());
        for (int i = 0; i < size(); i++) {
            if (!ok(i)) {
                out.add(failure(i));
            }
        }
        return out;
    }
}
