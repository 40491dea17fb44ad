package io.doubleface.api;

import java.nio.charset.StandardCharsets;

/**
 * Key → shard helpers; which one a service uses is its own choice (and must match how the data was
 * written). All are pure functions: thread-safe, allocation-free for {@code long} keys.
 *
 * <ul>
 *   <li>{@link #modulo(long, int)}: {@code floorMod(key, shards)} — simple; every key moves when the
 *       shard count changes;
 *   <li>{@link #jump(long, int)}: Jump consistent hash (Lamping and Veach, 2014) — when the shard
 *       count grows from n to n+1, only about 1/(n+1) of the keys move, all of them to the new shard;
 *   <li>{@link #hash64(CharSequence)}: a 64-bit hash of a string key (FNV-1a over its UTF-8 bytes,
 *       then the MurmurHash3 finalizer), to feed {@link #modulo} or {@link #jump};
 *   <li>{@link #redisSlot(byte[])} / {@link #redisSlot(String)}: the Redis Cluster hash slot
 *       (CRC16-XMODEM mod 16384, honouring {@code {hash tags}}), and {@link #slotOwner(int, int)}: the
 *       shard owning a slot when the slots are split evenly over the shards in order, as
 *       {@code redis-cli --cluster create} assigns them.
 * </ul>
 */
public final class ShardRouting {

    /** Hash slots of a Redis Cluster: {@value}. */
    public static final int REDIS_SLOTS = 16384;

    private static final int[] CRC16 = new int[256];

    static {
        for (int i = 0; i < 256; i++) {
            int crc = i << 8;
            for (int b = 0; b < 8; b++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
            CRC16[i] = crc & 0xFFFF;
        }
    }

    private ShardRouting() {}

    /**
     * {@code floorMod(key, shards)}.
     *
     * @param key any key, negative ones included
     * @param shards the number of shards, {@code > 0}
     * @return the shard, {@code 0 .. shards-1}
     * @throws IllegalArgumentException if {@code shards < 1}
     */
    public static int modulo(long key, int shards) {
        return (int) Math.floorMod(key, (long) checkShards(shards));
    }

    /**
     * Jump consistent hash of {@code key} onto {@code shards} buckets.
     *
     * @param key any key, negative ones included; hash string keys with {@link #hash64} first
     * @param shards the number of buckets, {@code > 0}
     * @return the bucket, {@code 0 .. shards-1}
     * @throws IllegalArgumentException if {@code shards < 1}
     */
    public static int jump(long key, int shards) {
        checkShards(shards);
        long b = -1;
        long j = 0;
        while (j < shards) {
            b = j;
            key = key * 2862933555777941757L + 1;
            j = (long) ((b + 1) * ((double) (1L << 31) / (double) ((key >>> 33) + 1)));
        }
        return (int) b;
    }

    /**
     * A well-mixed 64-bit hash of {@code key}'s UTF-8 bytes.
     *
     * @param key the key, not {@code null}
     * @return the hash, any {@code long} (negative ones included)
     */
    public static long hash64(CharSequence key) {
        byte[] b = key.toString().getBytes(StandardCharsets.UTF_8);
        long h = 0xcbf29ce484222325L;
        for (byte x : b) {
            h ^= x & 0xFF;
            h *= 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /**
     * The Redis Cluster hash slot of {@code key} (UTF-8), as {@link #redisSlot(byte[])}.
     *
     * @param key the key, not {@code null}
     * @return the slot, {@code 0 ..} {@value #REDIS_SLOTS}{@code -1}
     */
    public static int redisSlot(String key) {
        return redisSlot(key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The Redis Cluster hash slot of {@code key}: CRC16 of the key, or of the part between the first
     * {@code {} and the next {@code }} if that part is non-empty, mod {@value #REDIS_SLOTS}.
     *
     * @param key the key's bytes, not {@code null}; read, not modified
     * @return the slot, {@code 0 ..} {@value #REDIS_SLOTS}{@code -1}
     */
    public static int redisSlot(byte[] key) {
        return redisSlot(key, 0, key.length);
    }

    /**
     * The Redis Cluster hash slot of the key in {@code key[offset .. offset+length-1]}, as
     * {@link #redisSlot(byte[])}.
     *
     * @param key holds the key's bytes, not {@code null}; read, not modified
     * @param offset where the key starts in {@code key}
     * @param length the key's length in bytes
     * @return the slot, {@code 0 ..} {@value #REDIS_SLOTS}{@code -1}
     * @throws IndexOutOfBoundsException if the range is not within {@code key}
     */
    public static int redisSlot(byte[] key, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, key.length);
        int from = offset;
        int end = offset + length;
        int to = end;
        for (int i = offset; i < end; i++) {
            if (key[i] == '{') {
                for (int k = i + 1; k < end; k++) {
                    if (key[k] == '}') {
                        if (k > i + 1) {
                            from = i + 1;
                            to = k;
                        }
                        break;
                    }
                }
                break;
            }
        }
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc = ((crc << 8) ^ CRC16[((crc >>> 8) ^ key[i]) & 0xFF]) & 0xFFFF;
        }
        return crc & (REDIS_SLOTS - 1);
    }

    /**
     * The shard owning {@code slot} when the {@value #REDIS_SLOTS} slots are split over
     * {@code shards} masters in order exactly as {@code redis-cli --cluster create} splits them
     * (three masters: 0–5460, 5461–10922, 10923–16383).
     *
     * @param slot the hash slot, {@code 0 ..} {@value #REDIS_SLOTS}{@code -1} (see {@link #redisSlot(byte[])})
     * @param shards the number of masters, {@code > 0}
     * @return the owning shard, {@code 0 .. shards-1}
     * @throws IllegalArgumentException if {@code slot} or {@code shards} is out of range
     */
    public static int slotOwner(int slot, int shards) {
        if (slot < 0 || slot >= REDIS_SLOTS) {
            throw new IllegalArgumentException("slot: " + slot + " (expected: 0.." + (REDIS_SLOTS - 1) + ")");
        }
        checkShards(shards);
        double perShard = (double) REDIS_SLOTS / shards;
        double cursor = 0;
        for (int i = 0; i < shards; i++) {
            long last = Math.round(cursor + perShard - 1);
            if (last > REDIS_SLOTS - 1 || i == shards - 1) {
                last = REDIS_SLOTS - 1;
            }
            if (slot <= last) {
                return i;
            }
            cursor += perShard;
        }
        return shards - 1;
    }

    private static int checkShards(int shards) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: > 0)");
        }
        return shards;
    }
}
