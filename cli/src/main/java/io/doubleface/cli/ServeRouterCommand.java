package io.doubleface.cli;

import io.doubleface.redis.RedisDriver;
import io.doubleface.services.router.RouterKeys;
import io.doubleface.services.router.RouterService;
import io.doubleface.services.router.v1.RouterGrpc;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code doubleface serve router}: the Router mid-tier ({@link RouterService}) over Router leaves. */
@Command(name = "router",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs the Router mid-tier (GET /router/get?key=K, /router/set?key=K&value=V) over replica leaves.",
        description = {
            "Hashes each key (XXH64, then jump consistent hash) to a group of --replicas leaves. A get reads one "
                + "replica (round robin) and fails over to the next; a set writes every replica and succeeds when a "
                + "majority stored it. --leaves redis://... uses redis-server replicas instead of gRPC leaves "
                + "(doubleface leaf router --store redis): GET and SET. See docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf router --leaves 12 --base-port 7701",
            "  doubleface serve router --leaves grpc://127.0.0.1:7701-7712 --grpc-port 8081",
            "  curl 'http://127.0.0.1:8080/router/set?key=user:1&value=hello'",
            "  curl 'http://127.0.0.1:8080/router/get?key=user:1'",
            "  doubleface leaf router --store redis --leaves 12 --base-port 7701",
            "  doubleface serve router --leaves redis://127.0.0.1:7701-7712"})
final class ServeRouterCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    MuSuiteServeOptions serve;

    @Option(names = "--replicas", paramLabel = "N", description = "Replicas per group (as the leaves were started).")
    int replicas = RouterKeys.DEFAULT_REPLICAS;

    ServeRouterCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        String sample = RouterService.GET_PATH + "?key=key:42";
        String methods = RouterGrpc.getGetMethod().getFullMethodName() + ", "
                + RouterGrpc.getSetMethod().getFullMethodName();
        if (serve.leaves.startsWith("redis://")) {
            return serve.serve(env, "router", (b, grpc) -> {
                RedisDriver redis = RedisDriver.of(serve.leaves, serve.driverSettings());
                RouterKeys layout = RouterService.installOnRedis(b, redis, replicas, grpc);
                return List.of("  leaves   " + serve.leaves + " (" + redis.shardCount() + " redis servers)",
                        "  data     " + describe(layout));
            }, "curl '{base}" + sample + "'", methods);
        }
        return serve.run(env, "router", (b, leaves, grpc) -> {
            return describe(RouterService.install(b, leaves, replicas, grpc));
        }, sample, methods);
    }

    private static String describe(RouterKeys layout) {
        return layout.groups() + " groups of " + layout.replicas() + " replicas (XXH64 + jump hash)";
    }
}
