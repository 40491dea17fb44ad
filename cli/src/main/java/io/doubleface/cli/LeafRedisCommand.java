package io.doubleface.cli;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardException;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.doubleface.redis.RedisServers;
import java.util.List;
import java.util.concurrent.TimeUnit;
import io.doubleface.services.ycsb.RedisRecords;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface leaf redis}: {@code --shards} real {@code redis-server} processes
 * ({@link RedisServers}) on consecutive loopback ports, loaded with the dataset, until
 * SIGINT/SIGTERM.
 */
@Command(name = "redis",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs Redis shards: one real redis-server process per shard, loaded with the dataset.",
        description = {
            "Starts --shards redis-server processes ($DOUBLEFACE_REDIS_SERVER, else redis-server on PATH, else the "
                + "Redis 6.2 binary shipped in the embedded-redis jar), "
                + "shard i on --base-port + i, bound to --host, without persistence; writes records 0..N-1 "
                + "(N = --records) into each, prints the listening line, then runs until Ctrl-C (SIGINT) or SIGTERM "
                + "and stops every server. If the JVM is killed (SIGKILL), a watchdog process stops the servers "
                + "within a second.",
            ""},
        footer = {"", "Example:", "  doubleface leaf redis --shards 20 --base-port 7201 --records 1000",
            "  doubleface serve ycsb --shards redis://127.0.0.1:7201-7220",
            "  doubleface serve ycsb --shards 'redis://127.0.0.1:7201-7220?connection=shared'",
            "  doubleface leaf redis --cluster --masters 3 --replicas 1 --base-port 7201",
            "  doubleface leaf redis --cluster --masters 3 --base-port 7201 --peers-data   # bench/peers-cluster.sh's keys too",
            "  doubleface serve ycsb --shards redis-cluster://127.0.0.1:7201,127.0.0.1:7202",
            "  redis-cli -p 7201 shutdown nosave     # a master dies: its replica (port 7204) takes over",
            "", "A cluster's records are stored once, under their natural names (user:K, rec:K), where Redis places "
                + "them; serve routes every read by its key."})
final class LeafRedisCommand implements Callable<Integer> {

    /** Default shard count: {@value}. */
    static final int DEFAULT_SHARDS = 20;
    /** Default port of shard 0: {@value}. */
    static final int DEFAULT_BASE_PORT = 7201;
    /** Default records per shard: {@value}. */
    static final int DEFAULT_RECORDS = 1000;

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Option(names = "--shards", paramLabel = "N", description = "Number of shards (one redis-server each).")
    int shards = DEFAULT_SHARDS;

    @Option(names = "--base-port", paramLabel = "PORT",
            description = "Port of shard 0; shard i listens on PORT+i. 0 = any free ports.")
    int basePort = DEFAULT_BASE_PORT;

    @Option(names = "--records", paramLabel = "N", description = "Records loaded into each shard (keys 0..N-1).")
    long records = DEFAULT_RECORDS;

    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address the servers bind to.")
    String host = "127.0.0.1";

    @Option(names = "--cluster", description = "Make the servers one Redis Cluster of --masters masters with "
            + "--replicas replicas each (slots split evenly over the masters, master i on BASE-PORT+i, its replicas after "
            + "the masters; cluster-node-timeout 1 s; a dead master's slots fail, the rest serve) and print its "
            + "redis-cluster:// seeds. --shards is ignored.")
    boolean cluster;

    @Option(names = "--masters", paramLabel = "N", description = "With --cluster: number of masters.")
    int masters = 3;

    @Option(names = "--replicas", paramLabel = "N", description = "With --cluster: replicas per master.")
    int replicas = 0;

    @Option(names = "--peers-data", description = "Also write the peer benchmarks' keys (bench/peers.sh, "
            + "bench/peers-cluster.sh): s:<i> of " + PEER_SMALL + " B and l:<i> of " + PEER_LARGE + " B for i < "
            + PEER_KEYS + ", byte p of key i = 'a' + (7i + p) mod 26; into every shard, or once into a cluster where "
            + "Redis places them.")
    boolean peersData;

