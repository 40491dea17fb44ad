package io.doubleface.services.musuite;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class Xxh64Test {

    /** Expected values from the reference C library (libxxhash 0.8, XXH64). */
    @Test
    void matchesTheReferenceImplementation() {
        assertEquals(0xef46db3751d8e999L, Xxh64.hash("", 0));
        assertEquals(0x44bc2cf5ad770999L, Xxh64.hash("abc", 0));
        assertEquals(0xfbcea83c8a378bf1L, Xxh64.hash("Nobody inspects the spammish repetition", 0));
        assertEquals(0x92311303c610c195L, Xxh64.hash("user:12345", 0));
        assertEquals(0xcea2135baeaeb38eL, Xxh64.hash("user:12345", 42));
        assertEquals(0x2ab709d316ecee0eL, Xxh64.hash("ключ-κλειδί-🔑", 7));
        byte[] b = new byte[100];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) i;
        }
        assertEquals(0x6ac1e58032166597L, Xxh64.hash(b, 0, b.length, 0));
        byte[] shifted = new byte[101];
        System.arraycopy(b, 0, shifted, 1, 100);
        assertEquals(0x6ac1e58032166597L, Xxh64.hash(shifted, 1, 100, 0));
        assertEquals(Xxh64.hash("abc", 0), Xxh64.hash("abc".getBytes(StandardCharsets.UTF_8), 0, 3, 0));
    }
}
