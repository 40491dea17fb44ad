package io.doubleface.services.ycsb;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonParseException;
import com.google.gson.Strictness;
import com.google.gson.ToNumberPolicy;
import com.google.gson.reflect.TypeToken;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads the admin documents in tests (Gson, strict: a malformed document or a duplicate key fails
 * the test): objects become maps, arrays lists, numbers {@link Long} or {@link Double}.
 */
final class JsonDoc {

    private static final Gson GSON = new GsonBuilder()
            .setStrictness(Strictness.STRICT)
            .setObjectToNumberStrategy(ToNumberPolicy.LONG_OR_DOUBLE)
            .create();

    private JsonDoc() {}

    /** Parses a JSON object document. */
    static Map<String, Object> object(String json) {
        try {
            Map<String, Object> m = GSON.fromJson(json, new TypeToken<Map<String, Object>>() {}.getType());
            if (m == null) {
                throw new AssertionError("not a JSON object: " + abbreviate(json));
            }
            return m;
        } catch (JsonParseException e) {
            throw new AssertionError("malformed JSON (" + e.getMessage() + "): " + abbreviate(json), e);
        }
    }

    /** A typed view of one value. */
    record Value(Object v) {
        long asLong() {
            if (v instanceof Number n) {
                return n.longValue();
            }
            throw new AssertionError("not a number: " + v);
        }

        double asDouble() {
            if (v instanceof Number n) {
                return n.doubleValue();
            }
            throw new AssertionError("not a number: " + v);
        }

        String asString() {
            if (v instanceof String str) {
                return str;
            }
            throw new AssertionError("not a string: " + v);
        }

        @SuppressWarnings("unchecked")
        List<Object> asList() {
            if (v instanceof List<?> l) {
                return (List<Object>) l;
            }
            throw new AssertionError("not an array: " + v);
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> asMap() {
            if (v instanceof Map<?, ?> m) {
                return (Map<String, Object>) m;
            }
            throw new AssertionError("not an object: " + v);
        }
    }

    /** The member at {@code keys} (nested objects), failing with the path if absent. */
    @SuppressWarnings("unchecked")
    static Value path(Map<String, Object> root, String... keys) {
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
    static List<Map<String, Object>> objects(Map<String, Object> root, String... keys) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object o : path(root, keys).asList()) {
            out.add((Map<String, Object>) o);
        }
        return out;
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "…";
    }
}
