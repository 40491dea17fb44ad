package io.doubleface.cli;

import io.doubleface.redis.RedisServers;
import io.doubleface.services.router.RouterData;
import io.doubleface.services.router.RouterKeys;
import io.doubleface.services.router.RouterLeaf;
import io.doubleface.services.router.RouterLoader;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code doubleface leaf router}: Router's in-memory replica leaves, one gRPC server each, until SIGINT/SIGTERM. */
@Command(name = "router",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs Router leaves: key-value replicas, --replicas per group (in-memory gRPC leaves or redis-server).",
        description = {
            "Starts --leaves servers, leaf i on --base-port + i; leaves g*R .. g*R+R-1 are the R replicas of "
                + "group g, each preloaded with its group's keys. --store memory: gRPC servers "
                + "(doubleface.router.v1.RouterLeaf) holding the keys in memory; --store redis: redis-server "
                + "processes ($DOUBLEFACE_REDIS_SERVER, else redis-server on PATH, else the embedded-redis binary) "
                + "filled with MSET, which the mid-tier reads with GET and writes with SET. Prints the listening "
                + "line, then serves until Ctrl-C. See docs/services.md.",
            ""},
        footer = {"", "Examples:", "  doubleface leaf router --leaves 12 --base-port 7701",
            "  doubleface serve router --leaves grpc://127.0.0.1:7701-7712 --grpc-port 8081",
            "  doubleface leaf router --store redis --leaves 12 --base-port 7701",
            "  doubleface serve router --leaves redis://127.0.0.1:7701-7712"})
final class LeafRouterCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    LeafOptions leaf = new LeafOptions(7701, 12);

    @Mixin
    RouterOptions router;

    /** Where the leaves keep their keys. */
    enum Store { memory, redis }

    @Option(names = "--store", paramLabel = "STORE", description = "memory (gRPC leaves) or redis (redis-server "
            + "processes).")
    Store store = Store.memory;

    LeafRouterCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        RouterData data = router.data();
        RouterKeys layout = router.layout(leaf.leaves);
        if (store == Store.redis) {
            return runRedis(data, layout);
        }
        return leaf.run(env, i -> new RouterLeaf(data, layout, i), layout.groups() + " groups of "
                + layout.replicas() + " replicas, " + data);
    }

    private int runRedis(RouterData data, RouterKeys layout) {
        RedisServers redis;
        try {
            redis = RedisServers.start(leaf.leaves, leaf.basePort, leaf.host);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(leaf.spec.commandLine(), "--leaves/--base-port: " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new CliException(e.getMessage(), e);
        }
        try {
            RouterLoader.load(redis.uri(), data, layout);
        } catch (RuntimeException e) {
            redis.close();
            throw new CliException(e.getMessage(), e);
        }
        env.out().println("listening on " + redis.uri().substring("redis://".length()) + " (" + leaf.leaves
                + " redis-server processes): " + layout.groups() + " groups of " + layout.replicas() + " replicas, "
                + data);
        env.out().println("  serve    doubleface serve router --leaves " + redis.uri() + " --replicas "
                + layout.replicas());
        env.out().flush();
        env.stop().awaitThenClose(redis);
        return DoubleFaceCli.EXIT_OK;
    }
}
