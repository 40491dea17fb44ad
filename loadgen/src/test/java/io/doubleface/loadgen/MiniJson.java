package io.doubleface.loadgen;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Just enough JSON for the tests: objects, arrays (as lists), strings without escapes beyond \" and \\, numbers, true/false/null. */
final class MiniJson {

    private final String s;
    private int i;

    private MiniJson(String s) {
        this.s = s;
    }

    static Map<String, Object> parseObject(String text) {
        MiniJson p = new MiniJson(text.strip());
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) p.value();
        if (p.i != p.s.length()) {
            throw new IllegalArgumentException("trailing text at " + p.i + ": " + text);
        }
        return m;
    }

    private Object value() {
        char c = s.charAt(i);
        if (c == '{') {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            if (s.charAt(i) == '}') {
                i++;
                return m;
            }
            while (true) {
                String k = (String) value();
                expect(':');
                m.put(k, value());
                if (s.charAt(i) == ',') {
                    i++;
                    continue;
                }
                expect('}');
                return m;
            }
        }
        if (c == '[') {
            List<Object> l = new ArrayList<>();
            i++;
            if (s.charAt(i) == ']') {
                i++;
                return l;
            }
            while (true) {
                l.add(value());
                if (s.charAt(i) == ',') {
                    i++;
                    continue;
                }
                expect(']');
                return l;
            }
        }
        if (c == '"') {
            StringBuilder b = new StringBuilder();
            i++;
            while (s.charAt(i) != '"') {
                if (s.charAt(i) == '\\') {
                    i++;
                }
                b.append(s.charAt(i++));
            }
            i++;
            return b.toString();
        }
        for (String lit : new String[] {"true", "false", "null"}) {
            if (s.startsWith(lit, i)) {
                i += lit.length();
                return lit.equals("null") ? null : Boolean.valueOf(lit);
            }
        }
        int start = i;
        while (i < s.length() && "-+.eE0123456789".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        if (start == i) {
            throw new IllegalArgumentException("unexpected '" + c + "' at " + i);
        }
        return Double.parseDouble(s.substring(start, i));
    }

    private void expect(char c) {
        if (s.charAt(i) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + i + " in " + s);
        }
        i++;
    }
}
