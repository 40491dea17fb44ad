package io.doubleface.experiments;

import io.doubleface.internal.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Typed access to the admin documents and result files, read with the project's JSON reader
 * ({@link Json#parse}, on Gson): objects become {@link LinkedHashMap}s, arrays {@link ArrayList}s,
 * integral numbers {@link Long}, other numbers {@link Double}, plus strings, booleans and null.
 * Strict: a malformed document (itself a finding) fails with where.
 */
public final class MiniJson {

    private MiniJson() {}

    /** Parses a JSON object document. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(String json) {
        Object v = longs(Json.parse(json));
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("not a JSON object: " + abbreviate(json));
        }
        return (Map<String, Object>) v;
    }

    /** The tree with integral doubles as longs, as counters are. */
    private static Object longs(Object v) {
        if (v instanceof Double d && d == Math.rint(d) && Math.abs(d) < 0x1p53) {
            return d.longValue();
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put((String) k, longs(x)));
            return out;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            l.forEach(x -> out.add(longs(x)));
            return out;
        }
        return v;
    }

    /** A typed view of one value. */
    public record Value(Object v) {
        public long asLong() {
            if (v instanceof Number n) {
                return n.longValue();
            }
            throw new AssertionError("not a number: " + v);
        }

        public double asDouble() {
            if (v instanceof Number n) {
                return n.doubleValue();
            }
            throw new AssertionError("not a number: " + v);
        }

        public String asString() {
            if (v instanceof String str) {
                return str;
            }
            throw new AssertionError("not a string: " + v);
        }

        @SuppressWarnings("unchecked")
        public List<Object> asList() {
            if (v instanceof List<?> l) {
                return (List<Object>) l;
            }
            throw new AssertionError("not an array: " + v);
        }

        @SuppressWarnings("unchecked")
        public Map<String, Object> asMap() {
            if (v instanceof Map<?, ?> m) {
                return (Map<String, Object>) m;
            }
            throw new AssertionError("not an object: " + v);
        }
    }

    /** The member at {@code keys} (nested objects), failing with the path if absent. */
    @SuppressWarnings("unchecked")
    public static Value path(Map<String, Object> root, String... keys) {
        Object cur = root;
        StringBuilder where = new StringBuilder();
        for (String k : keys) {
            where.append('.').append(k);
            if (!(cur instanceof Map) || !((Map<String, Object>) cur).containsKey(k)) {
                throw new AssertionError("no member " + where + " in " + abbreviate(String.valueOf(root)));
            }
            cur = ((Map<String, Object>) cur).get(k);
        }
        return new Value(cur);
    }

    /** The objects of the array at {@code keys}. */
    @SuppressWarnings("unchecked")
    public static List<Map<String, Object>> objects(Map<String, Object> root, String... keys) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object o : path(root, keys).asList()) {
            out.add((Map<String, Object>) o);
        }
        return out;
    }

    private static String abbreviate(String s) {
        return s.length() <= 300 ? s : s.substring(0, 300) + "…";
    }
}
