package io.doubleface.experiments;

/**
 * The demo's and experiments' report files as indented JSON ({@link io.doubleface.internal.Json},
 * on Gson): maps (insertion order kept), lists, strings, numbers (doubles to three decimals),
 * booleans and {@code null}; non-finite numbers as {@code null}. Stateless.
 */
public final class Json {

    private Json() {}

    /** {@code value} as indented JSON text. */
    public static String write(Object value) {
        return io.doubleface.internal.Json.pretty().tree(value) + "\n";
    }
}
