package peers;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The workload of bench/peers.sh, identical in every system: {@code GET /?fanout=K&size=small|large[&key=N]}
 * sends K Redis {@code GET}s of one key to shards 0..K-1 and answers the K values concatenated in
 * shard order. The key index is random in {@code 0..KEYS-1} (ThreadLocalRandom) unless {@code key=N}
 * fixes it (the script's correctness check). Keys {@code s:<i>} hold {@value #SMALL} bytes and
 * {@code l:<i>} hold {@value #LARGE} bytes: byte {@code p} of key {@code i} is {@link #valueByte}.
 *
 * <p>The cluster workload (bench/peers-cluster.sh, {@link PeerArgs#cluster()}): the same request reads the
 * K distinct keys {@link Query#keyName(int) keyName(0..K-1)} from one Redis Cluster, each where the cluster
 * keeps it, and answers their values concatenated in that order.
 */
public final class Workload {

    public static final int KEYS = 1000;
    public static final int SMALL = 100;
    public static final int LARGE = 20_000;
    public static final String CONTENT_TYPE = "application/octet-stream";
    /** Most keys one request of the cluster workload reads: {@value}. */
    public static final int MAX_CLUSTER_FANOUT = 20;

    /** {@return the largest fanout: the shard count, or {@value #MAX_CLUSTER_FANOUT} keys in the cluster workload} */
    public static int maxFanout(int shards) {
        return PeerArgs.cluster() ? MAX_CLUSTER_FANOUT : shards;
    }

    private Workload() {}

    /** A parsed request: how many shards, which key. */
    public record Query(int fanout, boolean large, int key) {
        /**
         * {@return the key of call {@code j} in the cluster workload: key index {@code (key + j) % KEYS}, so a
         * request reads K distinct keys, placed by the cluster}
         */
        public String keyName(int j) {
            return (large ? "l:" : "s:") + ((key + j) % KEYS);
        }

        /** {@return the Redis key, {@code s:<i>} or {@code l:<i>}} */
        public String keyName() {
            return (large ? "l:" : "s:") + key;
        }

        public byte[] keyBytes() {
            return keyName().getBytes(StandardCharsets.US_ASCII);
        }

        /** {@return the length of one value} */
        public int valueLength() {
            return large ? LARGE : SMALL;
        }
    }

    /** Byte {@code pos} of the value of key index {@code key} (both sizes; the loader writes the same). */
    public static byte valueByte(int key, int pos) {
        return (byte) ('a' + (key * 7 + pos) % 26);
    }

    /**
     * Parses the query string ({@code null} or empty: fanout 1, small, random key).
     *
     * @throws IllegalArgumentException on a malformed or out-of-range parameter (answer 400)
     */
    public static Query parse(String rawQuery, int shards) {
        int fanout = 1;
        boolean large = false;
        int key = -1;
        if (rawQuery != null && !rawQuery.isEmpty()) {
            int i = 0;
            int n = rawQuery.length();
            while (i < n) {
                int amp = rawQuery.indexOf('&', i);
                int end = amp < 0 ? n : amp;
                int eq = rawQuery.indexOf('=', i);
                if (eq > i && eq < end) {
                    String name = rawQuery.substring(i, eq);
                    String value = rawQuery.substring(eq + 1, end);
                    switch (name) {
                        case "fanout" -> fanout = number(name, value, 1, shards);
                        case "key" -> key = number(name, value, 0, KEYS - 1);
                        case "size" -> large = switch (value) {
                            case "small" -> false;
                            case "large" -> true;
                            default -> throw new IllegalArgumentException("size: expected small or large");
                        };
                        default -> { }
                    }
                }
                i = end + 1;
            }
        }
        return query(fanout, large, key);
    }

    /** {@return the query; a negative {@code key} picks one at random} */
    public static Query query(int fanout, boolean large, int key) {
        return new Query(fanout, large, key >= 0 ? key : ThreadLocalRandom.current().nextInt(KEYS));
    }

    /** Splits a request target into its query string ({@code null} if none); the path must be {@code /}. */
    public static String queryOf(String uri) {
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        if (!path.equals("/")) {
            throw new IllegalArgumentException("no route " + path);
        }
        return q < 0 ? null : uri.substring(q + 1);
    }

    private static int number(String name, String value, int min, int max) {
        int v;
        try {
            v = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": not a number");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + ": expected " + min + ".." + max);
        }
        return v;
    }
}
