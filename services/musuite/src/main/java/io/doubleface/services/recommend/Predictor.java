package io.doubleface.services.recommend;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * User-based collaborative filtering over one shard of the ratings (Resnick et al., GroupLens 1994):
 * to predict user {@code u}'s rating of item {@code i}, take the users {@code v} of this shard who
 * rated {@code i} and share at least {@value #MIN_CO_RATED} rated items with {@code u}; weigh them by
 * the Pearson correlation of their ratings over those co-rated items (each centred on its user's
 * mean on the shard); keep the {@value #NEIGHBOURS} most similar with a positive correlation (ties to
 * the smaller user id); predict {@code mean(u) + Σ sim·(r(v,i) − mean(v)) / Σ sim}, clamped to 1..5.
 * No such neighbour, or {@code u} without ratings here: no prediction.
 *
 * <p>Immutable after construction, thread-safe. Leaves and the reference run this same code, so
 * their predictions are the same {@code double}s.
 */
public final class Predictor {

    /** Neighbours a prediction uses at most: {@value}. */
    public static final int NEIGHBOURS = 20;
    /** Co-rated items two users need to be compared: {@value}. */
    public static final int MIN_CO_RATED = 2;

    /**
     * A prediction.
     *
     * @param predicted whether there was one
     * @param rating the predicted rating (0 if none)
     * @param neighbours the similar users it used
     */
    public record Prediction(boolean predicted, double rating, int neighbours) {
        static final Prediction NONE = new Prediction(false, 0, 0);
    }

    /** user → (item → rating), items ascending. */
    private final Map<Integer, int[][]> byUser = new HashMap<>();
    /** item → users who rated it, ascending. */
    private final Map<Integer, int[]> byItem = new HashMap<>();
    private final Map<Integer, Double> means = new HashMap<>();

    /**
     * The predictor of tuples {@code first, first + step, …} of {@code data} (a pair drawn twice counts once).
     *
     * @param data the ratings
     * @param first the first tuple
     * @param step the distance between tuples (the number of leaves; 1 for all)
     */
    public Predictor(RecommendData data, int first, int step) {
        Map<Integer, Map<Integer, Integer>> users = new HashMap<>();
        for (int t = first; t < data.ratings(); t += step) {
            int[] x = data.tuple(t);
            users.computeIfAbsent(x[0], k -> new java.util.TreeMap<>()).put(x[1], x[2]);
        }
        Map<Integer, List<Integer>> items = new HashMap<>();
        for (Map.Entry<Integer, Map<Integer, Integer>> e : users.entrySet()) {
            int[][] r = new int[2][e.getValue().size()];
            int n = 0;
            long sum = 0;
            for (Map.Entry<Integer, Integer> ir : e.getValue().entrySet()) {
                r[0][n] = ir.getKey();
                r[1][n++] = ir.getValue();
                sum += ir.getValue();
                items.computeIfAbsent(ir.getKey(), k -> new ArrayList<>()).add(e.getKey());
            }
            byUser.put(e.getKey(), r);
            means.put(e.getKey(), (double) sum / n);
        }
        items.forEach((item, us) -> byItem.put(item, us.stream().mapToInt(Integer::intValue).sorted().toArray()));
    }

    /**
     * {@return the prediction of {@code user}'s rating of {@code item} from this shard}
     *
     * @param user the user
     * @param item the item
     */
    public Prediction predict(int user, int item) {
        int[][] mine = byUser.get(user);
        int[] raters = byItem.get(item);
        if (mine == null || raters == null) {
            return Prediction.NONE;
        }
        double mu = means.get(user);
        List<double[]> neighbours = new ArrayList<>(); // {sim, user}
        for (int v : raters) {
            if (v == user) {
                continue;
            }
            double sim = pearson(mine, mu, byUser.get(v), means.get(v));
            if (sim > 0) {
                neighbours.add(new double[] {sim, v});
            }
        }
        if (neighbours.isEmpty()) {
            return Prediction.NONE;
        }
        neighbours.sort((a, b) -> a[0] != b[0] ? Double.compare(b[0], a[0]) : Double.compare(a[1], b[1]));
        int k = Math.min(NEIGHBOURS, neighbours.size());
        double num = 0;
        double den = 0;
        for (int n = 0; n < k; n++) {
            int v = (int) neighbours.get(n)[1];
            double sim = neighbours.get(n)[0];
            num += sim * (rating(byUser.get(v), item) - means.get(v));
            den += sim;
        }
        return new Prediction(true, Math.max(1, Math.min(5, mu + num / den)), k);
    }

    /** Pearson correlation over co-rated items; 0 if fewer than MIN_CO_RATED or no variance. */
    static double pearson(int[][] a, double ma, int[][] b, double mb) {
        int i = 0;
        int j = 0;
        int co = 0;
        double sab = 0;
        double saa = 0;
        double sbb = 0;
        while (i < a[0].length && j < b[0].length) {
            if (a[0][i] < b[0][j]) {
                i++;
            } else if (a[0][i] > b[0][j]) {
                j++;
            } else {
                double da = a[1][i] - ma;
                double db = b[1][j] - mb;
                sab += da * db;
                saa += da * da;
                sbb += db * db;
                co++;
                i++;
                j++;
            }
        }
        if (co < MIN_CO_RATED || saa == 0 || sbb == 0) {
            return 0;
        }
        return sab / Math.sqrt(saa * sbb);
    }

    private static int rating(int[][] r, int item) {
        return r[1][Arrays.binarySearch(r[0], item)];
    }

    /** {@return the number of users with ratings here} */
    public int users() {
        return byUser.size();
    }
}
