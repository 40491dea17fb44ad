package io.doubleface.cli;

import io.doubleface.services.hdsearch.HdSearchData;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The HDSearch data set's options (a picocli mixin), shared by {@code leaf hdsearch} and
 * {@code serve hdsearch}: both must be given the same values.
 */
final class HdSearchOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--points", paramLabel = "N", description = "Feature vectors in the corpus.")
    int points = HdSearchData.DEFAULT_POINTS;

    @Option(names = "--dims", paramLabel = "N", description = "Dimension of the vectors.")
    int dims = HdSearchData.DEFAULT_DIMS;

    @Option(names = "--clusters", paramLabel = "N", description = "Cluster centres the points are drawn around.")
    int clusters = HdSearchData.DEFAULT_CLUSTERS;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the corpus (same seed, same vectors).")
    long seed = HdSearchData.DEFAULT_SEED;

    /** The data set, or a usage error. */
    HdSearchData data() {
        try {
            return HdSearchData.of(seed, points, dims, clusters);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--" + e.getMessage());
        }
    }
}
