package io.doubleface.services.setalgebra;

import io.doubleface.services.musuite.SplitMix64;
import io.doubleface.services.musuite.Zipf;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Set Algebra's synthetic corpus: {@code docs} documents over a vocabulary of {@code vocabulary}
 * words {@code w0 … w(V-1)} whose frequencies follow Zipf's law with exponent {@value #ZIPF_EXPONENT}
 * (word {@code wr} drawn with probability ∝ 1/(r+1)), as natural-language term frequencies do.
 * Document {@code d} is {@value #MIN_DRAWS}–{@value #MAX_DRAWS} draws from that distribution (its
 * distinct words kept), generated from {@code (seed, d)} alone, so a leaf generates only its shard
 * (document {@code d} on leaf {@code d % leaves}). The {@code stopWords} words of highest
 * <em>collection frequency</em> (occurrences over the whole corpus, counted once here; ties to the
 * smaller word number) are stop words: not indexed, ignored in queries. Synthetic query {@code j}
 * is 1–{@value #MAX_QUERY_DRAWN} distinct non-stop words of one document ({@link #query}).
 *
 * <p>Immutable and thread-safe after construction (which counts the whole corpus once).
 */
public final class SetAlgebraData {

    /** Default number of documents: {@value}. */
    public static final int DEFAULT_DOCS = 100_000;
    /** Default vocabulary: {@value} words. */
    public static final int DEFAULT_VOCABULARY = 20_000;
    /** Default number of stop words: {@value}. */
    public static final int DEFAULT_STOP_WORDS = 100;
    /** Default seed: {@value}. */
    public static final long DEFAULT_SEED = 42;
    /** Most documents: {@value}. */
    public static final int MAX_DOCS = 10_000_000;
    /** The Zipf exponent of word frequencies: {@value}. */
    public static final double ZIPF_EXPONENT = 1.0;
    /** Fewest word draws per document: {@value}. */
    public static final int MIN_DRAWS = 20;
    /** Most word draws per document: {@value}. */
    public static final int MAX_DRAWS = 80;
    /** Most words in a synthetic query: {@value} (a query may name up to {@link SetAlgebraQuery#MAX_TERMS}). */
    public static final int MAX_QUERY_DRAWN = 4;

    private static final long DOCS = 1;
    private static final long QUERIES = 2;

    private final long seed;
    private final int docs;
    private final int vocabulary;
    private final Zipf words;
    private final Set<String> stopWords;
    private final List<String> stopList;

    private SetAlgebraData(long seed, int docs, int vocabulary, int stopWords) {
        if (docs < 1 || docs > MAX_DOCS) {
            throw new IllegalArgumentException("docs: " + docs + " (expected: 1.." + MAX_DOCS + ")");
        }
        if (vocabulary < 2 || vocabulary > 1_000_000) {
            throw new IllegalArgumentException("vocabulary: " + vocabulary + " (expected: 2..1000000)");
        }
        if (stopWords < 0 || stopWords >= vocabulary) {
            throw new IllegalArgumentException("stopWords: " + stopWords + " (expected: 0.." + (vocabulary - 1) + ")");
        }
        this.seed = seed;
        this.docs = docs;
        this.vocabulary = vocabulary;
        this.words = new Zipf(vocabulary, ZIPF_EXPONENT);
        long[] counts = new long[vocabulary];
        for (int d = 0; d < docs; d++) {
            draws(d, counts);
        }
        Integer[] byFrequency = new Integer[vocabulary];
        Arrays.setAll(byFrequency, r -> r);
        Arrays.sort(byFrequency, (a, b) -> counts[a] != counts[b] ? Long.compare(counts[b], counts[a])
                : Integer.compare(a, b));
        List<String> stop = new ArrayList<>(stopWords);
        for (int i = 0; i < stopWords; i++) {
            stop.add(word(byFrequency[i]));
        }
        this.stopList = List.copyOf(stop);
        this.stopWords = Set.copyOf(stop);
    }

    /**
     * The corpus of the given parameters.
     *
     * @param seed the seed
     * @param docs documents, {@code 1 ..} {@value #MAX_DOCS}
     * @param vocabulary distinct words, {@code 2 .. 1000000}
     * @param stopWords how many of the most frequent words are stop words, {@code 0 .. vocabulary-1}
     * @return the corpus
     * @throws IllegalArgumentException if a parameter is out of range
     */
    public static SetAlgebraData of(long seed, int docs, int vocabulary, int stopWords) {
        return new SetAlgebraData(seed, docs, vocabulary, stopWords);
    }

    /**
     * {@return word number {@code r}: {@code "w" + r}}
     *
     * @param r the word's rank in probability, 0 = most probable
     */
    public static String word(int r) {
        return "w" + r;
    }

    private int drawWord(SplitMix64 r) {
        return words.draw(r);
    }

    /** Adds document d's draws to counts (collection frequency). */
    private void draws(int d, long[] counts) {
        SplitMix64 r = SplitMix64.of(seed, DOCS, d);
        int n = MIN_DRAWS + r.nextInt(MAX_DRAWS - MIN_DRAWS + 1);
        for (int i = 0; i < n; i++) {
            counts[drawWord(r)]++;
        }
    }

    /**
     * {@return the distinct word numbers of document {@code d}, ascending}
     *
     * @param d the document, {@code 0 .. docs-1}
     */
    public int[] document(int d) {
        if (d < 0 || d >= docs) {
            throw new IndexOutOfBoundsException("document: " + d + " (expected: 0.." + (docs - 1) + ")");
        }
        SplitMix64 r = SplitMix64.of(seed, DOCS, d);
        int n = MIN_DRAWS + r.nextInt(MAX_DRAWS - MIN_DRAWS + 1);
        int[] w = new int[n];
        for (int i = 0; i < n; i++) {
            w[i] = drawWord(r);
        }
        return Arrays.stream(w).sorted().distinct().toArray();
    }

    /**
     * {@return synthetic query {@code j}: 1 .. {@value #MAX_QUERY_DRAWN} distinct non-stop words, in draw order}
     * The words are drawn from one document (picked from {@code (seed, j)}) among its non-stop words,
     * so they follow the corpus's word probabilities and every synthetic query matches at least that
     * document (independent Zipf draws of 3–4 words would almost never co-occur); a document with no
     * non-stop word gives a query of words drawn from the whole vocabulary.
     *
     * @param j the query's number, {@code >= 0}
     */
    public List<String> query(int j) {
        if (j < 0) {
            throw new IndexOutOfBoundsException("query: " + j + " (expected: >= 0)");
        }
        SplitMix64 r = SplitMix64.of(seed, QUERIES, j);
        int n = 1 + r.nextInt(MAX_QUERY_DRAWN);
        List<String> pool = new ArrayList<>();
        for (int w : document(r.nextInt(docs))) {
            if (!isStopWord(word(w))) {
                pool.add(word(w));
            }
        }
        List<String> out = new ArrayList<>(n);
        while (out.size() < n && !pool.isEmpty()) {
            out.add(pool.remove(r.nextInt(pool.size())));
        }
        for (int tries = 0; out.isEmpty() && tries < 1000; tries++) {
            String w = word(drawWord(r));
            if (!isStopWord(w)) {
                out.add(w);
            }
        }
        return out;
    }

    /**
     * {@return whether {@code word} is a stop word}
     *
     * @param word a word
     */
    public boolean isStopWord(String word) {
        return stopWords.contains(word);
    }

    /** {@return the stop words, most frequent first} */
    public List<String> stopWords() {
        return stopList;
    }

    /** {@return the seed} */
    public long seed() {
        return seed;
    }

    /** {@return the number of documents} */
    public int docs() {
        return docs;
    }

    /** {@return the vocabulary size} */
    public int vocabulary() {
        return vocabulary;
    }

    @Override
    public String toString() {
        return docs + " documents, " + vocabulary + " words (Zipf), " + stopList.size() + " stop words, seed " + seed;
    }
}
