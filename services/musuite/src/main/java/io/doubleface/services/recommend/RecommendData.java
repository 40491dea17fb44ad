package io.doubleface.services.recommend;

import io.doubleface.services.musuite.SplitMix64;
import io.doubleface.services.musuite.Zipf;

/**
 * Recommend's synthetic ratings, shaped like MovieLens: {@code ratings} {user, item, rating}
 * tuples, ratings 1–5 stars, items drawn with a popularity skew (Zipf, exponent
 * {@value #POPULARITY_EXPONENT}) and users uniformly. Ratings have latent structure, so that similar
 * users exist: user {@code u} and item {@code i} each have a taste vector of {@value #FACTORS}
 * Gaussian factors, and {@code rating(u, i) = clamp(round(3.5 + taste(u)·taste(i) + bias(i) +
 * 0.5·noise(u, i)), 1, 5)} — a function of {@code (seed, u, i)}, so a pair drawn twice has one
 * rating. Tuple {@code t} is drawn from {@code (seed, t)} alone and stored on leaf {@code t % leaves},
 * so a leaf generates only its shard. Immutable and thread-safe.
 */
public final class RecommendData {

    /** Default number of users: {@value}. */
    public static final int DEFAULT_USERS = 300;
    /** Default number of items: {@value}. */
    public static final int DEFAULT_ITEMS = 500;
    /** Default number of rating tuples: {@value}. */
    public static final int DEFAULT_RATINGS = 10_000;
    /** Default seed: {@value}. */
    public static final long DEFAULT_SEED = 42;
    /** Most users, items or ratings: {@value}. */
    public static final int MAX = 10_000_000;
    /** Latent factors per user and item: {@value}. */
    public static final int FACTORS = 4;
    /** Zipf exponent of item popularity: {@value}. */
    public static final double POPULARITY_EXPONENT = 0.8;

    private static final long USERS = 1;
    private static final long ITEMS = 2;
    private static final long PAIRS = 3;
    private static final long TUPLES = 4;
    private static final long QUERIES = 5;

    private final long seed;
    private final int users;
    private final int items;
    private final int ratings;
    private final Zipf popularity;
    private final float[] userTaste;
    private final float[] itemTaste;
    private final float[] itemBias;

    private RecommendData(long seed, int users, int items, int ratings) {
        check("users", users);
        check("items", items);
        check("ratings", ratings);
        this.seed = seed;
        this.users = users;
        this.items = items;
        this.ratings = ratings;
        this.popularity = new Zipf(items, POPULARITY_EXPONENT);
        this.userTaste = new float[users * FACTORS];
        for (int u = 0; u < users; u++) {
            SplitMix64 r = SplitMix64.of(seed, USERS, u);
            for (int f = 0; f < FACTORS; f++) {
                userTaste[u * FACTORS + f] = (float) (0.6 * r.nextGaussian());
            }
        }
        this.itemTaste = new float[items * FACTORS];
        this.itemBias = new float[items];
        for (int i = 0; i < items; i++) {
            SplitMix64 r = SplitMix64.of(seed, ITEMS, i);
            for (int f = 0; f < FACTORS; f++) {
                itemTaste[i * FACTORS + f] = (float) (0.6 * r.nextGaussian());
            }
            itemBias[i] = (float) (0.5 * r.nextGaussian());
        }
    }

    private static void check(String name, int v) {
        if (v < 1 || v > MAX) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: 1.." + MAX + ")");
        }
    }

    /**
     * The ratings of the given parameters.
     *
     * @param seed the seed
     * @param users users, {@code 1 ..} {@value #MAX}
     * @param items items, {@code 1 ..} {@value #MAX}
     * @param ratings rating tuples, {@code 1 ..} {@value #MAX}
     * @return the data set
     * @throws IllegalArgumentException if a parameter is out of range
     */
    public static RecommendData of(long seed, int users, int items, int ratings) {
        return new RecommendData(seed, users, items, ratings);
    }

    /**
     * {@return user {@code u}'s rating of item {@code i}, 1..5}
     *
     * @param u the user
     * @param i the item
     */
    public int rating(int u, int i) {
        double dot = 0;
        for (int f = 0; f < FACTORS; f++) {
            dot += userTaste[u * FACTORS + f] * itemTaste[i * FACTORS + f];
        }
        double noise = SplitMix64.of(seed, PAIRS, (long) u * items + i).nextGaussian();
        long stars = Math.round(3.5 + dot + itemBias[i] + 0.5 * noise);
        return (int) Math.max(1, Math.min(5, stars));
    }

    /**
     * {@return tuple {@code t} as {@code {user, item, rating}}}
     *
     * @param t the tuple, {@code 0 .. ratings-1}
     */
    public int[] tuple(int t) {
        if (t < 0 || t >= ratings) {
            throw new IndexOutOfBoundsException("tuple: " + t + " (expected: 0.." + (ratings - 1) + ")");
        }
        SplitMix64 r = SplitMix64.of(seed, TUPLES, t);
        int u = r.nextInt(users);
        int i = popularity.draw(r);
        return new int[] {u, i, rating(u, i)};
    }

    /**
     * {@return synthetic query {@code j} as {@code {user, item}}: a user uniformly, an item by popularity}
     *
     * @param j the query's number, {@code >= 0}
     */
    public int[] query(int j) {
        if (j < 0) {
            throw new IndexOutOfBoundsException("query: " + j + " (expected: >= 0)");
        }
        SplitMix64 r = SplitMix64.of(seed, QUERIES, j);
        return new int[] {r.nextInt(users), popularity.draw(r)};
    }

    /** {@return the number of users} */
    public int users() {
        return users;
    }

    /** {@return the number of items} */
    public int items() {
        return items;
    }

    /** {@return the number of rating tuples} */
    public int ratings() {
        return ratings;
    }

    /** {@return the seed} */
    public long seed() {
        return seed;
    }

    @Override
    public String toString() {
        return ratings + " ratings of " + items + " items by " + users + " users, seed " + seed;
    }
}
