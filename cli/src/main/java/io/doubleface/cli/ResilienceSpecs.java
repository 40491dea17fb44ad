package io.doubleface.cli;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.Resilience;
import java.time.Duration;

/**
 * Reads {@code serve --resilience}: comma-separated parts, each optional, e.g.
 * {@code circuit:5:1s,retries:1:0.1:10,hedge:20ms:0.05:5}.
 *
 * <ul>
 *   <li>{@code circuit:N:DURATION} — open a shard's circuit after N failures in a row, for DURATION;
 *   <li>{@code retries:N[:RATIO:FLOOR]} — up to N retries, budget RATIO of calls plus FLOOR per
 *       second (default {@value #DEFAULT_RATIO} and {@value #DEFAULT_FLOOR});
 *   <li>{@code hedge:DELAY[:RATIO:FLOOR]} — a second copy after DELAY without reply, same budget shape;
 *       DELAY may be a live percentile of the calls' reply times, e.g. {@code p95} (at least
 *       {@value #PERCENTILE_FLOOR_MILLIS} ms).
 * </ul>
 * {@code off} (the default) is no policy. Every command of the YCSB service is a read, so all are
 * idempotent.
 */
final class ResilienceSpecs {

    static final double DEFAULT_RATIO = 0.1;
    static final int DEFAULT_FLOOR = 10;
    /** Shortest hedge delay under a live percentile: {@value} ms. */
    static final long PERCENTILE_FLOOR_MILLIS = 1;

    private ResilienceSpecs() {}

    /**
     * @return the policy, or {@code null} for {@code off}
     * @throws IllegalArgumentException with the reason, for a malformed spec
     */
    static Resilience<Command<?>> parse(String spec) {
        String s = spec.trim();
        if (s.equals("off") || s.isEmpty()) {
            return null;
        }
        Resilience<Command<?>> p = Resilience.<Command<?>>none().idempotent(c -> true);
        for (String part : s.split(",")) {
            String[] f = part.trim().split(":");
            try {
                switch (f[0]) {
                    case "circuit" -> {
                        need(part, f, 3, 3);
                        p = p.circuitBreaker(Integer.parseInt(f[1]), Durations.parse(f[2]));
                    }
                    case "retries" -> {
                        need(part, f, 2, 4);
                        p = p.retries(Integer.parseInt(f[1]), budget(part, f));
                    }
                    case "hedge" -> {
                        need(part, f, 2, 4);
                        if (f[1].startsWith("p")) {
                            p = p.hedgingAtPercentile(Double.parseDouble(f[1].substring(1)),
                                    Duration.ofMillis(PERCENTILE_FLOOR_MILLIS), budget(part, f));
                        } else {
                            Duration delay = Durations.parse(f[1]);
                            p = p.hedging(delay, budget(part, f));
                        }
                    }
                    default -> throw new IllegalArgumentException("resilience part '" + part
                            + "' (expected: circuit:N:DURATION, retries:N[:RATIO:FLOOR] or hedge:DELAY[:RATIO:FLOOR])");
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("resilience part '" + part + "': not a number: " + e.getMessage());
            }
        }
        return p;
    }

    private static void need(String part, String[] f, int min, int max) {
        if (f.length < min || f.length > max || f.length == 3 && max == 4) {
            throw new IllegalArgumentException("resilience part '" + part + "' (expected: circuit:N:DURATION, "
                    + "retries:N[:RATIO:FLOOR] or hedge:DELAY[:RATIO:FLOOR])");
        }
    }

    private static Resilience.Budget budget(String part, String[] f) {
        if (f.length == 2) {
            return Resilience.Budget.of(DEFAULT_RATIO, DEFAULT_FLOOR);
        }
        return Resilience.Budget.of(Double.parseDouble(f[2]), Integer.parseInt(f[3]));
    }
}
