package io.doubleface.cli;

import io.doubleface.services.social.SocialData;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The social graph's data options (a picocli mixin), shared by {@code leaf social} and {@code serve social}. */
final class SocialOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--users", paramLabel = "N", description = "Users.")
    int users = SocialData.DEFAULT_USERS;

    @Option(names = "--followees", paramLabel = "N", description = "Mean number of users each user follows.")
    int followees = SocialData.DEFAULT_FOLLOWEES;

    @Option(names = "--posts-per-user", paramLabel = "N", description = "Posts each user wrote before the start.")
    int postsPerUser = SocialData.DEFAULT_POSTS_PER_USER;

    @Option(names = "--popularity", paramLabel = "S",
            description = "Zipf exponent of the follower distribution (0 = uniform; higher = a few users followed by "
                    + "most).")
    double popularity = SocialData.DEFAULT_POPULARITY;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the graph and the posts.")
    long seed = SocialData.DEFAULT_SEED;

    /** The data set, or a usage error. */
    SocialData data() {
        try {
            return SocialData.of(seed, users, followees, postsPerUser, popularity);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--" + e.getMessage());
        }
    }
}
