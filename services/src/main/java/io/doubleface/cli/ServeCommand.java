package io.doubleface.cli;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardDriver;
import io.doubleface.driver.ShardDrivers;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.loop.LoopGroup;
import io.doubleface.server.FanoutServer;
import io.doubleface.server.HttpLimits;
import io.doubleface.services.ycsb.YcsbBinding;
import io.doubleface.services.ycsb.YcsbGrpcBinding;
import io.doubleface.services.ycsb.YcsbQuery;
import io.doubleface.services.ycsb.YcsbService;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code doubleface serve …}: mid-tier services. */
@Command(name = "serve",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        header = "Runs a mid-tier fanout service.",
        commandListHeading = "%nCommands:%n",
        subcommands = ServeCommand.Ycsb.class)
final class ServeCommand {

    /**
     * {@code doubleface serve ycsb}: the YCSB fanout service ({@link YcsbService}) on a
     * {@link FanoutServer}, over the KV shards of {@code --shards} or, without it, over an embedded
     * KV leaf started in the same process (the embedded default).
     */
    @Command(name = "ycsb",
            mixinStandardHelpOptions = true,
            versionProvider = VersionProvider.class,
            sortOptions = false,
            showDefaultValues = true,
            header = "Runs the YCSB fanout mid-tier (GET /query?fanout=K&size=S&key=N).",
            description = {
                "GET /query?fanout=K&size=small|medium|large&key=N reads K shards and answers with the merged "
                    + "records. Without --shards it starts an embedded KV leaf (--embedded-shards shards on free "
                    + "loopback ports) in the same process, so this one command gives a working service. Prints "
                    + "a banner with a sample query and the admin URLs, then serves until Ctrl-C (SIGINT) or SIGTERM.",
                ""},
            footer = {"",
                "Switch the threading configuration at run time:",
                "  curl -X PUT 'http://127.0.0.1:9090/admin/config?name=type2a-1f2b'",
                "Configuration names: thread-N, thread-virtual, type1-N, type2a-NfMb, type2b, type2b-fixed-N, "
                    + "doubleface[-N], each optionally with -poll; doubleface also with -fifo or -cf. "
                    + "See docs/models.md."})
    static final class Ycsb implements Callable<Integer> {

        /** Default upstream port: {@value}. */
        static final int DEFAULT_PORT = 8080;
        /** Default admin port: {@value}. */
        static final int DEFAULT_ADMIN_PORT = 9090;
        /** Default shards of the embedded leaf: {@value}. */
        static final int DEFAULT_EMBEDDED_SHARDS = 20;

        private final CliEnv env;

        @Spec
        CommandSpec spec;

        @Option(names = "--port", paramLabel = "PORT", description = "HTTP port of the service; 0 = any free port.")
        int port = DEFAULT_PORT;

        @Option(names = "--grpc-port", paramLabel = "PORT",
                description = {"Also serve doubleface.ycsb.v1.FanoutService/Query over gRPC on this port, on the same "
                    + "I/O loops and threading configuration as HTTP (0 = any free port; docs/grpc.md).",
                    "Default: no gRPC upstream."})
        Integer grpcPort;

        @Option(names = "--admin-port", paramLabel = "PORT",
                description = "Admin port (/admin/config, /admin/stats, /metrics); 0 = any free port, -1 = none.")
        int adminPort = DEFAULT_ADMIN_PORT;

        @Option(names = "--host", paramLabel = "ADDRESS",
                description = "Address to listen on (0.0.0.0 for all interfaces, e.g. in a container).")
        String host = "127.0.0.1";

        @Option(names = "--shards", paramLabel = "URI",
                description = {"Shards to fan out to, one URI naming the store and the shard list: kv://HOST:FIRST-LAST, "
                    + "kv://HOST:PORT,HOST:PORT,..., grpc://HOST:FIRST-LAST (gRPC KV leaves, doubleface leaf grpc) "
                    + "(and redis://, mongodb:// likewise when those drivers are on the class path; docs/cli.md lists "
                    + "every form).",
                    "Default: an embedded KV leaf in this process."})
        String shards;

