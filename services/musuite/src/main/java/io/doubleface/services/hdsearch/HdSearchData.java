package io.doubleface.services.hdsearch;

import io.doubleface.services.musuite.SplitMix64;

/**
 * HDSearch's synthetic image features: {@code points} feature vectors of {@code dims} floats,
 * clustered as real image features are (similar images near each other), the same bytes for the
 * same parameters on every run and JVM ({@link SplitMix64}).
 *
 * <p>{@code clusters} centres are drawn from N(0, 1)<sup>dims</sup>; point {@code i} picks a centre
 * and adds N(0, {@value #NOISE}²) noise to each coordinate. Query vector {@code j} is drawn the same
 * way from a stream of its own, so it is new to the corpus but has near neighbours. Point {@code i}
 * is stored on leaf {@code i % leaves}. Each point and query is generated on its own from
 * {@code (seed, i)}, so a leaf generates only its shard.
 *
 * <p>Immutable and thread-safe (the centres are computed once, in the constructor).
 */
public final class HdSearchData {

    /** Default number of points: {@value}. */
    public static final int DEFAULT_POINTS = 100_000;
    /** Default dimension: {@value}. */
    public static final int DEFAULT_DIMS = 128;
    /** Default number of clusters: {@value}. */
    public static final int DEFAULT_CLUSTERS = 100;
    /** Default seed: {@value}. */
    public static final long DEFAULT_SEED = 42;
    /** Most points: {@value}. */
    public static final int MAX_POINTS = 10_000_000;
    /** Largest dimension: {@value}. */
    public static final int MAX_DIMS = 4096;
    /** Standard deviation of a point's offset from its centre, per coordinate: {@value}. */
    public static final double NOISE = 0.35;

    private static final long CENTRES = 1;
    private static final long POINTS = 2;
    private static final long QUERIES = 3;

    private final long seed;
    private final int points;
    private final int dims;
    private final int clusters;
    /** The cluster centres, row-major ({@code clusters × dims}). */
    private final float[] centres;

    private HdSearchData(long seed, int points, int dims, int clusters) {
        if (points < 1 || points > MAX_POINTS) {
            throw new IllegalArgumentException("points: " + points + " (expected: 1.." + MAX_POINTS + ")");
        }
        if (dims < 1 || dims > MAX_DIMS) {
            throw new IllegalArgumentException("dims: " + dims + " (expected: 1.." + MAX_DIMS + ")");
        }
        if (clusters < 1 || clusters > points) {
            throw new IllegalArgumentException("clusters: " + clusters + " (expected: 1.." + points + ", the points)");
        }
        this.seed = seed;
        this.points = points;
        this.dims = dims;
        this.clusters = clusters;
        this.centres = new float[clusters * dims];
        for (int c = 0; c < clusters; c++) {
            SplitMix64 r = SplitMix64.of(seed, CENTRES, c);
            for (int d = 0; d < dims; d++) {
                centres[c * dims + d] = (float) r.nextGaussian();
            }
        }
    }

    /**
     * The data set of the given parameters.
     *
     * @param seed the data set's seed
     * @param points number of points, {@code 1 ..} {@value #MAX_POINTS}
     * @param dims dimension of the vectors, {@code 1 ..} {@value #MAX_DIMS}
     * @param clusters number of cluster centres, {@code 1 .. points}
     * @return the data set
     * @throws IllegalArgumentException if a parameter is out of range
     */
    public static HdSearchData of(long seed, int points, int dims, int clusters) {
        return new HdSearchData(seed, points, dims, clusters);
    }

    /** {@return the seed} */
    public long seed() {
        return seed;
    }

    /** {@return the number of points} */
    public int points() {
        return points;
    }

    /** {@return the dimension of the vectors} */
    public int dims() {
        return dims;
    }

    /** {@return the number of clusters} */
    public int clusters() {
        return clusters;
    }

    /**
     * Writes point {@code i} into {@code out} at {@code offset}.
     *
     * @param i the point, {@code 0 .. points-1}
     * @param out where to write {@code dims} floats
     * @param offset the index of the first
     */
    public void point(int i, float[] out, int offset) {
        if (i < 0 || i >= points) {
            throw new IndexOutOfBoundsException("point: " + i + " (expected: 0.." + (points - 1) + ")");
        }
        draw(SplitMix64.of(seed, POINTS, i), out, offset);
    }

    /**
     * {@return point {@code i}, a new array}
     *
     * @param i the point, {@code 0 .. points-1}
     */
    public float[] point(int i) {
        float[] v = new float[dims];
        point(i, v, 0);
        return v;
    }

    /**
     * {@return query vector {@code j}, a new array}
     *
     * @param j the query's number, {@code >= 0}
     */
    public float[] query(int j) {
        if (j < 0) {
            throw new IndexOutOfBoundsException("query: " + j + " (expected: >= 0)");
        }
        float[] v = new float[dims];
        draw(SplitMix64.of(seed, QUERIES, j), v, 0);
        return v;
    }

    private void draw(SplitMix64 r, float[] out, int offset) {
        int c = r.nextInt(clusters);
        for (int d = 0; d < dims; d++) {
            out[offset + d] = (float) (centres[c * dims + d] + NOISE * r.nextGaussian());
        }
    }

    /**
     * The squared Euclidean distance, summed in {@code float} in coordinate order: the one distance
     * function of leaves and reference alike, so their answers are the same bits.
     *
     * @param a the point's coordinates start at {@code a[offset]}
     * @param offset where the point starts
     * @param q the query vector, {@code dims} floats
     * @return the squared distance
     */
    public static float squaredDistance(float[] a, int offset, float[] q) {
        float sum = 0f;
        for (int d = 0; d < q.length; d++) {
            float diff = a[offset + d] - q[d];
            sum += diff * diff;
        }
        return sum;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HdSearchData x && x.seed == seed && x.points == points && x.dims == dims
                && x.clusters == clusters;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(seed) * 31 + points * 17 + dims * 7 + clusters;
    }

    @Override
    public String toString() {
        return points + " x " + dims + "-d points, " + clusters + " clusters, seed " + seed;
    }
}
