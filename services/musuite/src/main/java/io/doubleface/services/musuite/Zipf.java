package io.doubleface.services.musuite;

import java.util.Arrays;

/**
 * Draws ranks {@code 0 .. n-1} with Zipf's law: rank {@code r} with probability ∝ 1/(r+1)^s, by
 * binary search in the cumulative distribution. Immutable and thread-safe; the draws are as
 * deterministic as the {@link SplitMix64} given.
 */
public final class Zipf {

    private final double[] cdf;

    /**
     * The distribution over {@code n} ranks with exponent {@code s}.
     *
     * @param n the number of ranks, {@code >= 1}
     * @param s the exponent, {@code >= 0} (0: uniform)
     */
    public Zipf(int n, double s) {
        if (n < 1) {
            throw new IllegalArgumentException("n: " + n + " (expected: > 0)");
        }
        if (!(s >= 0)) {
            throw new IllegalArgumentException("s: " + s + " (expected: >= 0)");
        }
        cdf = new double[n];
        double sum = 0;
        for (int r = 0; r < n; r++) {
            sum += 1.0 / Math.pow(r + 1, s);
            cdf[r] = sum;
        }
        for (int r = 0; r < n; r++) {
            cdf[r] /= sum;
        }
    }

    /**
     * {@return a rank drawn from the distribution}
     *
     * @param r the random source
     */
    public int draw(SplitMix64 r) {
        int i = Arrays.binarySearch(cdf, r.nextDouble());
        return Math.min(cdf.length - 1, i >= 0 ? i + 1 : -i - 1);
    }

    /** {@return the number of ranks} */
    public int size() {
        return cdf.length;
    }
}
