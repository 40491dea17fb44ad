package io.doubleface.server.internal;

import java.util.Map;

/** A tiny JSON writer for the admin endpoints (no dependency for a few objects). Not thread-safe. */
public final class Json {

    private final StringBuilder b = new StringBuilder(1024);
    private boolean first = true;

    public Json begin() {
        comma();
        b.append('{');
        first = true;
        return this;
    }

    public Json end() {
        b.append('}');
        first = false;
        return this;
    }

    public Json beginArray() {
        comma();
        b.append('[');
        first = true;
        return this;
    }

    public Json endArray() {
        b.append(']');
        first = false;
        return this;
    }

    /** Starts a member; follow with a value, {@link #begin()} or {@link #beginArray()}. */
    public Json key(String k) {
        comma();
        str(k);
        b.append(':');
        first = true;
        return this;
    }

    public Json field(String k, String v) {
        key(k);
        return value(v);
    }

    public Json field(String k, long v) {
        key(k);
        return value(v);
    }

    public Json field(String k, double v) {
        key(k);
        return value(v);
    }

    public Json field(String k, boolean v) {
        key(k);
        comma();
        b.append(v);
        first = false;
        return this;
    }

    public Json value(String v) {
        comma();
        if (v == null) {
            b.append("null");
        } else {
            str(v);
        }
        first = false;
        return this;
    }

    public Json value(long v) {
        comma();
        b.append(v);
        first = false;
        return this;
    }

    public Json value(double v) {
        comma();
        if (Double.isFinite(v)) {
            b.append(Math.round(v * 1000.0) / 1000.0);
        } else {
            b.append("null");
        }
        first = false;
        return this;
    }

    public Json fields(Map<String, Long> m) {
        m.forEach(this::field);
        return this;
    }

    private void comma() {
        if (!first) {
            b.append(',');
        }
        first = false;
    }

    private void str(String s) {
        quote(b, s);
    }

    /**
     * Appends {@code s} as a JSON string literal (quotes, backslash and control characters
     * escaped). The one escaping routine of the project's hand-written JSON (admin stats, the
     * demo report, the load generator's summary).
     */
    public static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }

    /** {@code s} as a JSON string literal. */
    public static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2);
        quote(b, s);
        return b.toString();
    }

    @Override
    public String toString() {
        return b.toString();
    }
}
