package example.search;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The example's documents: {@code documents} documents of 5–20 distinct words each from a
 * vocabulary of {@value #VOCABULARY} words ({@code w0} … {@code w199}), drawn with a skew (low
 * numbers are common), the same on every run. Document {@code i} is {@code "d" + i} and lives on
 * shard {@code i % shards}.
 */
public final class Corpus {

    /** Distinct words: {@value}. */
    public static final int VOCABULARY = 200;

    private Corpus() {}

    /** The words of document {@code doc}. */
    public static SortedSet<String> words(int doc) {
        Random r = new Random(0x5EA2C4L * 31 + doc);
        int n = 5 + r.nextInt(16);
        SortedSet<String> words = new TreeSet<>();
        while (words.size() < n) {
            double u = r.nextDouble();
            words.add("w" + (int) (VOCABULARY * u * u)); // skewed towards small numbers
        }
        return words;
    }

    /** The documents of {@code shard} of {@code shards}, out of {@code documents}. */
    public static List<Integer> shard(int shard, int shards, int documents) {
        List<Integer> docs = new ArrayList<>();
        for (int d = shard; d < documents; d += shards) {
            docs.add(d);
        }
        return docs;
    }
}
