package io.doubleface.cli;

import io.doubleface.services.recommend.RecommendData;
import io.doubleface.services.recommend.RecommendService;
import io.doubleface.services.recommend.v1.RecommendGrpc;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code doubleface serve recommend}: the Recommend mid-tier ({@link RecommendService}). */
@Command(name = "recommend",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs the Recommend mid-tier (GET /recommend?user=U&item=I or ?query=J): collaborative filtering "
            + "over gRPC leaves.",
        description = {
            "Asks every leaf to predict the user's rating of the item from similar users on its shard and answers "
                + "the mean of the leaves' predictions (the same --users/--items/--ratings/--seed as the leaves'). A "
                + "leaf that fails is left out and listed in missing_leaves; no leaf at all is 503. See "
                + "docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf recommend --leaves 4 --base-port 7901",
            "  doubleface serve recommend --leaves grpc://127.0.0.1:7901-7904 --grpc-port 8081",
            "  curl 'http://127.0.0.1:8080/recommend?user=12&item=3'"})
final class ServeRecommendCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    MuSuiteServeOptions serve;

    @Mixin
    RecommendOptions ratings;

    ServeRecommendCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        RecommendData data = ratings.data();
        return serve.run(env, "recommend", (b, leaves, grpc) -> {
            RecommendService.install(b, leaves, data, grpc);
            return data.toString();
        }, RecommendService.PATH + "?user=12&item=3", RecommendGrpc.getPredictMethod().getFullMethodName());
    }
}
