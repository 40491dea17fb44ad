package io.doubleface.internal;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The project's one way to write and read JSON, on Gson (already on the class path through
 * grpc-java, so no further dependency): a fluent writer for the admin endpoints, stats and result
 * files, and a strict reader ({@link #parse}) giving plain maps, lists, doubles, strings and
 * booleans. Doubles are written rounded to three decimals. Not thread-safe (one writer per
 * document).
 */
public final class Json {

    /** Deepest nesting {@link #parse} accepts: {@value}. */
    public static final int MAX_DEPTH = 64;

    private final StringWriter out = new StringWriter(1024);
    private final JsonWriter w;

    /** A writer of one compact document. */
    public Json() {
        this(false);
    }

    private Json(boolean pretty) {
        w = new JsonWriter(out);
        w.setHtmlSafe(false);
        w.setSerializeNulls(true);
        if (pretty) {
            w.setIndent("  ");
        }
    }

    /** A writer of one document indented by two spaces, as result files are written. */
    public static Json pretty() {
        return new Json(true);
    }

    private interface Write {
        void run() throws IOException;
    }

    private Json write(Write op) {
        try {
            op.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return this;
    }

    /** Opens an object. */
    public Json begin() {
        return write(w::beginObject);
    }

    /** Closes the innermost object. */
    public Json end() {
        return write(w::endObject);
    }

    /** Opens an array. */
    public Json beginArray() {
        return write(w::beginArray);
    }

    /** Closes the innermost array. */
    public Json endArray() {
        return write(w::endArray);
    }

    /** The name of the next member. */
    public Json key(String k) {
        return write(() -> w.name(k));
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
        return write(() -> w.value(v));
    }

    public Json value(String v) {
        return write(() -> w.value(v));
    }

    public Json value(long v) {
        return write(() -> w.value(v));
    }

    /** A double rounded to three decimals; {@code null} for NaN and infinities. */
    public Json value(double v) {
        return write(() -> {
            if (Double.isFinite(v)) {
                w.jsonValue(Double.toString(Math.round(v * 1000.0) / 1000.0));
            } else {
                w.nullValue();
            }
        });
    }

    /** Writes any tree of maps, lists, strings, numbers, booleans and nulls (as {@link #parse} gives). */
    public Json tree(Object v) {
        if (v == null) {
            return write(w::nullValue);
        } else if (v instanceof String s) {
            return value(s);
        } else if (v instanceof Boolean b) {
            return write(() -> w.value(b));
        } else if (v instanceof Double || v instanceof Float) {
            return value(((Number) v).doubleValue());
        } else if (v instanceof Number n) {
            return value(n.longValue());
        } else if (v instanceof Map<?, ?> m) {
            begin();
            m.forEach((k, x) -> {
                key(String.valueOf(k));
                tree(x);
            });
            return end();
        } else if (v instanceof List<?> l) {
            beginArray();
            l.forEach(this::tree);
            return endArray();
        }
        return value(v.toString());
    }

    public Json fields(Map<String, Long> m) {
        m.forEach(this::field);
        return this;
    }

    /** {@code s} as a JSON string literal. */
    public static String quote(String s) {
        return new Json().value(s).toString();
    }

    /** The document written so far. */
    @Override
    public String toString() {
        return out.toString();
    }

    /**
     * Reads one JSON document strictly (RFC 8259; no comments, no trailing commas, no unquoted
     * names): objects become {@link LinkedHashMap}s, arrays {@link ArrayList}s, numbers
     * {@link Double}s. At most {@value #MAX_DEPTH} levels of nesting.
     *
     * @throws IllegalArgumentException for malformed JSON, naming the line and column
     */
    public static Object parse(String text) {
        JsonReader r = new JsonReader(new StringReader(text));
        r.setStrictness(Strictness.STRICT);
        r.setNestingLimit(MAX_DEPTH);
        try {
            Object v = read(r);
            boolean end;
            try {
                end = r.peek() == JsonToken.END_DOCUMENT;
            } catch (IOException e) {
                end = false;
            }
            if (!end) {
                throw new IllegalArgumentException("JSON: more after the document, " + where(r));
            }
            return v;
        } catch (IOException | IllegalStateException | NumberFormatException e) {
            // MalformedJsonException, EOFException ("End of input at line 1 column 14 path $.version"),
            // without Gson's "See https://…Troubleshooting…" line
            String m = e.getMessage() == null ? e.toString() : e.getMessage();
            int see = m.indexOf("\nSee ");
            throw new IllegalArgumentException("JSON: " + (see < 0 ? m : m.substring(0, see)), e);
        }
    }

    private static Object read(JsonReader r) throws IOException {
        switch (r.peek()) {
            case BEGIN_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                r.beginObject();
                while (r.hasNext()) {
                    String k = r.nextName();
                    if (m.containsKey(k)) {
                        throw new IllegalArgumentException("JSON: duplicate member \"" + k + "\", " + where(r));
                    }
                    m.put(k, read(r));
                }
                r.endObject();
                return m;
            }
            case BEGIN_ARRAY -> {
                List<Object> l = new ArrayList<>();
                r.beginArray();
                while (r.hasNext()) {
                    l.add(read(r));
                }
                r.endArray();
                return l;
            }
            case STRING -> {
                return r.nextString();
            }
            case NUMBER -> {
                return r.nextDouble();
            }
            case BOOLEAN -> {
                return r.nextBoolean();
            }
            case NULL -> {
                r.nextNull();
                return null;
            }
            default -> throw new IllegalArgumentException("JSON: unexpected " + r.peek() + ", " + where(r));
        }
    }

    /** "line L column C path P", as Gson words positions. */
    private static String where(JsonReader r) {
        String s = r.toString(); // "JsonReader at line 1 column 14 path $.version"
        int at = s.indexOf(" at ");
        return at < 0 ? s : s.substring(at + 4);
    }
}
