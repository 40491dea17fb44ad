package io.doubleface.cli;

import io.doubleface.services.recommend.RecommendData;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Recommend's data options (a picocli mixin), shared by {@code leaf recommend} and {@code serve recommend}. */
final class RecommendOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--users", paramLabel = "N", description = "Users.")
    int users = RecommendData.DEFAULT_USERS;

    @Option(names = "--items", paramLabel = "N", description = "Items (movies).")
    int items = RecommendData.DEFAULT_ITEMS;

    @Option(names = "--ratings", paramLabel = "N", description = "{user, item, rating} tuples.")
    int ratings = RecommendData.DEFAULT_RATINGS;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the ratings.")
    long seed = RecommendData.DEFAULT_SEED;

    /** The ratings, or a usage error. */
    RecommendData data() {
        try {
            return RecommendData.of(seed, users, items, ratings);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--" + e.getMessage());
        }
    }
}
