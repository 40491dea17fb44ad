package io.doubleface.services.musuite;

import io.doubleface.services.hdsearch.HdSearchData;
import io.doubleface.services.hdsearch.HdSearchReference;
import io.doubleface.services.hdsearch.LshIndex;
import io.doubleface.services.recommend.RecommendData;
import io.doubleface.services.recommend.RecommendReference;
import java.util.Locale;

/**
 * The answer quality of the approximate μSuite services on their default data, from their
 * references (the same answers the services give, tests check that): HDSearch's recall@10 of LSH
 * against brute force over query vectors 0..99, and Recommend's mean absolute error against the
 * data's true ratings over queries 0..999, over 1 and 4 leaves, beside always guessing 3.5 stars.
 * Prints one JSON object; {@code bench/musuite-quality.sh} records it under {@code docs/results}.
 */
public final class Quality {

    private Quality() {}

    /**
     * Prints the quality figures as JSON.
     *
     * @param args none
     */
    public static void main(String[] args) {
        long t0 = System.nanoTime();
        HdSearchData hd = HdSearchData.of(HdSearchData.DEFAULT_SEED, HdSearchData.DEFAULT_POINTS,
                HdSearchData.DEFAULT_DIMS, HdSearchData.DEFAULT_CLUSTERS);
        HdSearchReference ref = new HdSearchReference(hd, LshIndex.build(hd, LshIndex.DEFAULT_TABLES,
                LshIndex.DEFAULT_BITS, LshIndex.DEFAULT_SEED));
        int queries = 100;
        int k = 10;
        long candidates = 0;
        for (int j = 0; j < queries; j++) {
            candidates += ref.search(hd.query(j), k).candidates();
        }
        double recall = ref.recall(queries, k);
        RecommendData rd = RecommendData.of(RecommendData.DEFAULT_SEED, RecommendData.DEFAULT_USERS,
                RecommendData.DEFAULT_ITEMS, RecommendData.DEFAULT_RATINGS);
        int rq = 1000;
        double[] four = new RecommendReference(rd, 4).accuracy(rq);
        double[] one = new RecommendReference(rd, 1).accuracy(rq);
        double constant = 0;
        for (int j = 0; j < rq; j++) {
            int[] q = rd.query(j);
            constant += Math.abs(3.5 - rd.rating(q[0], q[1]));
        }
        constant /= rq;
        System.out.println(String.format(Locale.ROOT, """
                {
                  "hdsearch": {"points": %d, "dims": %d, "clusters": %d, "seed": %d, "lsh_tables": %d, "lsh_bits": %d,
                    "lsh_seed": %d, "queries": %d, "k": %d, "mean_candidates": %.1f, "recall_at_k": %.4f},
                  "recommend": {"users": %d, "items": %d, "ratings": %d, "seed": %d, "queries": %d,
                    "leaves_4": {"mae": %.4f, "coverage": %.4f}, "leaves_1": {"mae": %.4f, "coverage": %.4f},
                    "constant_3_5_mae": %.4f},
                  "seconds": %.1f
                }""", hd.points(), hd.dims(), HdSearchData.DEFAULT_CLUSTERS, HdSearchData.DEFAULT_SEED,
                LshIndex.DEFAULT_TABLES, LshIndex.DEFAULT_BITS, LshIndex.DEFAULT_SEED, queries, k,
                (double) candidates / queries, recall, RecommendData.DEFAULT_USERS, RecommendData.DEFAULT_ITEMS,
                RecommendData.DEFAULT_RATINGS, RecommendData.DEFAULT_SEED, rq, four[0], four[1], one[0], one[1],
                constant, (System.nanoTime() - t0) / 1e9));
    }
}
