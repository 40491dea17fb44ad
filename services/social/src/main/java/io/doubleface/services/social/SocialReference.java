package io.doubleface.services.social;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The social network computed in memory, without a store: what the service must answer after the
 * seeded data and a known sequence of posts. Tests check the service's answers against it byte
 * for byte.
 *
 * <p>Order: a home timeline lists the posts of the users its owner follows by time, newest first;
 * posts of the same time by their id's decimal string, greatest first — the order of Redis's
 * {@code ZREVRANGE} for members of equal score.
 *
 * <p>Thread-safe ({@code synchronized}).
 */
public final class SocialReference {

    /** Newest first, as {@code ZREVRANGE} lists a timeline. */
    static final Comparator<Post> TIMELINE_ORDER = Comparator.comparingLong((Post p) -> p.ts()).reversed()
            .thenComparing((Post p) -> Long.toString(p.id()), Comparator.reverseOrder());

    private final SocialData data;
    /** Posts composed since the data was loaded, by author. */
    private final List<List<Post>> composed;

    /**
     * The reference over freshly loaded {@code data}.
     *
     * @param data the data set
     */
    public SocialReference(SocialData data) {
        this.data = data;
        this.composed = new ArrayList<>(data.users());
        for (int u = 0; u < data.users(); u++) {
            composed.add(new ArrayList<>());
        }
    }

    /**
     * Records a post the service stored (compose-post answered it).
     *
     * @param post the post, with the id and time of the service's answer
     */
    public synchronized void composed(Post post) {
        composed.get(post.author()).add(post);
    }

    /**
     * {@return the answer to read-home-timeline of {@code user} with {@code limit}}
     *
     * @param user a user
     * @param limit the most posts
     */
    public synchronized TimelineResult timeline(int user, int limit) {
        List<Post> all = new ArrayList<>();
        for (int v : data.followees(user)) {
            all.addAll(List.of(data.postsBy(v)));
            all.addAll(composed.get(v));
        }
        all.sort(TIMELINE_ORDER);
        return new TimelineResult(user, all.subList(0, Math.min(limit, all.size())));
    }

    /**
     * {@return the answer to compose-post of {@code post}}
     *
     * @param post the post as stored
     */
    public Composed compose(Post post) {
        return new Composed(post.id(), post.ts(), data.followers(post.author()).length);
    }
}
