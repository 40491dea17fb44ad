package io.doubleface.services.setalgebra;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The corpus, its stop words, the index and the union, without a network. */
class SetAlgebraDataTest {

    static final SetAlgebraData DATA = SetAlgebraData.of(7, 2_000, 300, 15);

    @Test
    void theSameSeedGivesTheSameDocumentsAndQueriesAndAnotherSeedOthers() {
        SetAlgebraData again = SetAlgebraData.of(7, 2_000, 300, 15);
        SetAlgebraData other = SetAlgebraData.of(8, 2_000, 300, 15);
        int differ = 0;
        for (int d = 0; d < DATA.docs(); d++) {
            assertArrayEquals(DATA.document(d), again.document(d));
            differ += Arrays.equals(DATA.document(d), other.document(d)) ? 0 : 1;
        }
        assertTrue(differ > 1_900, "other seed, same documents: " + (2_000 - differ));
        assertEquals(DATA.query(5), again.query(5));
        assertEquals(DATA.stopWords(), again.stopWords());
    }

    @Test
    void stopWordsAreTheMostFrequentWordsOfTheCorpusAndQueriesHaveNone() {
        long[] df = new long[DATA.vocabulary()];
        for (int d = 0; d < DATA.docs(); d++) {
            for (int w : DATA.document(d)) {
                df[w]++;
            }
        }
        // document frequency orders like collection frequency for these skews: the stop words are
        // among the most common words, and Zipf makes w0 the most common of all
        assertEquals(15, DATA.stopWords().size());
        assertEquals("w0", DATA.stopWords().get(0));
        long leastStop = Long.MAX_VALUE;
        for (String s : DATA.stopWords()) {
            leastStop = Math.min(leastStop, df[Integer.parseInt(s.substring(1))]);
        }
        int moreFrequentNonStop = 0;
        for (int w = 0; w < df.length; w++) {
            if (!DATA.isStopWord(SetAlgebraData.word(w)) && df[w] > leastStop) {
                moreFrequentNonStop++;
            }
        }
        assertTrue(moreFrequentNonStop <= 2, moreFrequentNonStop + " non-stop words more frequent than a stop word");
        assertTrue(df[0] > df[10] && df[10] > df[100], "not Zipf-like: " + df[0] + " " + df[10] + " " + df[100]);
        for (int j = 0; j < 200; j++) {
            List<String> q = DATA.query(j);
            assertTrue(q.size() >= 1 && q.size() <= SetAlgebraData.MAX_QUERY_DRAWN, q.toString());
            assertEquals(q.size(), new HashSet<>(q).size());
            for (String w : q) {
                assertFalse(DATA.isStopWord(w), w);
            }
        }
    }

    @Test
    void theIndexIntersectsAsAScanOfTheDocumentsDoes() {
        PostingIndex all = new PostingIndex(DATA, 0, 1);
        PostingIndex shard = new PostingIndex(DATA, 1, 3);
        for (int j = 0; j < 50; j++) {
            List<String> q = DATA.query(j);
            List<Integer> scan = new ArrayList<>();
            for (int d = 0; d < DATA.docs(); d++) {
                Set<String> words = new HashSet<>();
                for (int w : DATA.document(d)) {
                    words.add(SetAlgebraData.word(w));
                }
                if (words.containsAll(q)) {
                    scan.add(d);
                }
            }
            assertFalse(scan.isEmpty(), "a synthetic query matches at least the document it was drawn from: " + q);
            assertEquals(scan, Arrays.stream(all.intersect(q)).boxed().toList(), q.toString());
            assertEquals(scan.stream().filter(d -> d % 3 == 1).toList(), Arrays.stream(shard.intersect(q)).boxed()
                    .toList());
        }
        assertEquals(0, all.intersect(List.of("w0")).length, "stop words are not indexed");
        assertEquals(0, all.intersect(List.of("nosuchword")).length);
    }

    @Test
    void theUnionTakesTheSmallestIdsOfSortedLists() {
        assertEquals(List.of(1, 2, 3, 5), SetAlgebraService.union(List.of(new int[] {1, 5, 9}, new int[] {},
                new int[] {2, 3}), 4));
        assertEquals(List.of(), SetAlgebraService.union(List.of(), 4));
        assertThrows(IllegalArgumentException.class, () -> SetAlgebraData.of(1, 10, 5, 5));
        assertThrows(IllegalArgumentException.class, () -> SetAlgebraData.of(1, 0, 5, 1));
        assertNotEquals(DATA.query(1), DATA.query(2));
    }
}
