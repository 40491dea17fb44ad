package io.doubleface.cli;

import io.doubleface.services.hdsearch.HdSearchData;
import io.doubleface.services.hdsearch.HdSearchLeaf;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code doubleface leaf hdsearch}: the HDSearch leaves, one gRPC server each, until SIGINT/SIGTERM. */
@Command(name = "hdsearch",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs HDSearch leaves: each holds the feature vectors i with i %% leaves == its index.",
        description = {
            "Starts --leaves gRPC servers (doubleface.hdsearch.v1.HdSearchLeaf), leaf i on --base-port + i, each "
                + "generating its shard of the seeded corpus. Prints the listening line, then serves until Ctrl-C. "
                + "See docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf hdsearch --leaves 4 --base-port 7601",
            "  doubleface serve hdsearch --leaves grpc://127.0.0.1:7601-7604 --grpc-port 8081"})
final class LeafHdSearchCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    LeafOptions leaf = new LeafOptions(7601, 4);

    @Mixin
    HdSearchOptions data;

    LeafHdSearchCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        HdSearchData d = data.data();
        int n = leaf.leaves;
        return leaf.run(env, i -> new HdSearchLeaf(d, i, n), d.toString());
    }
}
