package io.doubleface.services.hdsearch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * HDSearch computed in one process, with no network and no framework: what the service must answer
 * ({@link #search}: the same LSH candidates, their exact k nearest) and what a perfect index would
 * answer ({@link #bruteForce}: the exact k nearest of all points), whose overlap is the index's
 * {@link #recall}. Holds every point in memory ({@code points × dims × 4} bytes).
 *
 * <p>Thread-safe after construction.
 */
public final class HdSearchReference {

    private final HdSearchData data;
    private final LshIndex index;
    private final float[] vectors;

    /**
     * The reference over {@code data} and {@code index}.
     *
     * @param data the corpus
     * @param index the LSH tables over it
     */
    public HdSearchReference(HdSearchData data, LshIndex index) {
        this.data = data;
        this.index = index;
        this.vectors = new float[data.points() * data.dims()];
        for (int i = 0; i < data.points(); i++) {
            data.point(i, vectors, i * data.dims());
        }
    }

    /**
     * What the service answers when every leaf answers.
     *
     * @param q the query vector
     * @param k neighbours
     * @return the k nearest LSH candidates
     */
    public HdSearchResult search(float[] q, int k) {
        int[] candidates = index.candidates(q);
        return HdSearchService.result(nearest(candidates, q, k), candidates.length, List.of());
    }

    /**
     * What the service answers when the leaves in {@code missing} do not.
     *
     * @param q the query vector
     * @param k neighbours
     * @param leaves the number of leaves
     * @param missing the leaves that fail, ascending
     * @return the k nearest LSH candidates of the other leaves, with the missing leaves that had candidates
     */
    public HdSearchResult searchWithout(float[] q, int k, int leaves, List<Integer> missing) {
        int[] candidates = index.candidates(q);
        List<int[]> split = HdSearchService.split(candidates, leaves);
        List<Integer> called = new ArrayList<>();
        int[] kept = new int[candidates.length];
        int n = 0;
        for (int leaf = 0; leaf < leaves; leaf++) {
            if (split.get(leaf).length == 0) {
                continue;
            }
            if (missing.contains(leaf)) {
                called.add(leaf);
            } else {
                for (int id : split.get(leaf)) {
                    kept[n++] = id;
                }
            }
        }
        return HdSearchService.result(nearest(Arrays.copyOf(kept, n), q, k), candidates.length, called);
    }

    /**
     * The exact k nearest of all points, by linear scan.
     *
     * @param q the query vector
     * @param k neighbours
     * @return their ids, nearest first (distance, then id)
     */
    public int[] bruteForce(float[] q, int k) {
        int[] all = new int[data.points()];
        Arrays.setAll(all, i -> i);
        long[] keys = nearest(all, q, k);
        int[] ids = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
            ids[i] = HdSearchService.id(keys[i]);
        }
        return ids;
    }

    /**
     * The mean recall@k of the index over the data set's query vectors {@code 0 .. queries-1}: the
     * share of the exact k nearest points that the service's answer contains.
     *
     * @param queries how many query vectors
     * @param k neighbours
     * @return the recall, {@code 0 .. 1}
     */
    public double recall(int queries, int k) {
        double sum = 0;
        for (int j = 0; j < queries; j++) {
            float[] q = data.query(j);
            int[] exact = bruteForce(q, k);
            HdSearchResult found = search(q, k);
            int hits = 0;
            for (HdSearchResult.Neighbor n : found.neighbors()) {
                for (int id : exact) {
                    hits += id == n.id() ? 1 : 0;
                }
            }
            sum += (double) hits / exact.length;
        }
        return sum / queries;
    }

    private long[] nearest(int[] ids, float[] q, int k) {
        long[] keys = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            keys[i] = HdSearchService.key(HdSearchData.squaredDistance(vectors, ids[i] * data.dims(), q), ids[i]);
        }
        Arrays.sort(keys);
        return keys.length > k ? Arrays.copyOf(keys, k) : keys;
    }
}
