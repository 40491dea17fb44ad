package io.doubleface.cli;

import io.doubleface.driver.Transport;
import io.doubleface.driver.DriverSettings;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.server.FanoutServer;
import io.doubleface.server.HttpLimits;
import io.doubleface.services.ycsb.KvRecords;
import io.doubleface.services.ycsb.RecordStore;
import io.doubleface.services.ycsb.RecordStores;
import io.doubleface.services.ycsb.YcsbBinding;
import io.doubleface.services.ycsb.YcsbGrpcBinding;
import io.doubleface.services.ycsb.YcsbQuery;
import io.doubleface.services.ycsb.YcsbService;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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
        subcommands = {ServeCommand.Ycsb.class, ServeHdSearchCommand.class, ServeRouterCommand.class,
            ServeSetAlgebraCommand.class, ServeRecommendCommand.class, ServeSocialCommand.class})
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
                    + "records; GET /health answers ok with no shard call. Without --shards it starts an embedded KV leaf (--embedded-shards shards on free "
                    + "loopback ports) in the same process, so this one command gives a working service. Prints "
                    + "a banner with a sample query and the admin URLs, then serves until Ctrl-C (SIGINT) or SIGTERM.",
                ""},
            footer = {"",
                "Switch the threading configuration at run time:",
                "  curl -X PUT 'http://127.0.0.1:9090/admin/config?name=type2a-1f2b'",
                "Configuration names: thread-N, thread-virtual, type1-N, type2a-NfMb, type2b, type2b-fixed-N, "
                    + "doubleface[-N], each optionally with -poll; doubleface also with -fifo or -cf; μTune's "
                    + "sib, sip, sdb, sdp, aib, aip, adb, adp with pool sizes (sdb-1n-64w, adp-1n-4w-2r). "
                    + "See docs/models.md.",
                "Load adapter: --config adaptive (μTune: ring-buffer load monitor, any profiled configuration), "
                    + "adaptive-window (5 ms windows instead), fm (5 ms windows, only the pool sizes of the "
                    + "peak-sustaining configuration vary); with --profile FILE, or " + Ycsb.DEFAULT_PROFILE
                    + " if it exists, else it explores without a profile. See docs/tuning.md."})
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
                description = "Admin port (/admin page, /admin/config, /admin/stats, /admin/knobs, /metrics); 0 = any free "
                    + "port, -1 = none.")
        int adminPort = DEFAULT_ADMIN_PORT;

        @Option(names = "--host", paramLabel = "ADDRESS",
                description = "Address to listen on (0.0.0.0 for all interfaces, e.g. in a container).")
        String host = "127.0.0.1";

        @Option(names = "--admin-host", paramLabel = "ADDRESS",
                description = "Address of the admin listener (default 127.0.0.1, whatever --host says); "
                        + "any other needs --admin-token-file.")
        String adminHost = "127.0.0.1";

        @Option(names = "--admin-token-file", paramLabel = "FILE",
                description = "File holding the admin token (>= 16 characters; or set DOUBLEFACE_ADMIN_TOKEN): "
                        + "PUT /admin/config then needs 'Authorization: Bearer <token>', and off loopback "
                        + "every admin request does.")
        Path adminTokenFile;

        @Option(names = "--shards", paramLabel = "URI",
                description = {"Shards to fan out to, one URI naming the store and the shard list: kv://HOST:FIRST-LAST, "
                    + "kv://HOST:PORT,HOST:PORT,..., grpc://HOST:FIRST-LAST (gRPC KV leaves, doubleface leaf grpc) "
                    + "(and redis://, mongodb:// likewise when those drivers are on the class path; docs/cli.md lists "
                    + "every form). A Redis Cluster: redis-cluster://SEED,SEED (reads routed by key). Shards as "
                    + "replica groups found by name (kv://, grpc://, redis:// with the master first): HOST:PORT|HOST:PORT, dns:///NAME:PORT, "
                    + "dns+srv:///_SVC._tcp.NAME, file:PATH (docs/deploy.md).",
                    "Default: an embedded KV leaf in this process."})
        String shards;

        @Option(names = "--embedded-shards", paramLabel = "N",
                description = "Shards of the embedded KV leaf (only without --shards).")
        int embeddedShards = DEFAULT_EMBEDDED_SHARDS;

        @Option(names = "--config", paramLabel = "NAME", converter = Converters.ConfigurationConverter.class,
                description = "Initial threading configuration, e.g. doubleface, thread-64, type1-32, type2a-1f2b, "
                    + "type2b, sdb-1n-64w; or adaptive, adaptive-window, fm for the load adapter.")
        String config = "doubleface";

        static final String DEFAULT_PROFILE = ProfileFiles.DEFAULT;

        @Mixin
        AdapterOptions adapter;

        @Option(names = {"--reply-order", "--policy"}, paramLabel = "completion-first|completion-first-arrival|fifo", converter = Converters.PolicyConverter.class,
                description = "DoubleFace reply order of configurations that name none (--policy: its old name).")
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
        Transport transport;

        @Option(names = "--max-header-size", paramLabel = "BYTES", converter = Converters.ByteSizeConverter.class,
                description = "Largest request header block (8192, 8k, ...); larger gets 431.")
        int maxHeaderSize = HttpLimits.DEFAULT_MAX_HEADER_SIZE;

        @Option(names = "--max-body-size", paramLabel = "BYTES", converter = Converters.ByteSizeConverter.class,
                description = "Largest request body (65536, 64k, ...); larger gets 413.")
        int maxBodySize = HttpLimits.DEFAULT_MAX_BODY_SIZE;

        @Option(names = "--idle-timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
                defaultValue = "60s", description = "Close a client connection idle for this long (250ms, 1s, 2m), plus up to a "
                        + "tenth at random so that connections idle since the same moment do not close together.")
        Duration idleTimeout;

        @Option(names = "--max-queued-bytes", paramLabel = "BYTES", converter = Converters.ByteSizeConverter.class,
                description = "Close a client connection that leaves more response bytes than this unread "
                        + "(16m, ...; default 16m).")
        int maxQueuedBytes = (int) HttpLimits.DEFAULT_MAX_QUEUED_BYTES;

        @Option(names = "--max-queued-bytes-total", paramLabel = "BYTES", converter = Converters.ByteSizeConverter.class,
                description = "Most response bytes the whole server holds for clients that are behind (over "
                        + "1 MiB unread each); past it the connection that would go over is closed (256m, 1g, ...; "
                        + "default 256m).")
        int maxQueuedBytesTotal = (int) FanoutServer.DEFAULT_MAX_QUEUED_BYTES_TOTAL;

        @Option(names = "--slow-reader-timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
                defaultValue = "30s", description = "Close a client connection that reads none of its waiting "
                        + "responses for this long.")
        Duration slowReaderTimeout;

        @Option(names = "--request-read-timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
                defaultValue = "10s", description = "Answer 408 and close when a request's head or body has begun "
                        + "to arrive but is not complete this long later (checked once per period).")
        Duration requestReadTimeout;

        @Option(names = "--drain-timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
                defaultValue = "10s", description = "On SIGTERM/SIGINT (after --drain-delay): stop accepting, serve a "
                        + "request still arriving on an open connection and close that connection with its answer, and let "
                        + "requests in flight finish for up to this long before closing.")
        Duration drainTimeout;

        @Option(names = "--drain-delay", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
                defaultValue = "0s", description = "On SIGTERM/SIGINT: the admin listener's /ready answers 503 at once, "
                        + "and the server keeps accepting and serving (every answer with Connection: close) for this long "
                        + "before the drain closes the listener, so a balancer polling /ready takes it out of rotation "
                        + "before any connection is refused.")
        Duration drainDelay;

        @Option(names = "--max-connections", paramLabel = "N",
                description = "Most open client connections; one more is closed on accept (default 20000).")
        int maxConnections = FanoutServer.DEFAULT_MAX_CONNECTIONS;

        @Option(names = "--http2", negatable = true, defaultValue = "true", fallbackValue = "true",
                description = "Serve HTTP/2 on the HTTP port next to HTTP/1.1 (default on): h2c by prior knowledge "
                        + "or Upgrade: h2c, h2 by ALPN with --tls-cert; the same routes, limits and error answers. "
                        + "--no-http2: HTTP/1.1 only.")
        boolean http2 = true;

        @Option(names = "--http2-max-streams", paramLabel = "N",
                description = "Most streams open at once on one HTTP/2 connection (SETTINGS_MAX_CONCURRENT_STREAMS; "
                        + "default 256).")
        int http2MaxStreams = FanoutServer.DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS;

        @Option(names = "--admission", paramLabel = "SPEC", converter = Converters.AdmissionConverter.class,
                defaultValue = "off", description = "Load shedding: most requests in flight before new ones get "
                        + "503 + Retry-After at once (gRPC RESOURCE_EXHAUSTED): off, N (fixed), adaptive (Gradient2, "
                        + "100 within 20..10000), or adaptive:INITIAL:MIN:MAX.")
        io.doubleface.server.Admission admission;

        @Option(names = "--resilience", paramLabel = "SPEC", converter = Converters.ResilienceConverter.class,
                defaultValue = "off", description = "Between a shard and a failure (every YCSB read is idempotent): "
                        + "off, or comma-separated circuit:N:DURATION (fail a shard's calls at once for DURATION after "
                        + "N failures in a row, then probe), retries:N[:RATIO:FLOOR] (up to N retries within a budget "
                        + "of RATIO of calls + FLOOR/s; default 0.1:10), hedge:DELAY[:RATIO:FLOOR] (a second copy "
                        + "after DELAY without reply, loop models only; DELAY pNN follows the live NNth percentile "
                        + "of reply times). E.g. circuit:5:1s,retries:1,hedge:20ms:0.05:5 or hedge:p95.")
        io.doubleface.driver.spi.Resilience<io.doubleface.driver.Command<?>> resilience;

        @Option(names = "--tls-cert", paramLabel = "FILE", description = "Serve HTTP, gRPC and admin over TLS with "
                + "this certificate chain (PEM); needs --tls-key. OpenSSL when netty-tcnative is on the class path, "
                + "else the JDK's TLS.")
        java.nio.file.Path tlsCert;

        @Option(names = "--tls-key", paramLabel = "FILE", description = "The private key of --tls-cert (PEM, PKCS#8, "
                + "unencrypted).")
        java.nio.file.Path tlsKey;

        @Mixin
        LoopKnobOptions knobs;

        @Mixin
        ReadyOptions ready;

        @Option(names = "--ready-file", paramLabel = "FILE", description = "Once listening, write the ports as one "
                + "JSON object to FILE (written whole, then renamed into place): {\"port\":…, \"admin_port\":…, "
                + "\"grpc_port\":…, \"pid\":…}; -1 for a listener that is off. For programs that start the server.")
        java.nio.file.Path readyFile;

        Ycsb(CliEnv env) {
            this.env = env;
        }

        @Override
        public Integer call() {
            if (readyFile != null && ReadyFile.problem(readyFile) != null) {
                throw new ParameterException(spec.commandLine(), ReadyFile.problem(readyFile));
            }
            if (shards != null && spec.commandLine().getParseResult().hasMatchedOption("--embedded-shards")) {
                throw new ParameterException(spec.commandLine(),
                        "--embedded-shards applies only without --shards (the embedded KV leaf)");
            }
            if (port < 0 || port > 65535) {
                throw new ParameterException(spec.commandLine(), "--port: " + port + " (expected: 0..65535)");
            }
            if ((tlsCert == null) != (tlsKey == null)) {
                throw new ParameterException(spec.commandLine(), "--tls-cert and --tls-key go together (give both or neither)");
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
            AdapterOptions.Choice adaptive = adapter.resolve(config, "ycsb", spec.commandLine());
            KvLeafServer leaf = null;
            FanoutServer server = null;
            HealthRoute health;
            try {
                RecordStore<?> store;
                if (shards == null) {
                    // the embedded default: loopback only, whatever --host says; nobody else needs the shards
                    leaf = KvLeafServer.builder().shards(embeddedShards).basePort(0).records(records)
                            .transport(transport).start();
                    store = new KvRecords(KvDriver.of(leaf.addresses()));
                } else {
                    store = RecordStores.open(shards, DriverSettings.DEFAULT, records);
                }
                FanoutServer.Builder b = FanoutServer.builder();
                if (tlsCert != null) {
                    b.tls(tlsCert, tlsKey);
                }
                YcsbService.install(b, store, records, scanRecords, replyWorkMicros * 1000, grpcPort != null,
                        resilience);
                health = new HealthRoute();
                b.get(HealthRoute.PATH, health, health);
                b.host(host).port(port).adminPort(adminPort).adminHost(adminHost).adminToken(adminToken())
                        .maxConnections(maxConnections).maxQueuedBytesTotal(maxQueuedBytesTotal).admission(admission)
                        .http2(http2).http2MaxConcurrentStreams(http2MaxStreams)
                        .transport(transport).replyOrder(policy).deadline(deadline)
                        .limits(new HttpLimits(HttpLimits.DEFAULT_MAX_INITIAL_LINE, maxHeaderSize, maxBodySize,
                                HttpLimits.DEFAULT_MAX_PIPELINED, idleTimeout, maxQueuedBytes, slowReaderTimeout,
                                requestReadTimeout));
                if (ioThreads != null) {
                    b.ioThreads(ioThreads);
                }
                if (grpcPort != null) {
                    b.grpc(grpcPort);
                }
                adapter.configure(b, adaptive, config);
                knobs.apply(b);
                server = b.start();
            } catch (IllegalArgumentException e) {
                StopSignal.closeAll(leaf);
                throw new ParameterException(spec.commandLine(), e.getMessage(), e);
            } catch (IllegalStateException | UnsatisfiedLinkError | UnsupportedOperationException e) {
                StopSignal.closeAll(leaf);
                throw new CliException(e.getMessage(), e);
            }
            health.readyOf(server);
            printBanner(env.out(), server, leaf, adaptive.profileSource());
            ready.await(env.out(), server);
            if (readyFile != null) {
                ReadyFile.write(readyFile, server);
            }
            env.listener().serving(server);
            FanoutServer running = server;
            env.stop().awaitThenClose(drainDelay.plus(drainTimeout).plusSeconds(StopSignal.CLOSE_WAIT_SECONDS),
                    () -> running.stop(drainDelay, drainTimeout), leaf);
            return DoubleFaceCli.EXIT_OK;
        }

        private String adminToken; // read once by adminToken()
        private boolean adminTokenRead;

        /** The admin token from --admin-token-file or DOUBLEFACE_ADMIN_TOKEN, or null; read once. */
        private String adminToken() {
            if (!adminTokenRead) {
                adminToken = readAdminToken();
                adminTokenRead = true;
            }
            return adminToken;
        }

        private String readAdminToken() {
            if (adminTokenFile != null) {
                try {
                    return Files.readString(adminTokenFile).strip();
                } catch (IOException e) {
                    throw new ParameterException(spec.commandLine(), "--admin-token-file: cannot read " + adminTokenFile
                            + ": " + e.getMessage());
                }
            }
            String env = System.getenv("DOUBLEFACE_ADMIN_TOKEN");
            return env == null || env.isBlank() ? null : env.strip();
        }

        private void printBanner(PrintWriter out, FanoutServer server, KvLeafServer leaf, String profileSource) {
            String h = Hosts.forUrl(host);
            String base = (tlsCert != null ? "https://" : "http://") + h + ":" + server.port();
            out.println("doubleface serve ycsb " + VersionProvider.version() + ": listening on " + base
                    + " (" + server.ioThreads() + " I/O loops, " + server.transport().name().toLowerCase(Locale.ROOT)
                    + ")");
            if (server.grpcPort() >= 0) {
                String grpc = "grpc://" + h + ":" + server.grpcPort();
                out.println("  grpc     " + grpc + " doubleface.ycsb.v1.FanoutService/Query   try: doubleface call " + grpc
                        + " --fanout " + Math.min(YcsbBinding.DEFAULT_FANOUT, server.backends().get(0).shardCount())
                        + " --size small --key 42");
            }
            out.println("  config   " + server.configuration().name() + " (policy " + policy + ", deadline "
                    + Durations.format(deadline) + ")");
            String adapterLine = AdapterOptions.bannerLine(server, profileSource);
            if (adapterLine != null) {
                out.println(adapterLine);
            }
            String knobsLine = LoopKnobOptions.bannerLine(server);
            if (knobsLine != null) {
                out.println(knobsLine);
            }
            if (leaf != null) {
                out.println("  shards   embedded KV leaf: " + Hosts.describe(leaf));
            } else {
                out.println("  shards   " + shards + " (" + server.backends().get(0).shardCount()
                        + " shards, " + records + " records each)");
            }
            out.println("  query    curl '" + base + "/query?fanout=" + Math.min(YcsbBinding.DEFAULT_FANOUT,
                    server.backends().get(0).shardCount()) + "&size=small&key=42'");
            if (server.adminPort() >= 0) {
                String admin = (tlsCert != null ? "https://" : "http://") + Hosts.forUrl(adminHost) + ":" + server.adminPort();
                out.println("  admin    " + admin + "/admin/config   " + admin + "/admin/stats   " + admin + "/metrics");
                out.println("  switch   curl -X PUT " + (adminToken() == null ? ""
                        : "-H \"Authorization: Bearer $DOUBLEFACE_ADMIN_TOKEN\" ") + "'" + admin
                        + "/admin/config?name=type2a-1f2b'");
            }
            out.println("  stop     Ctrl-C");
            out.flush();
        }
    }
}
