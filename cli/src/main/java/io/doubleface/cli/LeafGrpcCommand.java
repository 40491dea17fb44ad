package io.doubleface.cli;

import io.doubleface.driver.Transport;
import io.doubleface.services.ycsb.GrpcLeafServer;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface leaf grpc}: a {@link GrpcLeafServer} hosting {@code --shards} gRPC KV shards
 * ({@code doubleface.kv.v1.KvService}) on consecutive ports, until SIGINT/SIGTERM.
 */
@Command(name = "grpc",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs a gRPC KV leaf: many doubleface.kv.v1 shards in one process, one port each.",
        description = {
            "Starts --shards grpc-java servers, shard i listening on --base-port + i, all on one set of event "
                + "loops, each serving the same deterministic records 0..N-1 (N = --records; YCSB-style, 10 fields "
                + "of 100 B) with replies byte-identical to the KV leaf's. Prints the listening line, then serves "
                + "until Ctrl-C (SIGINT) or SIGTERM. See docs/grpc.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf grpc --shards 20 --base-port 7401 --records 1000",
            "  doubleface serve ycsb --shards grpc://127.0.0.1:7401-7420 --grpc-port 8081"})
final class LeafGrpcCommand implements Callable<Integer> {

    /** Default shard count: {@value}. */
    static final int DEFAULT_SHARDS = 20;
    /** Default port of shard 0: {@value}. */
    static final int DEFAULT_BASE_PORT = 7401;
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
    String host = GrpcLeafServer.DEFAULT_HOST;

    @Option(names = "--loops", paramLabel = "N", description = "Event loops serving all shards.")
    int loops = GrpcLeafServer.DEFAULT_LOOPS;

    @Option(names = "--transport", paramLabel = "auto|epoll|nio", converter = Converters.TransportConverter.class,
            defaultValue = "auto", description = "Event loop transport: auto = epoll if available, else nio.")
    Transport transport;

    LeafGrpcCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        GrpcLeafServer leaf;
        try {
            leaf = GrpcLeafServer.builder().shards(shards).basePort(basePort).records(records).host(host)
                    .loops(loops).transport(transport).start();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException | UnsatisfiedLinkError e) {
            throw new CliException(e.getMessage(), e);
        }
        env.out().println(leaf.listeningMessage());
        env.out().flush();
        env.stop().awaitThenClose(leaf);
        return DoubleFaceCli.EXIT_OK;
    }
}
