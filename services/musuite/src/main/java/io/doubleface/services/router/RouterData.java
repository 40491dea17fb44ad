package io.doubleface.services.router;

import io.doubleface.services.musuite.SplitMix64;

/**
 * Router's synthetic preloaded data: keys {@code key:0 .. key:(keys-1)}, key {@code n} holding a
 * value of {@code valueSize} letters and digits drawn from {@code (seed, n)} — the same bytes on
 * every run and JVM. Each leaf preloads the keys whose group it is a replica of, so a get of a
 * preloaded key finds it before any set. Immutable and thread-safe.
 *
 * @param seed the data's seed
 * @param keys number of preloaded keys, {@code 0 ..} {@value #MAX_KEYS}
 * @param valueSize characters per value, {@code 1 ..} {@value RouterKeys#MAX_VALUE_BYTES}
 */
public record RouterData(long seed, int keys, int valueSize) {

    /** Default number of keys: {@value}. */
    public static final int DEFAULT_KEYS = 10_000;
    /** Default value size: {@value} characters. */
    public static final int DEFAULT_VALUE_SIZE = 100;
    /** Default seed: {@value}. */
    public static final long DEFAULT_SEED = 42;
    /** Most preloaded keys: {@value}. */
    public static final int MAX_KEYS = 10_000_000;

    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final long VALUES = 1;

    /** Checks the parameters. */
    public RouterData {
        if (keys < 0 || keys > MAX_KEYS) {
            throw new IllegalArgumentException("keys: " + keys + " (expected: 0.." + MAX_KEYS + ")");
        }
        if (valueSize < 1 || valueSize > RouterKeys.MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("valueSize: " + valueSize + " (expected: 1.."
                    + RouterKeys.MAX_VALUE_BYTES + ")");
        }
    }

    /**
     * {@return the name of preloaded key {@code n}, {@code key:n}}
     *
     * @param n the key's number
     */
    public static String key(int n) {
        return "key:" + n;
    }

    /**
     * {@return the preloaded value of key {@code n}}
     *
     * @param n the key's number, {@code 0 .. keys-1}
     */
    public String value(int n) {
        SplitMix64 r = SplitMix64.of(seed, VALUES, n);
        char[] c = new char[valueSize];
        for (int i = 0; i < c.length; i++) {
            c[i] = ALPHABET.charAt(r.nextInt(ALPHABET.length()));
        }
        return new String(c);
    }

    @Override
    public String toString() {
        return keys + " preloaded keys of " + valueSize + " characters, seed " + seed;
    }
}
