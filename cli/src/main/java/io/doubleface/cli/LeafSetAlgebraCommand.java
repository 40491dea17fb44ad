package io.doubleface.cli;

import io.doubleface.services.setalgebra.SetAlgebraData;
import io.doubleface.services.setalgebra.SetAlgebraLeaf;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code doubleface leaf setalgebra}: the Set Algebra leaves, one gRPC server each, until SIGINT/SIGTERM. */
@Command(name = "setalgebra",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs Set Algebra leaves: each indexes the documents d with d %% leaves == its index.",
        description = {
            "Starts --leaves gRPC servers (doubleface.setalgebra.v1.SetAlgebraLeaf), leaf i on --base-port + i, "
                + "each building the posting lists of its shard of the seeded corpus (stop words left out). Prints "
                + "the listening line, then serves until Ctrl-C. See docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf setalgebra --leaves 4 --base-port 7801",
            "  doubleface serve setalgebra --leaves grpc://127.0.0.1:7801-7804 --grpc-port 8081"})
final class LeafSetAlgebraCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    LeafOptions leaf = new LeafOptions(7801, 4);

    @Mixin
    SetAlgebraOptions corpus;

    LeafSetAlgebraCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        SetAlgebraData data = corpus.data();
        int n = leaf.leaves;
        return leaf.run(env, i -> new SetAlgebraLeaf(data, i, n), data.toString());
    }
}
