package peers;

import java.util.Arrays;

/**
 * The command line every peer takes: {@code PORT IO_THREADS REDIS_BASE_PORT SHARDS [EXTRA...]}; shard
 * {@code i} is {@code redis-server} on {@code 127.0.0.1:(REDIS_BASE_PORT + i)}.
 */
public record PeerArgs(int port, int ioThreads, int redisBasePort, int shards, String[] extra) {

    /** Parses {@code args}, or prints the usage line and exits with status 2. */
    public static PeerArgs parse(String system, String[] args, String extraUsage) {
        try {
            if (args.length < 4) {
                throw new IllegalArgumentException("expected 4 arguments");
            }
            PeerArgs a = new PeerArgs(Integer.parseInt(args[0]), Integer.parseInt(args[1]), Integer.parseInt(args[2]),
                    Integer.parseInt(args[3]), Arrays.copyOfRange(args, 4, args.length));
            if (a.ioThreads < 1 || a.shards < 1 || a.shards > 1000) {
                throw new IllegalArgumentException("IO_THREADS and SHARDS must be >= 1");
            }
            return a;
        } catch (IllegalArgumentException e) {
            System.err.println(system + ": " + e.getMessage());
            System.err.println("usage: java -jar peer-" + system + ".jar PORT IO_THREADS REDIS_BASE_PORT SHARDS" + extraUsage);
            System.exit(2);
            return null;
        }
    }

    /**
     * Whether the peer serves the cluster workload ({@code PEER_CLUSTER=1}, bench/peers-cluster.sh): the
     * shards are the masters of one Redis Cluster ({@code REDIS_BASE_PORT ..}), each request reads K
     * distinct keys where the cluster keeps them ({@link Workload.Query#keyName(int)}).
     */
    public static boolean cluster() {
        return CLUSTER;
    }

    /** Read once: every peer asks per request ({@link Workload#maxFanout}), and a lookup in the environment is not free. */
    private static final boolean CLUSTER = "1".equals(System.getenv("PEER_CLUSTER"));

    /** The port of shard {@code i}. */
    public int shardPort(int i) {
        return redisBasePort + i;
    }

    /**
     * {@return the version of a library in this (shaded) jar, from its {@code pom.properties}; "?" if absent}
     */
    public static String version(String groupId, String artifactId) {
        String path = "/META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        try (java.io.InputStream in = PeerArgs.class.getResourceAsStream(path)) {
            java.util.Properties p = new java.util.Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "?");
        } catch (java.io.IOException e) {
            return "?";
        }
    }

    /** {@return a version pinned in bench/peers/pom.xml, e.g. {@code reactor-netty.version}} */
    public static String pinned(String property) {
        try (java.io.InputStream in = PeerArgs.class.getResourceAsStream("/peers/versions.properties")) {
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty(property, "?");
        } catch (java.io.IOException | NullPointerException e) {
            return "?";
        }
    }

    /** The one line bench/peers.sh waits for. */
    public void ready(String detail) {
        System.out.println("ready on " + port + " (" + detail + ")");
        System.out.flush();
    }
}
