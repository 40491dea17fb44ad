package io.doubleface.services.musuite;

import java.nio.charset.StandardCharsets;

/**
 * XXH64 (Yann Collet's xxHash, 64-bit variant, spec: github.com/Cyan4973/xxHash doc/xxhash_spec.md):
 * a fast, well-distributed, non-cryptographic 64-bit hash; passes SMHasher. Router's mid-tier uses
 * it to place keys on leaf groups (μSuite's Router used SpookyHash, a hash of the same class). Written
 * out here to add no dependency; checked against the reference C library's outputs in the tests.
 * Stateless and thread-safe.
 */
public final class Xxh64 {

    private static final long P1 = 0x9E3779B185EBCA87L;
    private static final long P2 = 0xC2B2AE3D27D4EB4FL;
    private static final long P3 = 0x165667B19E3779F9L;
    private static final long P4 = 0x85EBCA77C2B2AE63L;
    private static final long P5 = 0x27D4EB2F165667C5L;

    private Xxh64() {}

    /**
     * {@return XXH64 of the UTF-8 bytes of {@code s}}
     *
     * @param s the string
     * @param seed the seed
     */
    public static long hash(String s, long seed) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return hash(b, 0, b.length, seed);
    }

    /**
     * {@return XXH64 of {@code len} bytes of {@code b} from {@code off}}
     *
     * @param b the bytes
     * @param off the first byte
     * @param len how many
     * @param seed the seed
     */
    public static long hash(byte[] b, int off, int len, long seed) {
        int p = off;
        int end = off + len;
        long h;
        if (len >= 32) {
            long v1 = seed + P1 + P2;
            long v2 = seed + P2;
            long v3 = seed;
            long v4 = seed - P1;
            do {
                v1 = round(v1, le64(b, p));
                v2 = round(v2, le64(b, p + 8));
                v3 = round(v3, le64(b, p + 16));
                v4 = round(v4, le64(b, p + 24));
                p += 32;
            } while (p <= end - 32);
            h = Long.rotateLeft(v1, 1) + Long.rotateLeft(v2, 7) + Long.rotateLeft(v3, 12) + Long.rotateLeft(v4, 18);
            h = mergeRound(h, v1);
            h = mergeRound(h, v2);
            h = mergeRound(h, v3);
            h = mergeRound(h, v4);
        } else {
            h = seed + P5;
        }
        h += len;
        while (p + 8 <= end) {
            h ^= round(0, le64(b, p));
            h = Long.rotateLeft(h, 27) * P1 + P4;
            p += 8;
        }
        if (p + 4 <= end) {
            h ^= (le32(b, p) & 0xFFFF_FFFFL) * P1;
            h = Long.rotateLeft(h, 23) * P2 + P3;
            p += 4;
        }
        while (p < end) {
            h ^= (b[p] & 0xFFL) * P5;
            h = Long.rotateLeft(h, 11) * P1;
            p++;
        }
        h ^= h >>> 33;
        h *= P2;
        h ^= h >>> 29;
        h *= P3;
        h ^= h >>> 32;
        return h;
    }

    private static long round(long acc, long input) {
        acc += input * P2;
        acc = Long.rotateLeft(acc, 31);
        return acc * P1;
    }

    private static long mergeRound(long acc, long v) {
        acc ^= round(0, v);
        return acc * P1 + P4;
    }

    private static long le64(byte[] b, int p) {
        return (le32(b, p) & 0xFFFF_FFFFL) | ((long) le32(b, p + 4) << 32);
    }

    private static int le32(byte[] b, int p) {
        return (b[p] & 0xFF) | (b[p + 1] & 0xFF) << 8 | (b[p + 2] & 0xFF) << 16 | (b[p + 3] & 0xFF) << 24;
    }
}
