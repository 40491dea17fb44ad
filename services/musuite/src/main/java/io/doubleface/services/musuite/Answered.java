package io.doubleface.services.musuite;

import io.doubleface.api.Replies;
import java.util.ArrayList;
import java.util.List;

/**
 * A round's replies split for a best-effort merge: the processed replies of the calls that
 * succeeded, in call order, and the shards of those that did not (failed or late).
 *
 * @param <P> the processed reply
 * @param values the successful calls' processed replies, in call order
 * @param missing the shards of the failed or late calls, in call order
 */
public record Answered<P>(List<P> values, List<Integer> missing) {

    /**
     * Splits {@code replies}.
     *
     * @param <P> the processed reply
     * @param replies the round's replies (valid only during merge: the lists are copied out)
     * @return the split
     */
    public static <P> Answered<P> of(Replies<P> replies) {
        List<P> values = new ArrayList<>(replies.size());
        List<Integer> missing = new ArrayList<>();
        for (int i = 0; i < replies.size(); i++) {
            if (replies.ok(i)) {
                values.add(replies.get(i));
            } else {
                missing.add(replies.shard(i));
            }
        }
        return new Answered<>(values, missing);
    }
}
