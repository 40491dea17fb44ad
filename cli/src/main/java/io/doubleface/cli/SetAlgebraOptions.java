package io.doubleface.cli;

import io.doubleface.services.setalgebra.SetAlgebraData;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Set Algebra's corpus options (a picocli mixin), shared by {@code leaf setalgebra} and {@code serve setalgebra}. */
final class SetAlgebraOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--docs", paramLabel = "N", description = "Documents in the corpus.")
    int docs = SetAlgebraData.DEFAULT_DOCS;

    @Option(names = "--vocabulary", paramLabel = "N", description = "Distinct words (Zipf-distributed).")
    int vocabulary = SetAlgebraData.DEFAULT_VOCABULARY;

    @Option(names = "--stop-words", paramLabel = "N", description = "The N most frequent words are stop words.")
    int stopWords = SetAlgebraData.DEFAULT_STOP_WORDS;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the corpus.")
    long seed = SetAlgebraData.DEFAULT_SEED;

    /** The corpus, or a usage error. */
    SetAlgebraData data() {
        try {
            return SetAlgebraData.of(seed, docs, vocabulary, stopWords);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--" + e.getMessage().replace("stopWords", "stop-words"));
        }
    }
}
