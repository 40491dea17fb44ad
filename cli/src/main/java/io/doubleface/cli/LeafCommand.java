package io.doubleface.cli;

import io.doubleface.driver.Transport;
import io.doubleface.kv.KvLeafServer;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code doubleface leaf …}: leaf (shard) servers. */
@Command(name = "leaf",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        header = "Runs leaf (shard) servers for a mid-tier to fan out to.",
        commandListHeading = "%nCommands:%n",
        subcommands = {LeafCommand.Kv.class, LeafRedisCommand.class, LeafMongoCommand.class, LeafGrpcCommand.class,
            LeafHdSearchCommand.class, LeafRouterCommand.class, LeafSetAlgebraCommand.class,
            LeafRecommendCommand.class, LeafSocialCommand.class})
final class LeafCommand {

    /**
     * {@code doubleface leaf kv}: a {@link KvLeafServer} hosting {@code --shards} KV shards on
     * consecutive ports, until SIGINT/SIGTERM.
     */
    @Command(name = "kv",
            mixinStandardHelpOptions = true,
            versionProvider = VersionProvider.class,
            sortOptions = false,
            showDefaultValues = true,
            header = "Runs a KV leaf: many KV shards in one process, one port each.",
            description = {
                "Starts --shards shards, shard i listening on --base-port + i, each holding the same "
                    + "deterministic records 0..N-1 (N = --records; YCSB-style, 10 fields of 100 B). Prints the "
                    + "listening line, then serves until Ctrl-C (SIGINT) or SIGTERM.",
                ""},
            footer = {"", "Example:", "  doubleface leaf kv --shards 20 --base-port 7101 --records 1000",
                "  doubleface serve ycsb --shards kv://127.0.0.1:7101-7120"})
    static final class Kv implements Callable<Integer> {

        /** Default shard count: {@value}. */
        static final int DEFAULT_SHARDS = 20;
        /** Default port of shard 0: {@value}. */
        static final int DEFAULT_BASE_PORT = 7101;
        /** Default records per shard: {@value}. */
        static final int DEFAULT_RECORDS = 1000;

        private final CliEnv env;

        @Spec
        CommandSpec spec;

        @Option(names = "--shards", paramLabel = "N", description = "Number of shards (one port each).")
        int shards = DEFAULT_SHARDS;

        @Option(names = "--base-port", paramLabel = "PORT",
                description = "Port of shard 0; shard i listens on PORT+i. 0 = any free ports.")
        int basePort = DEFAULT_BASE_PORT;

        @Option(names = "--records", paramLabel = "N", description = "Records per shard (keys 0..N-1).")
        int records = DEFAULT_RECORDS;

        @Option(names = "--host", paramLabel = "ADDRESS",
                description = "Address to listen on (0.0.0.0 for all interfaces, e.g. in a container).")
        String host = KvLeafServer.DEFAULT_HOST;

        @Option(names = "--loops", paramLabel = "N", description = "Event loops serving all shards.")
        int loops = KvLeafServer.DEFAULT_LOOPS;

        @Option(names = "--transport", paramLabel = "auto|epoll|nio",
                converter = Converters.TransportConverter.class,
                defaultValue = "auto", description = "Event loop transport: auto = epoll if available, else nio.")
        Transport transport;

        @Option(names = "--slow", paramLabel = "SHARD:FRACTION:DELAY",
                description = "Answer a FRACTION of the calls to SHARD after DELAY instead of at once, for "
                        + "tail-latency experiments; e.g. 0:0.05:50ms (5%% of shard 0's calls 50 ms late).")
        String slow;

        Kv(CliEnv env) {
            this.env = env;
        }

        @Override
        public Integer call() {
            KvLeafServer leaf;
            try {
                KvLeafServer.Builder b = KvLeafServer.builder().shards(shards).basePort(basePort).records(records)
                        .host(host).loops(loops).transport(transport);
                if (slow != null) {
                    String[] f = slow.split(":");
                    if (f.length != 3) {
                        throw new IllegalArgumentException("--slow: '" + slow + "' (expected: SHARD:FRACTION:DELAY, "
                                + "e.g. 0:0.05:50ms)");
                    }
                    try {
                        b.slowCalls(Integer.parseInt(f[0]), Double.parseDouble(f[1]), Durations.parse(f[2]));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--slow: '" + slow + "': not a number: " + e.getMessage());
                    }
                }
                leaf = b.start();
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage(), e);
            } catch (IllegalStateException | UnsatisfiedLinkError e) {
                throw new CliException(e.getMessage(), e);
            }
            env.out().println(leaf.listeningMessage());
            env.out().flush();
            env.listener().leafStarted(leaf);
            env.stop().awaitThenClose(leaf);
            return DoubleFaceCli.EXIT_OK;
        }
    }
}
