package io.doubleface.cli;

import io.doubleface.services.musuite.LeafServers;
import io.grpc.BindableService;
import java.util.function.IntFunction;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The options every {@code doubleface leaf <μSuite service>} shares (a picocli mixin): how many leaves, where. */
final class LeafOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--leaves", paramLabel = "N", description = "Number of leaves (one port each).")
    int leaves = 4;

    @Option(names = "--base-port", paramLabel = "PORT",
            description = "Port of leaf 0; leaf i listens on PORT+i. 0 = any free ports.")
    int basePort;

    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address to listen on.")
    String host = "127.0.0.1";

    LeafOptions() {
        this(0, 4);
    }

    LeafOptions(int defaultBasePort, int defaultLeaves) {
        this.basePort = defaultBasePort;
        this.leaves = defaultLeaves;
    }

    /**
     * Runs leaves until the stop signal, after printing their listening line and {@code data}.
     *
     * @param env the command's environment
     * @param service the service object of leaf {@code i}
     * @param data what the leaves hold, for the listening line
     * @return the exit code
     */
    int run(CliEnv env, IntFunction<BindableService> service, String data) {
        LeafServers servers = start(service);
        env.out().println(servers.listeningMessage() + ": " + data);
        env.out().flush();
        env.stop().awaitThenClose(servers);
        return DoubleFaceCli.EXIT_OK;
    }

    /** Starts the leaves, or fails with a usage error (bad count or ports) or a run-time error (a port in use). */
    LeafServers start(IntFunction<BindableService> service) {
        try {
            return LeafServers.start(host, basePort, leaves, service);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new CliException(e.getMessage(), e);
        }
    }
}
