package io.doubleface.driver.spi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The options of a shard URI, {@code SCHEME://SHARDS?NAME=VALUE&NAME=VALUE}, split once for every
 * driver, with failure messages that name the URI and the option at fault.
 *
 * <p>Empty pieces ({@code ?a=1&&b=2}, a trailing {@code &}) are skipped; a piece without {@code =}
 * or with an empty name is refused. An option may be given twice: {@link #entries()} has both,
 * {@link #get} the last.
 *
 * <p>Immutable.
 */
public final class UriOptions {

    private final String uri;
    private final String base;
    private final List<Map.Entry<String, String>> entries;
    private final Function<String, IllegalArgumentException> error;

    private UriOptions(String uri, String base, List<Map.Entry<String, String>> entries,
            Function<String, IllegalArgumentException> error) {
        this.uri = uri;
        this.base = base;
        this.entries = entries;
        this.error = error;
    }

    /**
     * Splits {@code uri} at its first {@code ?} into the shard list and its options; failures read
     * {@code WHAT 'URI': DETAIL}.
     *
     * @param what the kind of URI for messages, e.g. {@code "redis shard URI"}
     * @param uri the URI, not {@code null}
     * @return the options
     * @throws IllegalArgumentException if an option is not {@code NAME=VALUE}
     */
    public static UriOptions parse(String what, String uri) {
        Objects.requireNonNull(what, "what");
        Objects.requireNonNull(uri, "uri");
        return parseWith(uri, detail -> new IllegalArgumentException(what + " '" + uri + "': " + detail));
    }

    /**
     * {@link #parse(String, String)} with failure messages of the driver's own.
     *
     * @param uri the URI, not {@code null}
     * @param error makes the exception of a failure from its detail (e.g. {@code "unknown option 'x'
     *     (known: a, b)"})
     * @return the options
     * @throws IllegalArgumentException from {@code error} if an option is not {@code NAME=VALUE}
     */
    public static UriOptions parseWith(String uri, Function<String, IllegalArgumentException> error) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(error, "error");
        int q = uri.indexOf('?');
        List<Map.Entry<String, String>> entries = new ArrayList<>();
        if (q >= 0) {
            for (String piece : uri.substring(q + 1).split("&", -1)) {
                if (piece.isEmpty()) {
                    continue;
                }
                int eq = piece.indexOf('=');
                if (eq <= 0) {
                    throw error.apply("option '" + piece + "' is not NAME=VALUE");
                }
                entries.add(Map.entry(piece.substring(0, eq), piece.substring(eq + 1)));
            }
        }
        return new UriOptions(uri, q < 0 ? uri : uri.substring(0, q), List.copyOf(entries), error);
    }

    /** {@return the whole URI as given} */
    public String uri() {
        return uri;
    }

    /** {@return the URI before its {@code ?} (all of it when it has none)} */
    public String base() {
        return base;
    }

    /** {@return whether the URI gives no option} */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** {@return the options in the order given, repeats included (an unmodifiable list)} */
    public List<Map.Entry<String, String>> entries() {
        return entries;
    }

    /** {@return the names given, in order of first appearance (a new set)} */
    public Set<String> names() {
        Set<String> out = new LinkedHashSet<>();
        for (Map.Entry<String, String> e : entries) {
            out.add(e.getKey());
        }
        return out;
    }

    /**
     * The value of an option.
     *
     * @param name the option's name
     * @return its value (the last one if given twice), or {@code null} if not given
     */
    public String get(String name) {
        String v = null;
        for (Map.Entry<String, String> e : entries) {
            if (e.getKey().equals(name)) {
                v = e.getValue();
            }
        }
        return v;
    }

    /**
     * Checks that every option given is one of {@code known}.
     *
     * @param known the option names the driver reads
     * @param usage the known options as the message lists them, e.g. {@code "cacert=PEM"}
     * @return this
     * @throws IllegalArgumentException naming the first unknown option and {@code usage}
     */
    public UriOptions requireKnown(Collection<String> known, String usage) {
        for (Map.Entry<String, String> e : entries) {
            if (!known.contains(e.getKey())) {
                throw unknown(e.getKey(), usage);
            }
        }
        return this;
    }

    /**
     * A failure about this URI.
     *
     * @param detail what is wrong
     * @return the exception to throw, its message naming the URI
     */
    public IllegalArgumentException error(String detail) {
        return error.apply(detail);
    }

    /**
     * The failure of an option the driver does not know.
     *
     * @param name the option's name
     * @param usage the known options, as the message lists them
     * @return the exception to throw: {@code ... unknown option 'NAME' (known: USAGE)}
     */
    public IllegalArgumentException unknown(String name, String usage) {
        return error("unknown option '" + name + "' (known: " + usage + ")");
    }

    /**
     * The failure of an option whose value is not one the driver takes.
     *
     * @param name the option's name
     * @param expected the values taken, e.g. {@code "full, ca or none"}
     * @return the exception to throw: {@code ... NAME=VALUE (expected: EXPECTED)}
     */
    public IllegalArgumentException invalid(String name, String expected) {
        return error(name + "=" + get(name) + " (expected: " + expected + ")");
    }

    /**
     * The constant of {@code type} an option value names: its name in lower case with {@code -} for
     * {@code _} ({@code PER_LOOP} is {@code per-loop}).
     *
     * @param <E> the enum type
     * @param name the option's name, for the message
     * @param value the value given
     * @param type the enum of the values taken
     * @return the constant
     * @throws IllegalArgumentException naming the option, the value and every value taken
     */
    public static <E extends Enum<E>> E choice(String name, String value, Class<E> type) {
        E[] all = type.getEnumConstants();
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < all.length; i++) {
            String label = label(all[i]);
            if (label.equals(value)) {
                return all[i];
            }
            expected.append(i == 0 ? "" : i == all.length - 1 ? " or " : ", ").append(label);
        }
        throw new IllegalArgumentException(name + "=" + value + " (expected: " + expected + ")");
    }

    /**
     * The URI spelling of an option value: the constant's name in lower case with {@code -} for
     * {@code _}.
     *
     * @param value the constant
     * @return its spelling, e.g. {@code replica-preferred}
     */
    public static String label(Enum<?> value) {
        return value.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

    @Override
    public String toString() {
        return uri;
    }
}
