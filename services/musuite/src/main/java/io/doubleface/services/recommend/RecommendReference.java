package io.doubleface.services.recommend;

import java.util.ArrayList;
import java.util.List;

/**
 * Recommend computed in one process: one {@link Predictor} per leaf's shard, averaged as the
 * mid-tier does — what the service must answer, with every leaf up or some missing. Also the
 * data's true rating, to report the predictions' error. Thread-safe after construction.
 */
public final class RecommendReference {

    private final RecommendData data;
    private final Predictor[] shards;

    /**
     * The reference of {@code data} over {@code leaves} leaves.
     *
     * @param data the ratings
     * @param leaves the number of leaves
     */
    public RecommendReference(RecommendData data, int leaves) {
        this.data = data;
        this.shards = new Predictor[leaves];
        for (int l = 0; l < leaves; l++) {
            shards[l] = new Predictor(data, l, leaves);
        }
    }

    /**
     * {@return the answer for {@code (user, item)} when the leaves in {@code missing} do not answer}
     *
     * @param user the user
     * @param item the item
     * @param missing the leaves that fail, ascending
     */
    public RecommendResult predict(int user, int item, List<Integer> missing) {
        List<Predictor.Prediction> ps = new ArrayList<>();
        for (int l = 0; l < shards.length; l++) {
            if (!missing.contains(l)) {
                ps.add(shards[l].predict(user, item));
            }
        }
        return RecommendResult.of(user, item, ps, missing);
    }

    /**
     * The mean absolute error of the service's predictions against the data's true ratings, and the
     * share of queries predicted, over synthetic queries {@code 0 .. queries-1}.
     *
     * @param queries how many
     * @return {@code {mae, coverage}}
     */
    public double[] accuracy(int queries) {
        double err = 0;
        int n = 0;
        for (int j = 0; j < queries; j++) {
            int[] q = data.query(j);
            RecommendResult r = predict(q[0], q[1], List.of());
            if (r.predicted()) {
                err += Math.abs(r.rating() - data.rating(q[0], q[1]));
                n++;
            }
        }
        return new double[] {n == 0 ? Double.NaN : err / n, (double) n / queries};
    }
}
