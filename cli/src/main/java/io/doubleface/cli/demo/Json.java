package io.doubleface.cli.demo;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A minimal JSON writer for the demo's report files: maps (insertion order kept), lists, strings,
 * numbers, booleans and {@code null}. Non-finite numbers are written as {@code null}. Stateless.
 */
public final class Json {

    private Json() {}

    /** {@code value} as indented JSON text. */
    public static String write(Object value) {
        StringBuilder b = new StringBuilder();
        write(b, value, 0);
        return b.append('\n').toString();
    }

    private static void write(StringBuilder b, Object v, int indent) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String s) {
            quote(b, s);
        } else if (v instanceof Boolean) {
            b.append(v);
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            b.append(Double.isFinite(d) ? String.format(Locale.ROOT, "%.3f", d) : "null");
        } else if (v instanceof Number n) {
            b.append(n.longValue());
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                b.append("{}");
                return;
            }
            b.append("{\n");
            int i = 0;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                pad(b, indent + 1);
                quote(b, String.valueOf(e.getKey()));
                b.append(": ");
                write(b, e.getValue(), indent + 1);
                b.append(++i < m.size() ? ",\n" : "\n");
            }
            pad(b, indent);
            b.append('}');
        } else if (v instanceof List<?> l) {
            if (l.isEmpty()) {
                b.append("[]");
                return;
            }
            b.append("[\n");
            for (int i = 0; i < l.size(); i++) {
                pad(b, indent + 1);
                write(b, l.get(i), indent + 1);
                b.append(i + 1 < l.size() ? ",\n" : "\n");
            }
            pad(b, indent);
            b.append(']');
        } else {
            quote(b, v.toString());
        }
    }

    private static void pad(StringBuilder b, int indent) {
        b.append("  ".repeat(indent));
    }

    private static void quote(StringBuilder b, String s) {
        io.doubleface.server.internal.Json.quote(b, s);
    }
}
