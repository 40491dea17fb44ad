package io.doubleface.cli;

import io.doubleface.grpc.GrpcDriver;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.recommend.RecommendData;
import io.doubleface.services.recommend.RecommendService;
import io.doubleface.services.recommend.v1.RecommendGrpc;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParameterException;

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
        FanoutServer server;
        try {
            FanoutServer.Builder b = FanoutServer.builder();
            RecommendService.install(b, GrpcDriver.of(serve.leaves, serve.driverSettings()), data,
                    serve.grpcPort != null);
            server = serve.apply(b).start();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(serve.spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new CliException(e.getMessage(), e);
        }
        serve.printBanner(env.out(), "recommend", server, RecommendService.PATH + "?user=12&item=3",
                RecommendGrpc.getPredictMethod().getFullMethodName(), data.toString());
        env.listener().serving(server);
        env.stop().awaitThenClose(server);
        return DoubleFaceCli.EXIT_OK;
    }
}
