package io.doubleface.cli;

import io.doubleface.driver.DriverSettings;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.server.FanoutServer;
import java.io.PrintWriter;
import java.time.Duration;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The options every {@code doubleface serve <μSuite service>} shares (a picocli mixin): where the
 * mid-tier listens, its threading configuration, deadline and leaf call timeout, with the same
 * names and defaults as {@code serve ycsb}; and the banner they print.
 */
final class MuSuiteServeOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--leaves", paramLabel = "URI", required = true,
            description = "The service's gRPC leaves, grpc://HOST:FIRST-LAST or grpc://HOST:PORT,HOST:PORT,... "
                    + "(as printed by doubleface leaf <service>); leaf i serves shard i.")
    String leaves;

    @Option(names = "--port", paramLabel = "PORT", description = "HTTP port of the service; 0 = any free port.")
    int port = ServeCommand.Ycsb.DEFAULT_PORT;

    @Option(names = "--grpc-port", paramLabel = "PORT",
            description = {"Also serve the service's gRPC method on this port (0 = any free port).",
                "Default: no gRPC upstream."})
    Integer grpcPort;

    @Option(names = "--admin-port", paramLabel = "PORT",
            description = "Admin port (/admin/config, /admin/stats, /metrics); 0 = any free port, -1 = none.")
    int adminPort = ServeCommand.Ycsb.DEFAULT_ADMIN_PORT;

    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address to listen on.")
    String host = "127.0.0.1";

    @Option(names = "--config", paramLabel = "NAME", converter = Converters.ConfigurationConverter.class,
            description = "Threading configuration, e.g. doubleface, thread-64, type1-32, type2a-1f2b, type2b, "
                    + "sdb-1n-64w; or adaptive, adaptive-window, fm for the load adapter (docs/tuning.md).")
    String config = "doubleface";

    @Mixin
    AdapterOptions adapter;

    @Option(names = "--io-threads", paramLabel = "N",
            description = "I/O event loops. Default: the number of CPUs.")
    Integer ioThreads;

    @Option(names = "--deadline", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "1s", description = "Per-request deadline (250ms, 1s, 2m); a request not answered by then "
                    + "gets 504.")
    Duration deadline;

    @Option(names = "--call-timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = DriverSettings.DEFAULT_CALL_TIMEOUT_MILLIS + "ms",
            description = "Timeout of one leaf call (its gRPC deadline).")
    Duration callTimeout;

    @Option(names = "--ready-file", paramLabel = "FILE", description = "Once listening, write the ports as one "
            + "JSON object to FILE (written whole, then renamed into place): {\"port\":…, \"admin_port\":…, "
            + "\"grpc_port\":…, \"pid\":…}; -1 for a listener that is off. For programs that start the server.")
    java.nio.file.Path readyFile;

    /** The driver settings of the leaves' backend. */
    DriverSettings driverSettings() {
        return DriverSettings.DEFAULT.withCallTimeout(callTimeout);
    }

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
        FanoutServer server;
        String data;
        String profileSource;
        try {
            FanoutServer.Builder b = FanoutServer.builder();
            AdapterOptions.Choice adaptive = adapter.resolve(config, name, spec.commandLine());
            data = install.install(b, GrpcDriver.of(leaves, driverSettings()), grpcPort != null);
            server = apply(b, adaptive).start();
            profileSource = adaptive.profileSource();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new CliException(e.getMessage(), e);
        }
        printBanner(env.out(), name, server, pathAndQuery, grpcMethod, data, profileSource);
        if (readyFile != null) {
            ReadyFile.write(readyFile, server);
        }
        env.listener().serving(server);
        env.stop().awaitThenClose(server);
        return DoubleFaceCli.EXIT_OK;
    }

    /** Adds a μSuite service to a server being built. */
    @FunctionalInterface
    interface Installer {
        /** Adds the service over {@code leaves}, with its gRPC method if {@code grpc}; returns the banner's data line. */
        String install(FanoutServer.Builder builder, GrpcDriver leaves, boolean grpc);
    }

    /** Checks the ports and sets the listening options and the configuration or load adapter on {@code b}. */
    FanoutServer.Builder apply(FanoutServer.Builder b, AdapterOptions.Choice adaptive) {
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "--port: " + port + " (expected: 0..65535)");
        }
        if (grpcPort != null && (grpcPort < 0 || grpcPort > 65535)) {
            throw new ParameterException(spec.commandLine(), "--grpc-port: " + grpcPort + " (expected: 0..65535)");
        }
        if (readyFile != null && ReadyFile.problem(readyFile) != null) {
            throw new ParameterException(spec.commandLine(), ReadyFile.problem(readyFile));
        }
        b.host(host).port(port).adminPort(adminPort).deadline(deadline);
        adapter.configure(b, adaptive, config);
        if (ioThreads != null) {
            b.ioThreads(ioThreads);
        }
        if (grpcPort != null) {
            b.grpc(grpcPort);
        }
        return b;
    }

    /**
     * Prints the banner of a running service.
     *
     * @param out where
     * @param name the service, e.g. {@code hdsearch}
     * @param server the running server
     * @param pathAndQuery a sample query, e.g. {@code /hdsearch?query=7&k=10}
     * @param grpcMethod the full gRPC method name
     * @param data one line on the data set
     * @param profileSource where the load adapter's profile came from, or {@code null}
     */
    void printBanner(PrintWriter out, String name, FanoutServer server, String pathAndQuery, String grpcMethod,
            String data, String profileSource) {
        String h = Hosts.forUrl(host);
        String base = "http://" + h + ":" + server.port();
        out.println("doubleface serve " + name + " " + VersionProvider.version() + ": listening on " + base);
        if (server.grpcPort() >= 0) {
            out.println("  grpc     grpc://" + h + ":" + server.grpcPort() + " " + grpcMethod);
        }
        out.println("  config   " + server.engine().active().name() + " (deadline " + Durations.format(deadline)
                + ", leaf call timeout " + Durations.format(callTimeout) + ")");
        String adapterLine = AdapterOptions.bannerLine(server, profileSource);
        if (adapterLine != null) {
            out.println(adapterLine);
        }
        out.println("  leaves   " + leaves + " (" + server.backends().get(0).shardCount() + " leaves)");
        out.println("  data     " + data);
        out.println("  query    curl '" + base + pathAndQuery + "'");
        if (server.adminPort() >= 0) {
            String admin = "http://" + Hosts.forUrl("127.0.0.1") + ":" + server.adminPort();
            out.println("  admin    " + admin + "/admin/config   " + admin + "/admin/stats   " + admin + "/metrics");
        }
        out.println("  stop     Ctrl-C");
        out.flush();
    }
}
