package io.doubleface.driver.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link UriOptions}: splitting, lookups and the failure messages that name URI and option. */
class UriOptionsTest {

    @Test
    void splitsBaseAndOptionsInOrder() {
        UriOptions o = UriOptions.parse("test URI", "x://h:1-4?b=2&a=1&b=3");
        assertEquals("x://h:1-4", o.base());
        assertEquals("x://h:1-4?b=2&a=1&b=3", o.uri());
        assertEquals(List.of(Map.entry("b", "2"), Map.entry("a", "1"), Map.entry("b", "3")), o.entries());
        assertEquals(Set.of("b", "a"), o.names());
        assertEquals("3", o.get("b"), "the last of a repeated option");
        assertEquals("1", o.get("a"));
        assertNull(o.get("c"));
    }

    @Test
    void noQueryIsNoOptions() {
        UriOptions o = UriOptions.parse("test URI", "x://h:1");
        assertTrue(o.isEmpty());
        assertEquals("x://h:1", o.base());
    }

    @Test
    void emptyPiecesAreSkippedAndValuesMayHoldEquals() {
        UriOptions o = UriOptions.parse("test URI", "x://h:1?&a=1&&k=v=w&");
        assertEquals(List.of(Map.entry("a", "1"), Map.entry("k", "v=w")), o.entries());
        assertEquals("", UriOptions.parse("test URI", "x://h:1?a=").get("a"));
    }

    @Test
    void anOptionWithoutValueOrNameIsRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UriOptions.parse("test URI", "x://h:1?a=1&verbose"));
        assertEquals("test URI 'x://h:1?a=1&verbose': option 'verbose' is not NAME=VALUE", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> UriOptions.parse("test URI", "x://h:1?=1"));
        assertEquals("test URI 'x://h:1?=1': option '=1' is not NAME=VALUE", e.getMessage());
    }

    @Test
    void unknownOptionsAreNamedWithTheKnownOnes() {
        UriOptions o = UriOptions.parse("test URI", "x://h:1?cacert=a.pem&verify=none");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> o.requireKnown(Set.of("cacert"), "cacert=PEM"));
        assertEquals("test URI 'x://h:1?cacert=a.pem&verify=none': unknown option 'verify' (known: cacert=PEM)",
                e.getMessage());
        assertSame(o, o.requireKnown(Set.of("cacert", "verify"), "cacert=PEM, verify=full|none"));
    }

    @Test
    void invalidValuesAreNamedWithTheExpectedOnes() {
        UriOptions o = UriOptions.parse("test URI", "x://h:1?verify=maybe");
        assertEquals("test URI 'x://h:1?verify=maybe': verify=maybe (expected: full, ca or none)",
                o.invalid("verify", "full, ca or none").getMessage());
    }

    @Test
    void aDriverMayWordItsOwnFailures() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UriOptions.parseWith("x://h?y", d -> new IllegalArgumentException("mine: " + d)));
        assertEquals("mine: option 'y' is not NAME=VALUE", e.getMessage());
        assertThrows(NullPointerException.class, () -> UriOptions.parse("test URI", null));
    }

    enum Mode { PER_LOOP, SHARED, NATIVE }

    @Test
    void choicesAreReadByTheirLabelsAndRefusedWithEveryLabel() {
        assertEquals(Mode.PER_LOOP, UriOptions.choice("connection", "per-loop", Mode.class));
        assertEquals(Mode.NATIVE, UriOptions.choice("connection", "native", Mode.class));
        assertThrows(IllegalArgumentException.class, () -> UriOptions.choice("connection", "NATIVE", Mode.class));
        assertEquals("per-loop", UriOptions.label(Mode.PER_LOOP));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UriOptions.choice("connection", "pooled", Mode.class));
        assertEquals("connection=pooled (expected: per-loop, shared or native)", e.getMessage());
    }
}
