package io.doubleface.services.social;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The data set, the id scheme, the layout and the reference, without a network. */
class SocialDataTest {

    static byte[] bytes(SocialData d) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        d.write(out);
        return out.toByteArray();
    }

    @Test
    void theSameSeedGivesTheSameBytesAndAnotherSeedOthers() throws Exception {
        byte[] a = bytes(SocialData.of(3, 300, 12, 4, 0.9));
        assertArrayEquals(a, bytes(SocialData.of(3, 300, 12, 4, 0.9)));
        assertFalse(Arrays.equals(a, bytes(SocialData.of(4, 300, 12, 4, 0.9))));
        assertFalse(Arrays.equals(a, bytes(SocialData.of(3, 300, 12, 4, 1.1))));
        // the bytes of the defaults, pinned: generation is the same on every JVM and platform
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes(SocialData.defaults())));
        assertEquals(DEFAULTS_SHA256, sha, "the default data set changed");
    }

    static final String DEFAULTS_SHA256 = "e520a085fe079d6d1e13847e5c7b2a0e01eedea382045c710483500a410aa47a";

    @Test
    void followersFollowAPowerLawAndMirrorTheFollowees() {
        SocialData d = SocialData.defaults();
        int[] counts = new int[d.users()];
        long edges = 0;
        for (int u = 0; u < d.users(); u++) {
            int[] f = d.followees(u);
            assertTrue(f.length >= 1 && f.length <= 2 * SocialData.DEFAULT_FOLLOWEES - 1, "user " + u + ": " + f.length);
            for (int i = 0; i < f.length; i++) {
                assertNotEquals(u, f[i], "user " + u + " follows itself");
                assertTrue(i == 0 || f[i - 1] < f[i], "followees of " + u + " not ascending and distinct");
                assertTrue(Arrays.binarySearch(d.followers(f[i]), u) >= 0, u + " follows " + f[i] + " but is no follower");
            }
            edges += f.length;
            counts[u] = d.followers(u).length;
        }
        assertEquals(edges, d.follows());
        assertEquals(edges, Arrays.stream(counts).asLongStream().sum());
        double mean = (double) edges / d.users();
        assertTrue(mean > 18 && mean < 22, "mean followees " + mean);
        Arrays.sort(counts);
        int max = counts[counts.length - 1];
        int median = counts[counts.length / 2];
        long top1 = 0;
        for (int i = counts.length - counts.length / 100; i < counts.length; i++) {
            top1 += counts[i];
        }
        System.out.println("social graph: " + d + "; median followers " + median + ", top 1% hold "
                + String.format("%.1f%%", 100.0 * top1 / edges));
        assertTrue(max > 20 * median, "heavy tail: max " + max + " vs median " + median);
        assertTrue(top1 > edges / 10, "top 1% of users hold " + top1 + " of " + edges + " follows");
    }

    @Test
    void seededPostsAreOrderedInTimeAndCarryTheirIds() {
        SocialData d = SocialData.of(1, 50, 5, 3, 0.5);
        assertEquals(150, d.posts());
        for (int p = 0; p < d.posts(); p++) {
            Post post = d.post(p);
            assertEquals(p % 50, post.author());
            assertEquals(SocialData.EPOCH_MILLIS + p * SocialData.POST_INTERVAL_MILLIS, post.ts());
            assertEquals(PostIds.seeded(p), post.id());
            assertEquals(PostIds.SEEDED_SERVER, PostIds.server(post.id()));
            assertEquals(post, Post.of(post.toBson()));
        }
        assertEquals(List.of(d.post(7), d.post(57), d.post(107)), List.of(d.postsBy(7)));
        assertThrows(IndexOutOfBoundsException.class, () -> d.post(150));
        assertThrows(IllegalArgumentException.class, () -> SocialData.of(1, 1, 1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> SocialData.of(1, 10, 10, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> SocialData.of(1, 10, 3, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> SocialData.of(1, 10, 3, 1, Double.NaN));
        assertThrows(IllegalStateException.class, () -> Post.of(new org.bson.BsonDocument("_id", new org.bson.BsonInt32(1))));
    }

    @Test
    void idsOfOneServerAscendAndNeverMeetAnotherServersOrTheSeeded() {
        PostIds a = new PostIds(0, 1);
        PostIds b = new PostIds(PostIds.MAX_SERVER, 1);
        long prev = 0;
        for (int i = 0; i < 1000; i++) {
            long x = a.next();
            long y = b.next();
            assertTrue(x > prev);
            prev = x;
            assertEquals(0, PostIds.server(x));
            assertEquals(PostIds.MAX_SERVER, PostIds.server(y));
            assertNotEquals(x, y);
            assertNotEquals(PostIds.SEEDED_SERVER, PostIds.server(y));
        }
        assertEquals((5L << 10) | 3, new PostIds(3, 5).next());
        assertTrue(PostIds.clockSequence() > 1_700_000_000_000_000L);
        assertTrue(new PostIds(0, PostIds.MAX_SEQUENCE).next() > 0);
        assertThrows(IllegalArgumentException.class, () -> new PostIds(PostIds.SEEDED_SERVER, 1));
        assertThrows(IllegalArgumentException.class, () -> new PostIds(-1, 1));
        assertThrows(IllegalArgumentException.class, () -> new PostIds(0, 0));
        assertThrows(IllegalArgumentException.class, () -> new PostIds(0, PostIds.MAX_SEQUENCE + 1));
    }

    @Test
    void theReferenceOrdersLikeZrevrangeAndAnswersJson() {
        SocialData d = SocialData.of(2, 20, 3, 2, 0.5);
        SocialReference ref = new SocialReference(d);
        int author = d.followees(0)[0];
        // same time: by the id's decimal string, greatest first ("9…" before "10…", as Redis orders members)
        Post p9 = new Post(9, author, SocialData.EPOCH_MILLIS * 2, "nine");
        Post p10 = new Post(10, author, SocialData.EPOCH_MILLIS * 2, "ten \"quoted\" \\ é");
        ref.composed(p10);
        ref.composed(p9);
        TimelineResult t = ref.timeline(0, 3);
        assertEquals(List.of(p9, p10), t.posts().subList(0, 2));
        assertEquals(3, t.posts().size());
        assertTrue(t.toJson().startsWith("{\"user\":0,\"posts\":[{\"id\":9,\"author\":" + author + ",\"ts\":"
                + SocialData.EPOCH_MILLIS * 2 + ",\"text\":\"nine\"},{\"id\":10,"), t.toJson());
        assertTrue(t.toJson().contains("\"text\":\"ten \\\"quoted\\\" \\\\ é\"}"), t.toJson());
        assertTrue(t.toJson().endsWith("]}\n"));
        assertEquals("{\"user\":5,\"posts\":[]}\n", new TimelineResult(5, List.of()).toJson());
        assertEquals(new Composed(9, p9.ts(), d.followers(author).length), ref.compose(p9));
        assertEquals("{\"id\":9,\"ts\":3,\"followers\":4}\n", new Composed(9, 3, 4).toJson());
    }

    @Test
    void layoutSpreadsUsersAndPostsOverTheShards() {
        int[] users = new int[4];
        int[] posts = new int[4];
        PostIds ids = new PostIds(5, 1);
        for (int i = 0; i < 4000; i++) {
            users[SocialLayout.redisShard(i, 4)]++;
            posts[SocialLayout.mongoShard(ids.next(), 4)]++;
        }
        for (int s = 0; s < 4; s++) {
            assertTrue(users[s] > 800 && posts[s] > 800, "shard " + s + ": " + users[s] + " users, " + posts[s] + " posts");
        }
        assertEquals("timeline:12", SocialLayout.timelineKey(12));
        assertEquals("followers:12", SocialLayout.followersKey(12));
    }
}
