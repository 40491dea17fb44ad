package io.doubleface.services.social;

import io.doubleface.services.musuite.SplitMix64;
import io.doubleface.services.musuite.Zipf;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The social network's synthetic data: a directed follow graph over {@code users} users and the
 * posts they wrote before the service started, a function of the parameters alone (same seed, same
 * bytes: {@link #write}).
 *
 * <p><b>Graph.</b> Every user is given a popularity rank by a seeded shuffle. User {@code u} follows
 * {@code 1 + uniform(0 .. 2·followees-2)} others (mean {@code followees}), each drawn by rank from
 * Zipf's law with exponent {@code popularity} (self and repeats drawn again), so the <em>follower</em>
 * counts follow a power law: a few users are followed by most, most by a handful — the shape of
 * DeathStarBench's social graphs (ASPLOS '19 §3.1), which makes compose-post's fanout heavy-tailed.
 *
 * <p><b>Posts.</b> {@code postsPerUser × users} posts, post {@code p} written by user
 * {@code p % users} at {@value #EPOCH_MILLIS} + p·{@value #POST_INTERVAL_MILLIS} ms, with id
 * {@link PostIds#seeded(long) PostIds.seeded(p)} and a text of 3–24 words drawn from (seed, p).
 * The initial home timeline of a user holds every post of the users they follow.
 *
 * <p>Immutable and thread-safe.
 */
public final class SocialData {

    /** Default number of users: {@value}. */
    public static final int DEFAULT_USERS = 1_000;
    /** Default mean number of users each user follows: {@value}. */
    public static final int DEFAULT_FOLLOWEES = 20;
    /** Default posts per user: {@value}. */
    public static final int DEFAULT_POSTS_PER_USER = 5;
    /** Default Zipf exponent of popularity: {@value}. */
    public static final double DEFAULT_POPULARITY = 0.9;
    /** Default seed: {@value}. */
    public static final long DEFAULT_SEED = 42;
    /** Most users: {@value}. */
    public static final int MAX_USERS = 1_000_000;
    /** Most posts per user: {@value}. */
    public static final int MAX_POSTS_PER_USER = 1_000;
    /** Time of seeded post 0: {@value} (2024-01-01T00:00:00Z), in ms since the epoch. */
    public static final long EPOCH_MILLIS = 1_704_067_200_000L;
    /** Time between seeded posts: {@value} ms. */
    public static final long POST_INTERVAL_MILLIS = 60_000;

    private static final long ORDER = 1;
    private static final long FOLLOWS = 2;
    private static final long POSTS = 3;
    /** Draws of a followee before the rest are taken in rank order (keeps generation bounded). */
    private static final int DRAWS_PER_FOLLOWEE = 64;
    private static final String[] WORDS = {"the", "a", "timeline", "post", "today", "coffee", "café", "naïve",
        "fanout", "shard", "tail", "latency", "loop", "reply", "merge", "\"quoted\"", "back\\slash", "redis",
        "mongo", "graph", "follow", "friend", "photo", "news", "lunch", "weekend", "deadline", "p99", "🙂", "ok"};

    private final long seed;
    private final int users;
    private final int postsPerUser;
    private final double popularity;
    private final int[][] followees;
    private final int[][] followers;

    private SocialData(long seed, int users, int meanFollowees, int postsPerUser, double popularity) {
        this.seed = seed;
        this.users = users;
        this.postsPerUser = postsPerUser;
        this.popularity = popularity;
        int[] byRank = new int[users];
        for (int i = 0; i < users; i++) {
            byRank[i] = i;
        }
        SplitMix64 order = SplitMix64.of(seed, ORDER, 0);
        for (int i = users - 1; i > 0; i--) { // Fisher-Yates
            int j = order.nextInt(i + 1);
            int t = byRank[i];
            byRank[i] = byRank[j];
            byRank[j] = t;
        }
        Zipf zipf = new Zipf(users, popularity);
        followees = new int[users][];
        int[] followerCount = new int[users];
        boolean[] taken = new boolean[users];
        for (int u = 0; u < users; u++) {
            SplitMix64 r = SplitMix64.of(seed, FOLLOWS, u);
            int want = Math.min(users - 1, 1 + r.nextInt(2 * meanFollowees - 1));
            int[] f = new int[want];
            int n = 0;
            taken[u] = true;
            for (int draw = 0; n < want && draw < DRAWS_PER_FOLLOWEE * want; draw++) {
                int v = byRank[zipf.draw(r)];
                if (!taken[v]) {
                    taken[v] = true;
                    f[n++] = v;
                }
            }
            for (int rank = 0; n < want; rank++) { // a tiny graph: the rest by rank
                int v = byRank[rank];
                if (!taken[v]) {
                    taken[v] = true;
                    f[n++] = v;
                }
            }
            taken[u] = false;
            for (int v : f) {
                taken[v] = false;
                followerCount[v]++;
            }
            Arrays.sort(f);
            followees[u] = f;
        }
        followers = new int[users][];
        for (int v = 0; v < users; v++) {
            followers[v] = new int[followerCount[v]];
        }
        int[] filled = new int[users];
        for (int u = 0; u < users; u++) { // u ascending: each follower list comes out sorted
            for (int v : followees[u]) {
                followers[v][filled[v]++] = u;
            }
        }
    }

    /**
     * The data set of these parameters.
     *
     * @param seed any value
     * @param users users, {@code 2 ..} {@value #MAX_USERS}
     * @param meanFollowees mean users each follows, {@code 1 .. users-1}
     * @param postsPerUser seeded posts per user, {@code 0 ..} {@value #MAX_POSTS_PER_USER}
     * @param popularity Zipf exponent of the follower distribution, {@code 0 .. 4} (0: uniform)
     * @return the data
     * @throws IllegalArgumentException naming the parameter out of range ({@code "users: 1 (expected: 2..1000000)"})
     */
    public static SocialData of(long seed, int users, int meanFollowees, int postsPerUser, double popularity) {
        if (users < 2 || users > MAX_USERS) {
            throw new IllegalArgumentException("users: " + users + " (expected: 2.." + MAX_USERS + ")");
        }
        if (meanFollowees < 1 || meanFollowees > users - 1) {
            throw new IllegalArgumentException("followees: " + meanFollowees + " (expected: 1.." + (users - 1) + ")");
        }
        if (postsPerUser < 0 || postsPerUser > MAX_POSTS_PER_USER) {
            throw new IllegalArgumentException("posts-per-user: " + postsPerUser + " (expected: 0.."
                    + MAX_POSTS_PER_USER + ")");
        }
        if (!(popularity >= 0 && popularity <= 4)) {
            throw new IllegalArgumentException("popularity: " + popularity + " (expected: 0..4)");
        }
        return new SocialData(seed, users, meanFollowees, postsPerUser, popularity);
    }

    /** {@return the data set of the defaults} */
    public static SocialData defaults() {
        return of(DEFAULT_SEED, DEFAULT_USERS, DEFAULT_FOLLOWEES, DEFAULT_POSTS_PER_USER, DEFAULT_POPULARITY);
    }

    /** {@return the number of users} */
    public int users() {
        return users;
    }

    /** {@return the seeded posts per user} */
    public int postsPerUser() {
        return postsPerUser;
    }

    /** {@return the number of seeded posts} */
    public int posts() {
        return users * postsPerUser;
    }

    /**
     * {@return the users {@code user} follows, ascending (a copy)}
     *
     * @param user a user, {@code 0 .. users-1}
     */
    public int[] followees(int user) {
        return followees[user].clone();
    }

    /**
     * {@return the users who follow {@code user}, ascending (a copy)}
     *
     * @param user a user, {@code 0 .. users-1}
     */
    public int[] followers(int user) {
        return followers[user].clone();
    }

    /** {@return the number of follows (edges)} */
    public long follows() {
        long n = 0;
        for (int[] f : followees) {
            n += f.length;
        }
        return n;
    }

    /**
     * Seeded post {@code p}.
     *
     * @param p the post's number, {@code 0 .. posts()-1}
     * @return the post
     * @throws IndexOutOfBoundsException if there is no such post
     */
    public Post post(int p) {
        java.util.Objects.checkIndex(p, posts());
        int author = p % users;
        SplitMix64 r = SplitMix64.of(seed, POSTS, p);
        int words = 3 + r.nextInt(22);
        StringBuilder text = new StringBuilder(words * 8);
        text.append("#").append(p / users).append(" from ").append(author).append(':');
        for (int w = 0; w < words; w++) {
            text.append(' ').append(WORDS[r.nextInt(WORDS.length)]);
        }
        return new Post(PostIds.seeded(p), author, EPOCH_MILLIS + p * POST_INTERVAL_MILLIS, text.toString());
    }

    /**
     * {@return the seeded posts {@code author} wrote, oldest first}
     *
     * @param author a user, {@code 0 .. users-1}
     */
    public Post[] postsBy(int author) {
        Post[] out = new Post[postsPerUser];
        for (int k = 0; k < postsPerUser; k++) {
            out[k] = post(author + k * users);
        }
        return out;
    }

    /**
     * Writes the whole data set in a canonical text form (one line per user: its followees; one
     * per post: id, author, time, text), for checking that generation is deterministic.
     *
     * @param out where; not closed
     */
    public void write(OutputStream out) {
        try {
            StringBuilder sb = new StringBuilder();
            for (int u = 0; u < users; u++) {
                sb.setLength(0);
                sb.append("u ").append(u).append(':');
                for (int v : followees[u]) {
                    sb.append(' ').append(v);
                }
                out.write(sb.append('\n').toString().getBytes(StandardCharsets.UTF_8));
            }
            for (int p = 0; p < posts(); p++) {
                Post post = post(p);
                out.write(("p " + post.id() + " " + post.author() + " " + post.ts() + " " + post.text() + "\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@return e.g. {@code 1000 users, 20073 follows (mean 20.1, most followers 611), 5000 posts, seed 42}} */
    @Override
    public String toString() {
        int most = 0;
        for (int[] f : followers) {
            most = Math.max(most, f.length);
        }
        long f = follows();
        return String.format(java.util.Locale.ROOT, "%d users, %d follows (mean %.1f, most followers %d, popularity "
                + "%s), %d posts, seed %d", users, f, (double) f / users, most, popularity, posts(), seed);
    }
}
