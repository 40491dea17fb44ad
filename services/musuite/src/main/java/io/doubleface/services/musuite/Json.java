package io.doubleface.services.musuite;

/** JSON text helpers of the μSuite services' HTTP answers. Stateless. */
public final class Json {

    private Json() {}

    /**
     * Appends {@code s} as a JSON string (RFC 8259: quotes, backslash and control characters escaped).
     *
     * @param sb where to append
     * @param s the string
     * @return {@code sb}
     */
    public static StringBuilder quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }

    /**
     * Appends {@code values} as a JSON array of numbers.
     *
     * @param sb where to append
     * @param values the numbers
     * @return {@code sb}
     */
    public static StringBuilder array(StringBuilder sb, java.util.List<Integer> values) {
        sb.append('[');
        for (int i = 0; i < values.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(values.get(i));
        }
        return sb.append(']');
    }
}