        @Option(names = "--embedded-shards", paramLabel = "N",
                description = "Shards of the embedded KV leaf (only without --shards).")
        int embeddedShards = DEFAULT_EMBEDDED_SHARDS;

        @Option(names = "--config", paramLabel = "NAME", converter = Converters.ConfigurationConverter.class,
                description = "Initial threading configuration, e.g. doubleface, thread-64, type1-32, type2a-1f2b, type2b.")
        String config = "doubleface";

        @Option(names = "--policy", paramLabel = "completion-first|fifo", converter = Converters.PolicyConverter.class,
                description = "DoubleFace reply scheduling policy of configurations that name none.")
        String policy = "completion-first";

        @Option(names = "--io-threads", paramLabel = "N",
                description = "I/O event loops (upstream; downstream too under doubleface). Default: the number of CPUs.")
        Integer ioThreads;

        @Option(names = "--deadline", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
                defaultValue = "1s",
                description = "Per-request deadline (250ms, 1s, 2m); a request not answered by then gets 504.")
        Duration deadline;

        @Option(names = "--reply-work-us", paramLabel = "MICROS",
                description = "Synthetic CPU work per shard reply, in microseconds (as the paper's handlers had).")
        long replyWorkMicros;

        @Option(names = "--records", paramLabel = "N",
                description = "Records per shard (keys 0..N-1); must match the leaf's --records.")
        int records = LeafCommand.Kv.DEFAULT_RECORDS;

        @Option(names = "--scan-records", paramLabel = "N", description = "Records per size=large scan.")
        int scanRecords = YcsbService.DEFAULT_SCAN_RECORDS;

        @Option(names = "--transport", paramLabel = "auto|epoll|nio", converter = Converters.TransportConverter.class,
                defaultValue = "auto", description = "Event loop transport: auto = epoll if available, else nio.")
        LoopGroup.Transport transport;

        @Option(names = "--max-header-size", paramLabel = "BYTES", converter = Converters.ByteSizeConverter.class,
                description = "Largest request header block (8192, 8k, ...); larger gets 431.")
        int maxHeaderSize = HttpLimits.DEFAULT_MAX_HEADER_SIZE;

        @Option(names = "--max-body-size", paramLabel = "BYTES", converter = Converters.ByteSizeConverter.class,
                description = "Largest request body (65536, 64k, ...); larger gets 413.")
        int maxBodySize = HttpLimits.DEFAULT_MAX_BODY_SIZE;

        @Option(names = "--idle-timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
                defaultValue = "60s", description = "Close a client connection idle for this long (250ms, 1s, 2m).")
        Duration idleTimeout;

        Ycsb(CliEnv env) {
            this.env = env;
        }

