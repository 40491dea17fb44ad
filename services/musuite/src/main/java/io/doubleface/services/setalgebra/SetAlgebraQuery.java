package io.doubleface.services.setalgebra;

import java.util.List;

/**
 * A decoded Set Algebra request: the terms to intersect (stop words removed, distinct, in the
 * order given), the stop words it named (ignored), and how many document ids to answer.
 *
 * @param terms the terms to intersect, 1 .. {@value #MAX_TERMS}
 * @param stopWords the query's stop words, ignored
 * @param limit document ids to answer, 1 .. {@value #MAX_LIMIT}
 */
public record SetAlgebraQuery(List<String> terms, List<String> stopWords, int limit) {

    /** Most terms in a query: {@value}. */
    public static final int MAX_TERMS = 10;
    /** Default number of document ids answered: {@value}. */
    public static final int DEFAULT_LIMIT = 100;
    /** Most document ids answered: {@value}. */
    public static final int MAX_LIMIT = 10_000;
    /** Longest term: {@value} characters. */
    public static final int MAX_TERM_LENGTH = 64;

    /** Copies the lists. */
    public SetAlgebraQuery {
        terms = List.copyOf(terms);
        stopWords = List.copyOf(stopWords);
    }
}
