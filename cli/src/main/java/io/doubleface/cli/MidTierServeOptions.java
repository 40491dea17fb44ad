package io.doubleface.cli;

import io.doubleface.driver.DriverSettings;
import io.doubleface.server.FanoutServer;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The options every {@code doubleface serve <service>} of a written-on-the-API service shares (a
 * picocli mixin; {@link MuSuiteServeOptions} adds the μSuite services' {@code --leaves}): where the
 * mid-tier listens, its threading configuration, deadline and shard call timeout, with the same
 * names and defaults as {@code serve ycsb}; how it starts and waits for the stop signal; and the
 * banner it prints.
 */
class MidTierServeOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--port", paramLabel = "PORT", description = "HTTP port of the service; 0 = any free port.")
    int port = ServeCommand.Ycsb.DEFAULT_PORT;

    @Option(names = "--grpc-port", paramLabel = "PORT",
            description = {"Also serve the service's gRPC method on this port (0 = any free port).",
                "Default: no gRPC upstream."})
    Integer grpcPort;

    @Option(names = "--admin-port", paramLabel = "PORT",
            description = "Admin port (/admin page, /admin/config, /admin/stats, /admin/knobs, /metrics); 0 = any free "
                    + "port, -1 = none.")
    int adminPort = ServeCommand.Ycsb.DEFAULT_ADMIN_PORT;

    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address to listen on.")
    String host = "127.0.0.1";

    @Option(names = "--config", paramLabel = "NAME", converter = Converters.ConfigurationConverter.class,
            description = "Threading configuration, e.g. doubleface, thread-64, type1-32, type2a-1f2b, type2b, "
                    + "sdb-1n-64w; or adaptive, adaptive-window, fm for the load adapter (docs/tuning.md).")
    String config = "doubleface";

    @Mixin
    AdapterOptions adapter;

    @Mixin
    LoopKnobOptions knobs;

    @Mixin
    ReadyOptions ready;

    @Option(names = "--io-threads", paramLabel = "N",
            description = "I/O event loops. Default: the number of CPUs.")
    Integer ioThreads;

    @Option(names = "--deadline", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "1s", description = "Per-request deadline (250ms, 1s, 2m); a request not answered by then "
                    + "gets 504.")
    Duration deadline;

    @Option(names = "--call-timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = DriverSettings.DEFAULT_CALL_TIMEOUT_MILLIS + "ms",
            description = "Timeout of one shard (leaf) call; a gRPC leaf's call carries it as its deadline.")
    Duration callTimeout;

    @Option(names = "--ready-file", paramLabel = "FILE", description = "Once listening, write the ports as one "
            + "JSON object to FILE (written whole, then renamed into place): {\"port\":…, \"admin_port\":…, "
            + "\"grpc_port\":…, \"pid\":…}; -1 for a listener that is off. For programs that start the server.")
    java.nio.file.Path readyFile;

    /** The driver settings of the service's backends. */
    DriverSettings driverSettings() {
        return DriverSettings.DEFAULT.withCallTimeout(callTimeout);
    }

    /** Adds a service to a server being built and returns what its banner says of it. */
    @FunctionalInterface
    interface Setup {
        /** Adds the backends and routes (the gRPC methods too if {@code grpc}); returns the banner's lines. */
        List<String> install(FanoutServer.Builder builder, boolean grpc);
    }

    /**
     * Runs a mid-tier until the stop signal: {@code setup} adds the service, the server starts with
     * these options, prints its banner and writes the ready file.
     *
     * @param env the command's environment
     * @param name the service, e.g. {@code hdsearch}
     * @param setup adds the service; returns the banner's lines on its backends and data
     * @param sample a sample request for the banner, e.g. {@code curl {base}/hdsearch?query=7} ({@code {base}}: the base URL)
     * @param grpcMethods the gRPC method name(s) for the banner
     * @return the exit code
     */
    int serve(CliEnv env, String name, Setup setup, String sample, String grpcMethods) {
        FanoutServer server;
        List<String> lines;
        String profileSource;
        try {
            FanoutServer.Builder b = FanoutServer.builder();
            AdapterOptions.Choice adaptive = adapter.resolve(config, name, spec.commandLine());
            lines = setup.install(b, grpcPort != null);
            server = apply(b, adaptive).start();
            profileSource = adaptive.profileSource();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException | UnsupportedOperationException e) {
            throw new CliException(e.getMessage(), e);
        }
        printBanner(env.out(), name, server, sample, grpcMethods, lines, profileSource);
        ready.await(env.out(), server);
        if (readyFile != null) {
            ReadyFile.write(readyFile, server);
        }
        env.listener().serving(server);
        env.stop().awaitThenClose(server);
        return DoubleFaceCli.EXIT_OK;
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
        knobs.apply(b);
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
     * @param sample a sample request, {@code {base}} standing for the base URL
     * @param grpcMethods the full gRPC method name(s)
     * @param lines the service's own lines (backends, data), each already labelled
     * @param profileSource where the load adapter's profile came from, or {@code null}
     */
    void printBanner(PrintWriter out, String name, FanoutServer server, String sample, String grpcMethods,
            List<String> lines, String profileSource) {
        String h = Hosts.forUrl(host);
        String base = "http://" + h + ":" + server.port();
        out.println("doubleface serve " + name + " " + VersionProvider.version() + ": listening on " + base);
        if (server.grpcPort() >= 0) {
            out.println("  grpc     grpc://" + h + ":" + server.grpcPort() + " " + grpcMethods);
        }
        out.println("  config   " + server.configuration().name() + " (deadline " + Durations.format(deadline)
                + ", call timeout " + Durations.format(callTimeout) + ")");
        String adapterLine = AdapterOptions.bannerLine(server, profileSource);
        if (adapterLine != null) {
            out.println(adapterLine);
        }
        String knobsLine = LoopKnobOptions.bannerLine(server);
        if (knobsLine != null) {
            out.println(knobsLine);
        }
        lines.forEach(out::println);
        out.println("  query    " + sample.replace("{base}", base));
        if (server.adminPort() >= 0) {
            String admin = "http://" + Hosts.forUrl("127.0.0.1") + ":" + server.adminPort();
            out.println("  admin    " + admin + "/admin/config   " + admin + "/admin/stats   " + admin + "/metrics");
        }
        out.println("  stop     Ctrl-C");
        out.flush();
    }
}
