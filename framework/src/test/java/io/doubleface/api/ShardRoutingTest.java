package io.doubleface.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ShardRoutingTest {

    @Test
    void moduloIsFloorMod() {
        assertEquals(2, ShardRouting.modulo(7, 5));
        assertEquals(3, ShardRouting.modulo(-7, 5));
        assertThrows(IllegalArgumentException.class, () -> ShardRouting.modulo(1, 0));
    }

    @Test
    void jumpSpreadsKeysEvenlyAndMovesOnlyToTheNewShardWhenOneIsAdded() {
        int n = 10;
        int[] counts = new int[n + 1];
        int moved = 0;
        for (long k = 0; k < 100_000; k++) {
            long key = ShardRouting.hash64("user:" + k);
            int a = ShardRouting.jump(key, n);
            int b = ShardRouting.jump(key, n + 1);
            counts[a]++;
            if (a != b) {
                assertEquals(n, b, "a key only moves to the new shard");
                moved++;
            }
        }
        for (int s = 0; s < n; s++) {
            assertTrue(counts[s] > 9_000 && counts[s] < 11_000, "shard " + s + ": " + counts[s]);
        }
        // about 1/11 of the keys move
        assertTrue(moved > 8_000 && moved < 10_200, "moved " + moved);
        assertEquals(0, ShardRouting.jump(12345, 1));
    }

    @Test
    void redisSlotMatchesRedis() {
        // CRC16-XMODEM check value and slots as `CLUSTER KEYSLOT` gives them
        assertEquals(0x31C3 % 16384, ShardRouting.redisSlot("123456789"));
        assertEquals(12182, ShardRouting.redisSlot("foo"));
        assertEquals(5061, ShardRouting.redisSlot("bar"));
        assertEquals(ShardRouting.redisSlot("{user1000}.following"), ShardRouting.redisSlot("{user1000}.followers"));
        assertEquals(ShardRouting.redisSlot("user1000"), ShardRouting.redisSlot("{user1000}.following"));
        // an empty tag is no tag: the whole key is hashed (as a tag, both would hash "")
        assertNotEquals(ShardRouting.redisSlot("{}a"), ShardRouting.redisSlot("{}b"));
        // redis-cli --cluster create with three masters: 0-5460, 5461-10922, 10923-16383
        assertEquals(0, ShardRouting.slotOwner(0, 3));
        assertEquals(0, ShardRouting.slotOwner(5460, 3));
        assertEquals(1, ShardRouting.slotOwner(5461, 3));
        assertEquals(1, ShardRouting.slotOwner(10922, 3));
        assertEquals(2, ShardRouting.slotOwner(10923, 3));
        assertEquals(2, ShardRouting.slotOwner(16383, 3));
        assertEquals(0, ShardRouting.slotOwner(16383, 1));
    }
}
