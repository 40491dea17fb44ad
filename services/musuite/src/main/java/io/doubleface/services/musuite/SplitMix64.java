package io.doubleface.services.musuite;

/**
 * The SplitMix64 generator (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
 * OOPSLA 2014), written out here so that the synthetic data sets of the μSuite services are the
 * same bytes on every JDK: {@code java.util.Random} and {@code SplittableRandom} make no such
 * promise for their Gaussian or bounded draws. Not thread-safe: one instance per generating thread.
 */
public final class SplitMix64 {

    private static final long GOLDEN_GAMMA = 0x9e3779b97f4a7c15L;
    private long state;

    /**
     * A generator whose sequence is a function of {@code seed} alone.
     *
     * @param seed any value
     */
    public SplitMix64(long seed) {
        this.state = seed;
    }

    /**
     * A generator for item {@code item} of stream {@code stream} of data set {@code seed}: lets each
     * item (a point, a document) be generated on its own, in any order, by any process.
     *
     * @param seed the data set's seed
     * @param stream which kind of item (points, queries, centres, ...)
     * @param item the item's number
     * @return a new generator
     */
    public static SplitMix64 of(long seed, long stream, long item) {
        return new SplitMix64(mix(mix(seed ^ mix(stream + GOLDEN_GAMMA)) + item * GOLDEN_GAMMA));
    }

    /**
     * The SplitMix64 finaliser: a bijective, well-mixed function of {@code z}.
     *
     * @param z any value
     * @return the mixed value
     */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** {@return the next 64 random bits} */
    public long nextLong() {
        state += GOLDEN_GAMMA;
        return mix(state);
    }

    /** {@return a uniform double in {@code [0, 1)}} */
    public double nextDouble() {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }

    /**
     * A uniform int in {@code [0, bound)} (Lemire's multiply-shift; negligible bias for the bounds used).
     *
     * @param bound the exclusive upper bound, {@code > 0}
     * @return the value
     */
    public int nextInt(int bound) {
        if (bound <= 0) {
            throw new IllegalArgumentException("bound: " + bound + " (expected: > 0)");
        }
        return (int) (((nextLong() >>> 32) * bound) >>> 32);
    }

    /** {@return a standard normal value (Box–Muller, one of the pair; {@code StrictMath}, so the same on every JVM)} */
    public double nextGaussian() {
        double u1 = 1.0 - nextDouble(); // (0, 1]: log(0) avoided
        double u2 = nextDouble();
        return StrictMath.sqrt(-2.0 * StrictMath.log(u1)) * StrictMath.cos(2.0 * Math.PI * u2);
    }
}
