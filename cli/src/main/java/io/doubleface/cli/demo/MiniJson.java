package io.doubleface.cli.demo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON reader for the admin documents: objects become {@link LinkedHashMap}s, arrays
 * {@link ArrayList}s, numbers {@link Long} or {@link Double}, plus strings, booleans and null.
 * Strict enough to fail on a malformed document (which is itself a finding).
 */
public final class MiniJson {

    private final String s;
    private int i;

    private MiniJson(String s) {
        this.s = s;
    }

    /** Parses a JSON object document. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(String json) {
        MiniJson p = new MiniJson(json);
        Object v = p.value();
        p.ws();
        if (p.i != json.length()) {
            throw p.error("trailing characters");
        }
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("not a JSON object: " + abbreviate(json));
        }
        return (Map<String, Object>) v;
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

    private Object value() {
        ws();
        if (i >= s.length()) {
            throw error("unexpected end");
        }
        char c = s.charAt(i);
        switch (c) {
            case '{' -> {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (peek('}')) {
                    i++;
                    return m;
                }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    if (m.put(k, value()) != null) {
                        throw error("duplicate key " + k);
                    }
                    ws();
                    if (peek(',')) {
                        i++;
                    } else {
                        expect('}');
                        return m;
                    }
                }
            }
            case '[' -> {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (peek(']')) {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    ws();
                    if (peek(',')) {
                        i++;
                    } else {
                        expect(']');
                        return l;
                    }
                }
            }
            case '"' -> {
                return string();
            }
            default -> {
                if (s.startsWith("true", i)) {
                    i += 4;
                    return Boolean.TRUE;
                }
                if (s.startsWith("false", i)) {
                    i += 5;
                    return Boolean.FALSE;
                }
                if (s.startsWith("null", i)) {
                    i += 4;
                    return null;
                }
                return number();
            }
        }
    }

    private Number number() {
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        String n = s.substring(start, i);
        if (n.isEmpty()) {
            throw error("unexpected character");
        }
        try {
            if (n.indexOf('.') < 0 && n.indexOf('e') < 0 && n.indexOf('E') < 0) {
                return Long.parseLong(n);
            }
            return Double.parseDouble(n);
        } catch (NumberFormatException e) {
            throw error("bad number " + n);
        }
    }

    private String string() {
        expect('"');
        StringBuilder b = new StringBuilder();
        while (true) {
            if (i >= s.length()) {
                throw error("unterminated string");
            }
            char c = s.charAt(i++);
            if (c == '"') {
                return b.toString();
            }
            if (c == '\\') {
                char e = s.charAt(i++);
                switch (e) {
                    case '"', '\\', '/' -> b.append(e);
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> throw error("bad escape \\" + e);
                }
            } else if (c < 0x20) {
                throw error("control character in string");
            } else {
                b.append(c);
            }
        }
    }

    private boolean peek(char c) {
        return i < s.length() && s.charAt(i) == c;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw error("expected '" + c + "'");
        }
        i++;
    }

    private void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("malformed JSON at " + i + ": " + what + " in " + abbreviate(s));
    }

    private static String abbreviate(String s) {
        return s.length() <= 300 ? s : s.substring(0, 300) + "…";
    }
}
