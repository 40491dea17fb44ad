package io.doubleface.cli;

import io.doubleface.services.recommend.RecommendData;
import io.doubleface.services.recommend.RecommendLeaf;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code doubleface leaf recommend}: the Recommend leaves, one gRPC server each, until SIGINT/SIGTERM. */
@Command(name = "recommend",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs Recommend leaves: each predicts ratings from the tuples t with t %% leaves == its index.",
        description = {
            "Starts --leaves gRPC servers (doubleface.recommend.v1.RecommendLeaf), leaf i on --base-port + i, each "
                + "holding its shard of the seeded {user, item, rating} tuples and predicting by user-based "
                + "collaborative filtering over it. Prints the listening line, then serves until Ctrl-C. See "
                + "docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf recommend --leaves 4 --base-port 7901",
            "  doubleface serve recommend --leaves grpc://127.0.0.1:7901-7904 --grpc-port 8081"})
final class LeafRecommendCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    LeafOptions leaf = new LeafOptions(7901, 4);

    @Mixin
    RecommendOptions ratings;

    LeafRecommendCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        RecommendData data = ratings.data();
        int n = leaf.leaves;
        return leaf.run(env, i -> new RecommendLeaf(data, i, n), data.toString());
    }
}
