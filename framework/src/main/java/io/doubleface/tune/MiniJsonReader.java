package io.doubleface.tune;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader for profiles (RFC 8259: objects, arrays, strings with escapes,
 * numbers, true/false/null), so the framework needs no JSON library. Objects become
 * {@link LinkedHashMap}s, arrays {@link ArrayList}s, numbers {@link Double}s. Errors name the line
 * and column. Bounded: at most {@value #MAX_DEPTH} levels of nesting. Not thread-safe (one
 * instance per document).
 */
final class MiniJsonReader {

    /** Deepest nesting accepted: {@value}. */
    static final int MAX_DEPTH = 64;

    private final String s;
    private int pos;
    private int depth;

    private MiniJsonReader(String s) {
        this.s = s;
    }

    /** Parses one JSON document. */
    static Object parse(String text) {
        MiniJsonReader r = new MiniJsonReader(text);
        r.ws();
        Object v = r.value();
        r.ws();
        if (r.pos != text.length()) {
            throw r.error("unexpected '" + text.charAt(r.pos) + "' after the document");
        }
        return v;
    }

    private IllegalArgumentException error(String what) {
        int line = 1;
        int col = 1;
        for (int i = 0; i < Math.min(pos, s.length()); i++) {
            if (s.charAt(i) == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return new IllegalArgumentException("JSON line " + line + ", column " + col + ": " + what);
    }

    private void ws() {
        while (pos < s.length()) {
            char c = s.charAt(pos);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                pos++;
            } else {
                break;
            }
        }
    }

    private Object value() {
        if (pos >= s.length()) {
            throw error("unexpected end of input");
        }
        char c = s.charAt(pos);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number();
                }
                throw error("unexpected '" + c + "' (expected a value)");
            }
        };
    }

    private Object literal(String word, Object v) {
        if (!s.startsWith(word, pos)) {
            throw error("unexpected token (expected " + word + ")");
        }
        pos += word.length();
        return v;
    }

    private void enter() {
        if (++depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH);
        }
    }

    private Map<String, Object> object() {
        enter();
        pos++; // {
        Map<String, Object> m = new LinkedHashMap<>();
        ws();
        if (pos < s.length() && s.charAt(pos) == '}') {
            pos++;
            depth--;
            return m;
        }
        for (;;) {
            ws();
            if (pos >= s.length() || s.charAt(pos) != '"') {
                throw error("expected a member name in quotes");
            }
            String k = string();
            ws();
            expect(':');
            ws();
            if (m.containsKey(k)) {
                throw error("duplicate member \"" + k + "\"");
            }
            m.put(k, value());
            ws();
            if (pos < s.length() && s.charAt(pos) == ',') {
                pos++;
                continue;
            }
            expect('}');
            depth--;
            return m;
        }
    }

    private List<Object> array() {
        enter();
        pos++; // [
        List<Object> l = new ArrayList<>();
        ws();
        if (pos < s.length() && s.charAt(pos) == ']') {
            pos++;
            depth--;
            return l;
        }
        for (;;) {
            ws();
            l.add(value());
            ws();
            if (pos < s.length() && s.charAt(pos) == ',') {
                pos++;
                continue;
            }
            expect(']');
            depth--;
            return l;
        }
    }

    private void expect(char c) {
        if (pos >= s.length()) {
            throw error("unexpected end of input (expected '" + c + "')");
        }
        if (s.charAt(pos) != c) {
            throw error("unexpected '" + s.charAt(pos) + "' (expected '" + c + "')");
        }
        pos++;
    }

    private String string() {
        pos++; // "
        StringBuilder b = new StringBuilder();
        for (;;) {
            if (pos >= s.length()) {
                throw error("unterminated string");
            }
            char c = s.charAt(pos++);
            if (c == '"') {
                return b.toString();
            }
            if (c < 0x20) {
                throw error("control character in a string");
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            if (pos >= s.length()) {
                throw error("unterminated escape");
            }
            char e = s.charAt(pos++);
            switch (e) {
                case '"', '\\', '/' -> b.append(e);
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'n' -> b.append('\n');
                case 'r' -> b.append('\r');
                case 't' -> b.append('\t');
                case 'u' -> {
                    if (pos + 4 > s.length()) {
                        throw error("short \\u escape");
                    }
                    try {
                        b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("bad \\u escape");
                    }
                    pos += 4;
                }
                default -> throw error("bad escape \\" + e);
            }
        }
    }

    private Double number() {
        int start = pos;
        if (s.charAt(pos) == '-') {
            pos++;
        }
        digits();
        if (pos < s.length() && s.charAt(pos) == '.') {
            pos++;
            digits();
        }
        if (pos < s.length() && (s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
            pos++;
            if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) {
                pos++;
            }
            digits();
        }
        return Double.parseDouble(s.substring(start, pos));
    }

    private void digits() {
        int start = pos;
        while (pos < s.length() && Character.isDigit(s.charAt(pos))) {
            pos++;
        }
        if (pos == start) {
            throw error("bad number (expected a digit)");
        }
    }
}
