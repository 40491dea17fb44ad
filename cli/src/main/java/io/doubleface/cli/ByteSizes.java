package io.doubleface.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte counts as the command line writes them: {@code 8192}, {@code 8k}, {@code 64KiB},
 * {@code 1m}. Multiples are binary ({@code k} = 1024), up to {@link Integer#MAX_VALUE}.
 */
final class ByteSizes {

    private static final Pattern SIZE = Pattern.compile("(\\d{1,10})(|b|k|kb|kib|m|mb|mib)");

    private ByteSizes() {}

    /**
     * Parses a byte count.
     *
     * @throws IllegalArgumentException with what was expected
     */
    static int parse(String text) {
        Matcher m = SIZE.matcher(text == null ? "" : text.strip().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a size (expected: bytes, optionally with k or m, "
                    + "e.g. 8192, 8k, 1m)");
        }
        long n = Long.parseLong(m.group(1));
        long bytes = switch (m.group(2)) {
            case "k", "kb", "kib" -> n * 1024;
            case "m", "mb", "mib" -> n * 1024 * 1024;
            default -> n;
        };
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("'" + text + "' is too large (expected: at most 2047m)");
        }
        return (int) bytes;
    }
}