    /** Keys of each size the peer benchmarks read: {@value}. */
    static final int PEER_KEYS = 1000;
    /** Bytes of a peer benchmark's small value: {@value}. */
    static final int PEER_SMALL = 100;
    /** Bytes of a peer benchmark's large value: {@value}. */
    static final int PEER_LARGE = 20_000;

    LeafRedisCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        if (shards < 1) {
            throw new ParameterException(spec.commandLine(), "--shards: " + shards + " (expected: > 0)");
        }
        if (records < 1) {
            throw new ParameterException(spec.commandLine(), "--records: " + records + " (expected: > 0)");
        }
        if (!cluster && (spec.commandLine().getParseResult().hasMatchedOption("--masters")
                || spec.commandLine().getParseResult().hasMatchedOption("--replicas"))) {
            throw new ParameterException(spec.commandLine(), "--masters and --replicas need --cluster");
        }
        RedisServers servers;
        try {
            servers = cluster ? RedisServers.startCluster(masters, replicas, basePort, host)
                    : RedisServers.start(shards, basePort, host);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new CliException(e.getMessage(), e);
        }
        try {
            long total = cluster ? records : records * shards;
            RedisRecords.load(servers.uri(), records, n -> {
                env.err().printf("loaded %d/%d records%n", n, total);
                env.err().flush();
            });
        } catch (RuntimeException e) {
            servers.close();
            throw new CliException("loading the redis shards failed: " + e.getMessage(), e);
        }
        if (peersData) {
            try {
                loadPeersData(servers.uri());
            } catch (RuntimeException e) {
                servers.close();
                throw new CliException("loading the peers' keys failed: " + e.getMessage(), e);
            }
            env.err().printf("loaded the peers' keys: s:0..s:%d, l:0..l:%d%n", PEER_KEYS - 1, PEER_KEYS - 1);
            env.err().flush();
        }
        env.out().println(servers.listeningMessage());
        env.out().flush();
        env.stop().awaitThenClose(servers);
        return DoubleFaceCli.EXIT_OK;
    }

    /** {@return the value of peer key index {@code key}, {@code length} bytes (the peers' Workload.valueByte)} */
    static String peerValue(int key, int length) {
        char[] v = new char[length];
        for (int p = 0; p < length; p++) {
            v[p] = (char) ('a' + (key * 7 + p) % 26);
        }
        return new String(v);
    }

    /** Writes the peers' keys through the Redis driver: routed by key on a cluster, else into every shard. */
    private static void loadPeersData(String uri) {
        Redis<String, String> r = Redis.utf8();
        long timeout = TimeUnit.SECONDS.toNanos(10);
        try (RedisDriver d = RedisDriver.of(uri, DriverSettings.DEFAULT);
                BlockingClient<RedisCommand<?>> c = d.openBlocking()) {
            writePeerKeys(d, c, r, timeout);
        }
    }

    private static void writePeerKeys(RedisDriver d, BlockingClient<RedisCommand<?>> c, Redis<String, String> r,
            long timeout) {
        try {
            for (int i = 0; i < PEER_KEYS; i++) {
                for (RedisCommand<String> set : List.of(r.set("s:" + i, peerValue(i, PEER_SMALL)),
                        r.set("l:" + i, peerValue(i, PEER_LARGE)))) {
                    if (d.isCluster()) {
                        expectOk(c.call(d.shardFor(set), set, timeout), set);
                    } else {
                        for (int s = 0; s < d.shardCount(); s++) {
                            expectOk(c.call(s, set, timeout), set);
                        }
                    }
                }
            }
        } catch (ShardException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static void expectOk(Object reply, RedisCommand<?> set) {
        if (!"OK".equals(reply)) {
            throw new IllegalStateException(set + " answered " + reply);
        }
    }
}
