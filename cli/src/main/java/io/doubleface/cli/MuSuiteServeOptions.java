package io.doubleface.cli;

import io.doubleface.grpc.GrpcDriver;
import io.doubleface.server.FanoutServer;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options every {@code doubleface serve <μSuite service>} shares (a picocli mixin): the
 * service's gRPC leaves, and the listening, threading and timeout options of
 * {@link MidTierServeOptions}.
 */
final class MuSuiteServeOptions extends MidTierServeOptions {

    @Option(names = "--leaves", paramLabel = "URI", required = true,
            description = "The service's gRPC leaves, grpc://HOST:FIRST-LAST or grpc://HOST:PORT,HOST:PORT,... "
                    + "(as printed by doubleface leaf <service>); leaf i serves shard i. Router also takes "
                    + "redis://HOST:FIRST-LAST (leaf router --store redis).")
    String leaves;

    /**
     * Runs a μSuite mid-tier until the stop signal: {@code install} adds the service to the builder
     * over the leaves' driver (whether to add the gRPC method: {@code --grpc-port} given) and returns
     * the banner's line on the data; then the server starts with these options and prints its banner.
     *
     * @param env the command's environment
     * @param name the service, e.g. {@code hdsearch}
     * @param install adds the service; returns the banner's data line
     * @param pathAndQuery a sample query for the banner
     * @param grpcMethod the gRPC method name(s) for the banner
     * @return the exit code
     */
    int run(CliEnv env, String name, Installer install, String pathAndQuery, String grpcMethod) {
        return serve(env, name, (b, grpc) -> {
            GrpcDriver driver = GrpcDriver.of(leaves, driverSettings());
            String data = install.install(b, driver, grpc);
            return List.of("  leaves   " + leaves + " (" + driver.shardCount() + " leaves)", "  data     " + data);
        }, "curl '{base}" + pathAndQuery + "'", grpcMethod);
    }

    /** Adds a μSuite service to a server being built. */
    @FunctionalInterface
    interface Installer {
        /** Adds the service over {@code leaves}, with its gRPC method if {@code grpc}; returns the banner's data line. */
        String install(FanoutServer.Builder builder, GrpcDriver leaves, boolean grpc);
    }
}
