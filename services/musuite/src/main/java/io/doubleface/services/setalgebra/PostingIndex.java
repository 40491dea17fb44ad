package io.doubleface.services.setalgebra;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An inverted index of some documents of a {@link SetAlgebraData} corpus: word → the ascending ids
 * of the documents containing it, stop words left out. A leaf holds the index of its shard, the
 * reference the index of the whole corpus. Immutable after construction, thread-safe.
 */
public final class PostingIndex {

    private static final int[] NONE = new int[0];

    private final Map<String, int[]> postings;

    /**
     * Indexes documents {@code first, first + step, first + 2*step, …} of {@code data}.
     *
     * @param data the corpus
     * @param first the first document
     * @param step the distance between documents (the number of leaves; 1 for all)
     */
    public PostingIndex(SetAlgebraData data, int first, int step) {
        int[] counts = new int[data.vocabulary()];
        List<int[]> docs = new ArrayList<>();
        for (int d = first; d < data.docs(); d += step) {
            int[] words = data.document(d);
            docs.add(words);
            for (int w : words) {
                counts[w]++;
            }
        }
        int[][] lists = new int[data.vocabulary()][];
        int[] fill = new int[data.vocabulary()];
        for (int w = 0; w < lists.length; w++) {
            lists[w] = counts[w] == 0 ? NONE : new int[counts[w]];
        }
        int d = first;
        for (int[] words : docs) {
            for (int w : words) {
                lists[w][fill[w]++] = d;
            }
            d += step;
        }
        Map<String, int[]> m = new HashMap<>();
        for (int w = 0; w < lists.length; w++) {
            String word = SetAlgebraData.word(w);
            if (lists[w].length > 0 && !data.isStopWord(word)) {
                m.put(word, lists[w]);
            }
        }
        this.postings = m;
    }

    /**
     * {@return the ascending ids of the documents containing every word (none for an unknown or stop word)}
     *
     * @param words one or more words
     */
    public int[] intersect(List<String> words) {
        List<int[]> lists = new ArrayList<>(words.size());
        for (String w : words) {
            lists.add(postings.getOrDefault(w, NONE));
        }
        lists.sort(Comparator.comparingInt(l -> l.length)); // shortest first: the result only shrinks
        int[] acc = lists.get(0);
        for (int i = 1; i < lists.size() && acc.length > 0; i++) {
            acc = intersect(acc, lists.get(i));
        }
        return acc;
    }

    /** The ascending intersection of two ascending lists (a merge walk). */
    static int[] intersect(int[] a, int[] b) {
        int[] out = new int[Math.min(a.length, b.length)];
        int n = 0;
        int i = 0;
        int j = 0;
        while (i < a.length && j < b.length) {
            if (a[i] < b[j]) {
                i++;
            } else if (a[i] > b[j]) {
                j++;
            } else {
                out[n++] = a[i];
                i++;
                j++;
            }
        }
        return Arrays.copyOf(out, n);
    }

    /** {@return the number of indexed words} */
    public int words() {
        return postings.size();
    }
}
