package io.doubleface.services.hdsearch;

import io.doubleface.services.musuite.SplitMix64;
import java.util.Arrays;

/**
 * The mid-tier's locality-sensitive hash tables (random-hyperplane LSH, Charikar 2002): {@code tables}
 * tables, each hashing a vector to {@code bits} sign bits of its dot products with {@code bits}
 * random Gaussian hyperplanes through the origin. Vectors at a small angle share a bucket with high
 * probability. Each table maps bucket → the ids of the corpus points in it; a point's leaf is
 * {@code id % leaves}, so a bucket entry is the paper's {leaf, point id} pair in one int.
 *
 * <p>A table is one sorted {@code long[]} of {@code (bucket << 32 | id)} — no per-bucket objects;
 * a probe is a binary search. The index holds no vectors: building it generates each point once and
 * keeps only its buckets.
 *
 * <p>Immutable after {@link #build}, thread-safe.
 */
public final class LshIndex {

    /** Default number of tables: {@value}. */
    public static final int DEFAULT_TABLES = 8;
    /** Default hash bits per table: {@value}. */
    public static final int DEFAULT_BITS = 12;
    /** Default seed of the hyperplanes: {@value}. */
    public static final long DEFAULT_SEED = 7;
    /** Most tables: {@value}. */
    public static final int MAX_TABLES = 64;
    /** Most bits per table: {@value}. */
    public static final int MAX_BITS = 30;

    private static final long HYPERPLANES = 4;

    private final int tables;
    private final int bits;
    private final long seed;
    private final int dims;
    /** hyperplane (t, b) at [(t * bits + b) * dims]. */
    private final float[] planes;
    /** per table: (bucket << 32 | id), sorted. */
    private final long[][] entries;

    private LshIndex(int tables, int bits, long seed, int dims, int points) {
        if (tables < 1 || tables > MAX_TABLES) {
            throw new IllegalArgumentException("tables: " + tables + " (expected: 1.." + MAX_TABLES + ")");
        }
        if (bits < 1 || bits > MAX_BITS) {
            throw new IllegalArgumentException("bits: " + bits + " (expected: 1.." + MAX_BITS + ")");
        }
        this.tables = tables;
        this.bits = bits;
        this.seed = seed;
        this.dims = dims;
        this.planes = new float[tables * bits * dims];
        for (int h = 0; h < tables * bits; h++) {
            SplitMix64 r = SplitMix64.of(seed, HYPERPLANES, h);
            for (int d = 0; d < dims; d++) {
                planes[h * dims + d] = (float) r.nextGaussian();
            }
        }
        this.entries = new long[tables][points];
    }

    /**
     * Hashes every point of {@code data} into {@code tables} tables.
     *
     * @param data the corpus
     * @param tables number of tables, {@code 1 ..} {@value #MAX_TABLES}
     * @param bits hash bits per table, {@code 1 ..} {@value #MAX_BITS}
     * @param seed the hyperplanes' seed
     * @return the index
     */
    public static LshIndex build(HdSearchData data, int tables, int bits, long seed) {
        LshIndex index = new LshIndex(tables, bits, seed, data.dims(), data.points());
        float[] v = new float[data.dims()];
        for (int i = 0; i < data.points(); i++) {
            data.point(i, v, 0);
            for (int t = 0; t < tables; t++) {
                index.entries[t][i] = ((long) index.bucket(t, v) << 32) | i;
            }
        }
        for (long[] table : index.entries) {
            Arrays.sort(table);
        }
        return index;
    }

    /**
     * The bucket of {@code v} in table {@code t}: bit b is set if v is on the positive side of
     * hyperplane (t, b).
     *
     * @param t the table
     * @param v a vector of the index's dimension
     * @return the bucket, {@code 0 .. 2^bits - 1}
     */
    int bucket(int t, float[] v) {
        int bucket = 0;
        for (int b = 0; b < bits; b++) {
            int p = (t * bits + b) * dims;
            double dot = 0;
            for (int d = 0; d < dims; d++) {
                dot += (double) planes[p + d] * v[d];
            }
            if (dot >= 0) {
                bucket |= 1 << b;
            }
        }
        return bucket;
    }

    /**
     * The distinct ids of the points that share a bucket with {@code v} in any table.
     *
     * @param v a vector of the index's dimension
     * @return the candidates, ascending
     */
    public int[] candidates(float[] v) {
        if (v.length != dims) {
            throw new IllegalArgumentException("vector: " + v.length + " numbers (expected: " + dims + ")");
        }
        int[] out = new int[64];
        int n = 0;
        for (int t = 0; t < tables; t++) {
            long bucket = bucket(t, v);
            long[] table = entries[t];
            int from = lowerBound(table, bucket << 32);
            int to = lowerBound(table, (bucket + 1) << 32);
            if (n + (to - from) > out.length) {
                out = Arrays.copyOf(out, Math.max(out.length * 2, n + (to - from)));
            }
            for (int i = from; i < to; i++) {
                out[n++] = (int) table[i];
            }
        }
        Arrays.sort(out, 0, n);
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            if (distinct == 0 || out[distinct - 1] != out[i]) {
                out[distinct++] = out[i];
            }
        }
        return Arrays.copyOf(out, distinct);
    }

    private static int lowerBound(long[] a, long key) {
        int lo = 0;
        int hi = a.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (a[mid] < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** {@return the number of tables} */
    public int tables() {
        return tables;
    }

    /** {@return the hash bits per table} */
    public int bits() {
        return bits;
    }

    /** {@return the hyperplanes' seed} */
    public long seed() {
        return seed;
    }

    /** {@return the dimension of the vectors} */
    public int dims() {
        return dims;
    }

    @Override
    public String toString() {
        return tables + " LSH tables x " + bits + " bits (seed " + seed + ")";
    }
}
