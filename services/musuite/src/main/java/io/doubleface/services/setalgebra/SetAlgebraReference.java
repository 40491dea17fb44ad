package io.doubleface.services.setalgebra;

import java.util.ArrayList;
import java.util.List;

/**
 * Set Algebra computed in one process over one index of the whole corpus: what the service must
 * answer, with every leaf up or with some leaves missing. Thread-safe after construction.
 */
public final class SetAlgebraReference {

    private final PostingIndex index;

    /**
     * Indexes all of {@code data}.
     *
     * @param data the corpus
     */
    public SetAlgebraReference(SetAlgebraData data) {
        this.index = new PostingIndex(data, 0, 1);
    }

    /**
     * {@return the answer to {@code q} when the leaves in {@code missing} of {@code leaves} do not answer}
     *
     * @param q the query
     * @param leaves the number of leaves
     * @param missing the leaves that fail, ascending (empty: all answer)
     */
    public SetAlgebraResult search(SetAlgebraQuery q, int leaves, List<Integer> missing) {
        List<Integer> docs = new ArrayList<>();
        long count = 0;
        for (int d : index.intersect(q.terms())) {
            if (!missing.contains(d % leaves)) {
                count++;
                if (docs.size() < q.limit()) {
                    docs.add(d);
                }
            }
        }
        return new SetAlgebraResult(q, count, docs, missing);
    }
}
