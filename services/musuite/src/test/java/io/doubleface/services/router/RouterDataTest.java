package io.doubleface.services.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RouterDataTest {

    @Test
    void theSameSeedGivesTheSameValuesAndAnotherSeedOthers() {
        RouterData a = new RouterData(42, 100, 50);
        assertEquals(a.value(17), new RouterData(42, 100, 50).value(17));
        assertNotEquals(a.value(17), new RouterData(43, 100, 50).value(17));
        assertNotEquals(a.value(17), a.value(18));
        assertEquals(50, a.value(3).length());
        assertTrue(a.value(3).matches("[A-Za-z0-9]+"));
    }

    @Test
    void keysSpreadEvenlyOverGroupsAndEachReplicaHoldsItsGroup() {
        RouterKeys layout = new RouterKeys(12, 3);
        RouterData data = new RouterData(1, 10_000, 4);
        int[] perGroup = new int[layout.groups()];
        for (int n = 0; n < data.keys(); n++) {
            perGroup[layout.group(RouterData.key(n))]++;
        }
        for (int g = 0; g < perGroup.length; g++) {
            assertTrue(Math.abs(perGroup[g] - 2500) < 250, "group " + g + ": " + perGroup[g]);
            for (int r = 0; r < 3; r++) {
                assertEquals(perGroup[g], new RouterLeaf(data, layout, layout.leaf(g, r)).size());
            }
        }
    }

    @Test
    void layoutAndLimitsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new RouterKeys(10, 3));
        assertThrows(IllegalArgumentException.class, () -> new RouterKeys(2, 3));
        assertThrows(IllegalArgumentException.class, () -> new RouterKeys(3, 0));
        assertThrows(IllegalArgumentException.class, () -> new RouterData(1, -1, 10));
        assertThrows(IllegalArgumentException.class, () -> new RouterData(1, 1, 0));
        assertEquals(4, new RouterKeys(12, 3).groups());
        assertEquals(7, new RouterKeys(12, 3).leaf(2, 1));
    }
}