        @Override
        public Integer call() {
            if (shards != null && spec.commandLine().getParseResult().hasMatchedOption("--embedded-shards")) {
                throw new ParameterException(spec.commandLine(),
                        "--embedded-shards applies only without --shards (the embedded KV leaf)");
            }
            if (port < 0 || port > 65535) {
                throw new ParameterException(spec.commandLine(), "--port: " + port + " (expected: 0..65535)");
            }
            if (grpcPort != null && (grpcPort < 0 || grpcPort > 65535)) {
                throw new ParameterException(spec.commandLine(), "--grpc-port: " + grpcPort + " (expected: 0..65535)");
            }
            if (adminPort < -1 || adminPort > 65535) {
                throw new ParameterException(spec.commandLine(), "--admin-port: " + adminPort + " (expected: -1..65535)");
            }
            if (replyWorkMicros < 0 || replyWorkMicros > 1_000_000) {
                throw new ParameterException(spec.commandLine(),
                        "--reply-work-us: " + replyWorkMicros + " (expected: 0..1000000)");
            }
            KvLeafServer leaf = null;
            FanoutServer<YcsbQuery, byte[], YcsbService.Result> server = null;
            try {
                YcsbService service = new YcsbService(records, scanRecords, replyWorkMicros * 1000);
                ShardDriver driver;
                if (shards == null) {
                    // the embedded default: loopback only, whatever --host says; nobody else needs the shards
                    leaf = KvLeafServer.builder().shards(embeddedShards).basePort(0).records(records)
                            .transport(transport).start();
                    driver = new KvDriver(leaf.addresses());
                } else {
                    driver = ShardDrivers.open(shards, DriverSettings.DEFAULT.withRecords(records));
                }
                FanoutServer.Builder<YcsbQuery, byte[], YcsbService.Result> b = FanoutServer
                        .builder(service, new YcsbBinding(driver.shardCount(), records))
                        .driver(driver, true) // closed by the server
                        .host(host).port(port).adminPort(adminPort)
                        .transport(transport).configuration(config).policy(policy).deadline(deadline)
                        .limits(new HttpLimits(HttpLimits.DEFAULT_MAX_INITIAL_LINE, maxHeaderSize, maxBodySize,
                                HttpLimits.DEFAULT_MAX_PIPELINED, idleTimeout));
                if (ioThreads != null) {
                    b.ioThreads(ioThreads);
                }
                if (grpcPort != null) {
                    b.grpc(grpcPort, new YcsbGrpcBinding(driver.shardCount(), records));
                }
                server = b.start();
            } catch (IllegalArgumentException e) {
                StopSignal.closeAll(leaf);
                throw new ParameterException(spec.commandLine(), e.getMessage(), e);
            } catch (IllegalStateException | UnsatisfiedLinkError e) {
                StopSignal.closeAll(leaf);
                throw new CliException(e.getMessage(), e);
            }
            printBanner(env.out(), server, leaf);
            env.listener().serving(server);
            env.stop().awaitThenClose(server, leaf);
            return DoubleFaceCli.EXIT_OK;
        }

        private void printBanner(PrintWriter out, FanoutServer<?, ?, ?> server, KvLeafServer leaf) {
            String h = Hosts.forUrl(host);
            String base = "http://" + h + ":" + server.port();
            out.println("doubleface serve ycsb " + VersionProvider.version() + ": listening on " + base
                    + " (" + server.ioLoops().size() + " I/O loops, " + (server.ioLoops().isEpoll() ? "epoll" : "nio")
                    + ")");
            if (server.grpcPort() >= 0) {
                String grpc = "grpc://" + h + ":" + server.grpcPort();
                out.println("  grpc     " + grpc + " doubleface.ycsb.v1.FanoutService/Query   try: doubleface call " + grpc
                        + " --fanout " + Math.min(YcsbBinding.DEFAULT_FANOUT, server.engine().context().driver().shardCount())
                        + " --size small --key 42");
            }
            out.println("  config   " + server.engine().active().name() + " (policy " + policy + ", deadline "
                    + Durations.format(deadline) + ")");
            if (leaf != null) {
                out.println("  shards   embedded KV leaf: " + Hosts.describe(leaf));
            } else {
                out.println("  shards   " + shards + " (" + server.engine().context().driver().shardCount()
                        + " shards, " + records + " records each)");
            }
            out.println("  query    curl '" + base + "/query?fanout=" + Math.min(YcsbBinding.DEFAULT_FANOUT,
                    server.engine().context().driver().shardCount()) + "&size=small&key=42'");
            if (server.adminPort() >= 0) {
                String admin = "http://" + h + ":" + server.adminPort();
                out.println("  admin    " + admin + "/admin/config   " + admin + "/admin/stats   " + admin + "/metrics");
                out.println("  switch   curl -X PUT '" + admin + "/admin/config?name=type2a-1f2b'");
            }
            out.println("  stop     Ctrl-C");
            out.flush();
        }
    }
}
