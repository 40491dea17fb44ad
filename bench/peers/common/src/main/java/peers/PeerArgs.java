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

    /** The port of shard {@code i}. */
    public int shardPort(int i) {
        return redisBasePort + i;
    }

    /** The one line bench/peers.sh waits for. */
    public void ready(String detail) {
        System.out.println("ready on " + port + " (" + detail + ")");
        System.out.flush();
    }
}
