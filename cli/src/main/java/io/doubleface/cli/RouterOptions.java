package io.doubleface.cli;

import io.doubleface.services.router.RouterData;
import io.doubleface.services.router.RouterKeys;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Router's data and layout options (a picocli mixin), shared by {@code leaf router} and {@code serve router}. */
final class RouterOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--replicas", paramLabel = "N", description = "Replicas per group (the leaves are groups x N).")
    int replicas = RouterKeys.DEFAULT_REPLICAS;

    @Option(names = "--keys", paramLabel = "N", description = "Keys preloaded on the leaves (key:0 .. key:N-1).")
    int keys = RouterData.DEFAULT_KEYS;

    @Option(names = "--value-size", paramLabel = "N", description = "Characters per preloaded value.")
    int valueSize = RouterData.DEFAULT_VALUE_SIZE;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the preloaded values.")
    long seed = RouterData.DEFAULT_SEED;

    /** The preloaded data, or a usage error. */
    RouterData data() {
        try {
            return new RouterData(seed, keys, valueSize);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--" + e.getMessage().replace("valueSize", "value-size"));
        }
    }

    /** The layout of {@code leaves} leaves, or a usage error. */
    RouterKeys layout(int leaves) {
        try {
            return new RouterKeys(leaves, replicas);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--" + e.getMessage());
        }
    }
}
