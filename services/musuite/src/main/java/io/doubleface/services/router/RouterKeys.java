package io.doubleface.services.router;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.ShardRouting;
import io.doubleface.services.musuite.Xxh64;
import java.nio.charset.StandardCharsets;

/**
 * Where Router keys live: {@code leaves = groups × replicas}; a key's group is
 * {@code jump(XXH64(key, seed 0), groups)} (XXH64: {@link Xxh64}; jump consistent hash:
 * {@link ShardRouting#jump}, so adding groups moves only the keys the new groups take), and group
 * {@code g}'s replicas are leaves {@code g*replicas .. g*replicas + replicas-1}. Also the key and
 * value limits. Immutable and thread-safe.
 *
 * @param leaves the number of leaves, a multiple of {@code replicas}
 * @param replicas replicas per group, {@code 1 ..} {@value #MAX_REPLICAS}
 */
public record RouterKeys(int leaves, int replicas) {

    /** Default replicas per group: {@value}. */
    public static final int DEFAULT_REPLICAS = 3;
    /** Most replicas per group: {@value}. */
    public static final int MAX_REPLICAS = 16;
    /** Longest key: {@value} UTF-8 bytes (memcached's limit). */
    public static final int MAX_KEY_BYTES = 250;
    /** Longest value: {@value} UTF-8 bytes (it travels in a URL query over HTTP). */
    public static final int MAX_VALUE_BYTES = 2048;

    /** Checks the layout. */
    public RouterKeys {
        if (replicas < 1 || replicas > MAX_REPLICAS) {
            throw new IllegalArgumentException("replicas: " + replicas + " (expected: 1.." + MAX_REPLICAS + ")");
        }
        if (leaves < replicas || leaves % replicas != 0) {
            throw new IllegalArgumentException("leaves: " + leaves + " (expected: a positive multiple of the "
                    + replicas + " replicas per group)");
        }
    }

    /** {@return the number of replica groups} */
    public int groups() {
        return leaves / replicas;
    }

    /**
     * {@return the group of {@code key}}
     *
     * @param key the key
     */
    public int group(String key) {
        return ShardRouting.jump(Xxh64.hash(key, 0), groups());
    }

    /**
     * {@return the leaf of replica {@code replica} of group {@code group}}
     *
     * @param group the group
     * @param replica the replica, {@code 0 .. replicas-1}
     */
    public int leaf(int group, int replica) {
        return group * replicas + replica;
    }

    /**
     * {@return {@code key} if it is 1 .. {@value #MAX_KEY_BYTES} UTF-8 bytes}
     *
     * @param key the key, or {@code null} if absent
     * @throws BadRequestException otherwise
     */
    public static String checkKey(String key) throws BadRequestException {
        if (key == null || key.isEmpty()) {
            throw new BadRequestException("key: missing (expected: 1.." + MAX_KEY_BYTES + " UTF-8 bytes)");
        }
        int n = key.getBytes(StandardCharsets.UTF_8).length;
        if (n > MAX_KEY_BYTES) {
            throw new BadRequestException("key: " + n + " bytes (expected: 1.." + MAX_KEY_BYTES + " UTF-8 bytes)");
        }
        return key;
    }

    /**
     * {@return {@code value} if it is at most {@value #MAX_VALUE_BYTES} UTF-8 bytes}
     *
     * @param value the value, or {@code null} if absent
     * @throws BadRequestException otherwise
     */
    public static String checkValue(String value) throws BadRequestException {
        if (value == null) {
            throw new BadRequestException("value: missing (expected: 0.." + MAX_VALUE_BYTES + " UTF-8 bytes)");
        }
        int n = value.getBytes(StandardCharsets.UTF_8).length;
        if (n > MAX_VALUE_BYTES) {
            throw new BadRequestException("value: " + n + " bytes (expected: 0.." + MAX_VALUE_BYTES + " UTF-8 bytes)");
        }
        return value;
    }
}
