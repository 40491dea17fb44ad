package io.doubleface.services.hdsearch;

/**
 * A decoded HDSearch request: the query vector and how many neighbours to answer. The LSH
 * candidate count is written here by {@link HdSearchService#plan} and read by its merge (the
 * framework orders plan before merge for one request). Not thread-safe beyond that.
 */
public final class HdSearchQuery {

    /** Default number of neighbours: {@value}. */
    public static final int DEFAULT_K = 10;
    /** Most neighbours a query may ask for: {@value}. */
    public static final int MAX_K = 100;
    /** Largest absolute value of a vector coordinate: {@value} (keeps every squared distance finite). */
    public static final float MAX_COORDINATE = 1e6f;

    private final float[] vector;
    private final int k;
    private final int queryNumber;
    int candidates;

    /**
     * A query.
     *
     * @param vector the query vector (not copied: do not change it afterwards)
     * @param k neighbours to answer, {@code 1 ..} {@value #MAX_K}
     * @param queryNumber the data set's query vector this is, or -1 for a vector of the caller's
     */
    public HdSearchQuery(float[] vector, int k, int queryNumber) {
        if (k < 1 || k > MAX_K) {
            throw new IllegalArgumentException("k: " + k + " (expected: 1.." + MAX_K + ")");
        }
        this.vector = vector;
        this.k = k;
        this.queryNumber = queryNumber;
    }

    /** {@return the query vector (do not change it)} */
    public float[] vector() {
        return vector;
    }

    /** {@return the number of neighbours to answer} */
    public int k() {
        return k;
    }

    /** {@return the data set's query vector number, or -1 for a vector of the caller's} */
    public int queryNumber() {
        return queryNumber;
    }

    @Override
    public String toString() {
        return (queryNumber >= 0 ? "query " + queryNumber : "vector of " + vector.length) + ", k=" + k;
    }
}
