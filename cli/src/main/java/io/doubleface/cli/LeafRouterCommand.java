package io.doubleface.cli;

import io.doubleface.services.router.RouterData;
import io.doubleface.services.router.RouterKeys;
import io.doubleface.services.router.RouterLeaf;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code doubleface leaf router}: Router's in-memory replica leaves, one gRPC server each, until SIGINT/SIGTERM. */
@Command(name = "router",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs Router leaves: in-memory key-value replicas, --replicas per group.",
        description = {
            "Starts --leaves gRPC servers (doubleface.router.v1.RouterLeaf), leaf i on --base-port + i; leaves "
                + "g*R .. g*R+R-1 are the R replicas of group g, each preloaded with its group's keys. Prints the "
                + "listening line, then serves until Ctrl-C. See docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf router --leaves 12 --base-port 7701",
            "  doubleface serve router --leaves grpc://127.0.0.1:7701-7712 --grpc-port 8081"})
final class LeafRouterCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    LeafOptions leaf = new LeafOptions(7701, 12);

    @Mixin
    RouterOptions router;

    LeafRouterCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        RouterData data = router.data();
        RouterKeys layout = router.layout(leaf.leaves);
        return leaf.run(env, i -> new RouterLeaf(data, layout, i), layout.groups() + " groups of "
                + layout.replicas() + " replicas, " + data);
    }
}
