package io.doubleface.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as the command line writes them: a whole number and a unit, {@code ms}, {@code s} or
 * {@code m} — {@code 250ms}, {@code 1s}, {@code 2m}. Nothing else (no bare numbers: a missing unit
 * is a likely mistake, not milliseconds).
 */
final class Durations {

    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m)");

    private Durations() {}

    /**
     * Parses {@code 250ms}, {@code 1s}, {@code 2m}.
     *
     * @throws IllegalArgumentException with what was expected
     */
    static Duration parse(String text) {
        Matcher m = DURATION.matcher(text == null ? "" : text.strip().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration (expected: a whole number and "
                    + "a unit ms, s or m, e.g. 250ms, 1s, 2m)");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            default -> Duration.ofMinutes(n);
        };
    }

    /** The shortest exact form: {@code 1s} rather than {@code 1000ms}. */
    static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 60_000 == 0 && ms != 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0 && ms != 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
