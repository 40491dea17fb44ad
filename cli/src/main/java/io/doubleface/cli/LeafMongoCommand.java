package io.doubleface.cli;

import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.services.ycsb.MongoRecords;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface leaf mongo}: a {@link MongoLeafServer} — {@code --shards} embedded
 * mongo-java-server shards (memory backend, real MongoDB wire protocol) on consecutive ports,
 * loaded with the dataset, until SIGINT/SIGTERM.
 */
@Command(name = "mongo",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs embedded MongoDB shards (mongo-java-server, memory backend) in one process, one port each.",
        description = {
            "Starts --shards mongo-java-server instances, shard i listening on --base-port + i, each loaded with "
                + "records 0..N-1 (N = --records) in ycsb.usertable through the MongoDB driver. They speak the real "
                + "MongoDB wire protocol; point a mid-tier at them with --shards mongodb://HOST:FIRST-LAST. Prints the "
                + "listening line once loaded, then serves until Ctrl-C (SIGINT) or SIGTERM. Two threads per shard.",
            ""},
        footer = {"", "Example:", "  doubleface leaf mongo --shards 20 --base-port 7301 --records 1000",
            "  doubleface serve ycsb --shards mongodb://127.0.0.1:7301-7320",
            "A real mongod is used through mongodb:// URIs instead (load it with: doubleface load-data mongodb://...)."})
final class LeafMongoCommand implements Callable<Integer> {

    /** Default shard count: {@value}. */
    static final int DEFAULT_SHARDS = 20;
    /** Default port of shard 0: {@value}. */
    static final int DEFAULT_BASE_PORT = 7301;
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
    long records = DEFAULT_RECORDS;

    @Option(names = "--host", paramLabel = "ADDRESS",
            description = "Address to listen on (0.0.0.0 for all interfaces, e.g. in a container).")
    String host = MongoLeafServer.DEFAULT_HOST;

    LeafMongoCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        if (records < 1 || records > 10_000_000) {
            throw new ParameterException(spec.commandLine(), "--records: " + records + " (expected: 1..10000000)");
        }
        MongoLeafServer leaf;
        try {
            leaf = MongoLeafServer.builder().shards(shards).basePort(basePort).host(host).start();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new CliException(e.getMessage(), e);
        }
        try {
            MongoRecords.load(leaf.uri(), records, n -> { });
        } catch (RuntimeException e) {
            leaf.close();
            throw new CliException("leaf mongo: loading the records failed: " + e.getMessage(), e);
        }
        env.out().println(leaf.listeningMessage().replaceFirst("\\)$", ", " + records + " records)"));
        env.out().flush();
        env.listener().mongoLeafStarted(leaf);
        env.stop().awaitThenClose(leaf);
        return DoubleFaceCli.EXIT_OK;
    }
}
