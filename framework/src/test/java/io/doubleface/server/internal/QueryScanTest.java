package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link QueryScan} answers as {@link QueryStringDecoder#parameters()} does, on every plain query. */
class QueryScanTest {

    @Test
    void examples() {
        assertEquals("5", QueryScan.find("fanout=5&size=small&key=42", "fanout"));
        assertEquals("42", QueryScan.find("fanout=5&size=small&key=42", "key"));
        assertEquals(null, QueryScan.find("fanout=5&size=small", "key"));
        assertEquals("", QueryScan.find("a&b=", "a"));
        assertEquals("", QueryScan.find("a&b=", "b"));
        assertEquals("x=y", QueryScan.find("a=x=y", "a"));
        assertSame(QueryScan.REPEATED, QueryScan.find("a=1&b=2&a=3", "a"));
        assertEquals(2, QueryScan.count("a=1&b=2&a=3", "a"));
        assertEquals(null, QueryScan.find("", "a"));
        assertEquals(null, QueryScan.find("ab=1", "a"));
        assertTrue(QueryScan.plain("a=1&b=2"));
        assertFalse(QueryScan.plain("a=%20"));
        assertFalse(QueryScan.plain("a=b+c"));
        assertFalse(QueryScan.plain("a=1;b=2"));
    }

    @Test
    void agreesWithNettysDecoderOnRandomPlainQueries() {
        SplittableRandom r = new SplittableRandom(42);
        String alphabet = "ab=&x1";
        int checked = 0;
        for (int n = 0; n < 200_000; n++) {
            StringBuilder q = new StringBuilder();
            for (int i = r.nextInt(12); i > 0; i--) {
                q.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            String raw = q.toString();
            if (!QueryScan.plain(raw)) {
                continue;
            }
            for (String name : new String[] {"a", "b", "ab", "x1", "a1"}) {
                List<String> expected = new QueryStringDecoder("/p?" + raw).parameters().get(name);
                String got = QueryScan.find(raw, name);
                long range = QueryScan.range(raw, name);
                if (got == null) {
                    assertEquals(QueryScan.ABSENT, range, raw + " / " + name);
                } else if (got == QueryScan.REPEATED) {
                    assertEquals(QueryScan.REPEATED_RANGE, range, raw + " / " + name);
                } else {
                    assertEquals(got, raw.substring((int) (range >>> 32), (int) range), raw + " / " + name);
                }
                if (expected == null) {
                    assertEquals(null, got, raw + " / " + name);
                } else if (expected.size() > 1) {
                    assertSame(QueryScan.REPEATED, got, raw + " / " + name);
                    assertEquals(expected.size(), QueryScan.count(raw, name), raw + " / " + name);
                } else {
                    assertEquals(expected.get(0), got, raw + " / " + name);
                }
                checked++;
            }
        }
        assertTrue(checked > 500_000, "checked " + checked);
    }

    /** The handler's path and plain query of a whole target, against the decoder's path and parameters. */
    @Test
    void targetsSplitAsNettysDecoderSplitsThem() {
        SplittableRandom r = new SplittableRandom(7);
        String alphabet = "/ab=&?#%2;+";
        int plain = 0;
        for (int n = 0; n < 200_000; n++) {
            StringBuilder t = new StringBuilder("/");
            for (int i = r.nextInt(14); i > 0; i--) {
                t.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            String uri = t.toString();
            QueryStringDecoder netty = new QueryStringDecoder(uri);
            int end = QueryScan.pathEnd(uri);
            if (uri.indexOf('%', 0, end) < 0) {
                assertEquals(netty.path(), uri.substring(0, end), uri);
            }
            String raw = QueryScan.plainQuery(uri, end);
            if (raw == null) {
                continue;
            }
            plain++;
            java.util.Map<String, List<String>> params;
            try {
                params = netty.parameters();
            } catch (IllegalArgumentException e) {
                throw new AssertionError(uri + ": plain, but Netty's decoder refuses it", e);
            }
            for (String name : new String[] {"a", "b", "ab", "2", "/"}) {
                List<String> expected = params.get(name);
                String got = QueryScan.find(raw, name);
                if (expected == null) {
                    assertEquals(null, got, uri + " / " + name);
                } else if (expected.size() > 1) {
                    assertSame(QueryScan.REPEATED, got, uri + " / " + name);
                } else {
                    assertEquals(expected.get(0), got, uri + " / " + name);
                }
            }
        }
        assertTrue(plain > 20_000, "plain targets: " + plain);
        assertEquals(null, QueryScan.plainQuery("/p#a=1", 2), "a fragment is not a query");
        assertEquals(null, QueryScan.plainQuery("/p?a=1#x", 2), "a query with a fragment is the decoder's");
        assertEquals("a=1", QueryScan.plainQuery("/p?a=1", 2));
    }
}
