package io.doubleface.loadgen;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The offered rate of an open-loop run over time: piecewise constant, a list of segments
 * {@code rate@duration}. The last segment's rate continues when a run lasts longer than the
 * schedule.
 *
 * <pre>
 *   constant          Schedule.constant(5000)
 *   steps:R@D,…       steps:100@10s,1000@10s,5000@10s      a load ramp
 *   flash:R@D,…       flash:100@30s,8000@1s,100@30s        a flash crowd (same syntax, just named)
 *   trace:FILE.csv    CSV rows {@code second,rate}; rate r holds from its second to the next row's
 *   trace:var|app|etc the shipped 60 s traces shaped like the Memcached VAR, APP and ETC traces
 * </pre>
 *
 * Trace rates are used as written, or scaled so that the trace's peak equals
 * {@code traceScale} when one is given. Immutable and thread-safe.
 */
public final class Schedule {

    /** The shipped traces, resources under {@code /traces/NAME.csv}. */
    public static final List<String> SHIPPED_TRACES = List.of("var", "app", "etc");

    private static final Pattern STEP = Pattern.compile("(\\d+(?:\\.\\d+)?)@(\\d{1,9})(ms|s|m)");

    private final String description;
    private final double[] rates;
    /** Segment ends in nanoseconds from the schedule's start; the last is {@link Long#MAX_VALUE}. */
    private final long[] ends;
    private final long lengthNanos;

    private Schedule(String description, double[] rates, long[] durationsNanos) {
        this.description = description;
        this.rates = rates;
        this.ends = new long[rates.length];
        long t = 0;
        for (int i = 0; i < rates.length; i++) {
            t += durationsNanos[i];
            ends[i] = t;
        }
        this.lengthNanos = t;
        ends[rates.length - 1] = Long.MAX_VALUE;
    }

    /** A constant rate, requests per second (> 0). */
    public static Schedule constant(double rate) {
        requireRate(rate, "rate", false);
        return new Schedule(fmt(rate) + "/s", new double[] {rate}, new long[] {Long.MAX_VALUE});
    }

    /**
     * Parses {@code steps:…}, {@code flash:…} or {@code trace:…}.
     *
     * @param traceScale the peak rate a trace is scaled to, or {@code <= 0} to use its rates as written
     * @throws IllegalArgumentException with what was expected
     */
    public static Schedule parse(String spec, double traceScale) {
        String s = spec == null ? "" : spec.strip();
        int colon = s.indexOf(':');
        String kind = colon < 0 ? "" : s.substring(0, colon).toLowerCase(Locale.ROOT);
        String body = colon < 0 ? "" : s.substring(colon + 1).strip();
        return switch (kind) {
            case "steps", "flash" -> steps(kind, body);
            case "trace" -> trace(body, traceScale);
            default -> throw new IllegalArgumentException("schedule '" + spec + "' (expected: steps:RATE@DURATION,…, "
                    + "flash:RATE@DURATION,… or trace:FILE.csv, e.g. steps:100@10s,1000@10s)");
        };
    }

    private static Schedule steps(String kind, String body) {
        if (body.isEmpty()) {
            throw new IllegalArgumentException(kind + ": no steps (expected: RATE@DURATION,…, e.g. " + kind
                    + ":100@10s,1000@10s)");
        }
        String[] parts = body.split(",");
        double[] rates = new double[parts.length];
        long[] durations = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            Matcher m = STEP.matcher(parts[i].strip().toLowerCase(Locale.ROOT));
            if (!m.matches()) {
                throw new IllegalArgumentException(kind + ": step '" + parts[i].strip() + "' (expected: RATE@DURATION "
                        + "with a unit ms, s or m, e.g. 1000@10s)");
            }
            rates[i] = Double.parseDouble(m.group(1));
            requireRate(rates[i], kind + ": step '" + parts[i].strip() + "'", true);
            durations[i] = parseDuration(m.group(2), m.group(3)).toNanos();
            if (durations[i] <= 0) {
                throw new IllegalArgumentException(kind + ": step '" + parts[i].strip() + "' (expected: a duration > 0)");
            }
        }
        if (max(rates) <= 0) {
            throw new IllegalArgumentException(kind + ": every rate is 0 (expected: at least one rate > 0)");
        }
        return new Schedule(kind + ":" + body, rates, durations);
    }

    private static Schedule trace(String name, double traceScale) {
        if (name.isEmpty()) {
            throw new IllegalArgumentException("trace: no file (expected: trace:FILE.csv or one of " + SHIPPED_TRACES + ")");
        }
        List<String> lines;
        String lower = name.toLowerCase(Locale.ROOT);
        if (SHIPPED_TRACES.contains(lower)) {
            lines = readResource("/traces/" + lower + ".csv");
        } else {
            try {
                lines = Files.readAllLines(Path.of(name), StandardCharsets.UTF_8);
            } catch (NoSuchFileException e) {
                throw new IllegalArgumentException("trace: no such file '" + name + "' (expected: a CSV of second,rate "
                        + "rows or one of " + SHIPPED_TRACES + ")");
            } catch (IOException e) {
                throw new IllegalArgumentException("trace: cannot read '" + name + "': " + e.getMessage());
            }
        }
        List<double[]> rows = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#") || (rows.isEmpty() && line.toLowerCase(Locale.ROOT)
                    .startsWith("second"))) {
                continue;
            }
            String[] cols = line.split(",");
            double second;
            double rate;
            try {
                if (cols.length != 2) {
                    throw new NumberFormatException();
                }
                second = Double.parseDouble(cols[0].strip());
                rate = Double.parseDouble(cols[1].strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("trace " + name + " line " + (i + 1) + ": '" + line
                        + "' (expected: second,rate)");
            }
            if (!(second >= 0) || !(rate >= 0) || Double.isInfinite(rate)
                    || (!rows.isEmpty() && second <= rows.get(rows.size() - 1)[0])) {
                throw new IllegalArgumentException("trace " + name + " line " + (i + 1) + ": '" + line
                        + "' (expected: second >= 0 and increasing, rate >= 0)");
            }
            rows.add(new double[] {second, rate});
        }
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("trace " + name + ": no second,rate rows");
        }
        int n = rows.size();
        double[] rates = new double[n];
        long[] durations = new long[n];
        for (int i = 0; i < n; i++) {
            rates[i] = rows.get(i)[1];
            // the last row holds for one second (the trace's resolution)
            double next = i + 1 < n ? rows.get(i + 1)[0] : rows.get(i)[0] + 1;
            durations[i] = Math.round((next - rows.get(i)[0]) * 1e9);
        }
        if (rows.get(0)[0] > 0) {
            throw new IllegalArgumentException("trace " + name + ": first row at second " + fmt(rows.get(0)[0])
                    + " (expected: 0)");
        }
        double peak = max(rates);
        if (peak <= 0) {
            throw new IllegalArgumentException("trace " + name + ": every rate is 0");
        }
        if (traceScale > 0) {
            for (int i = 0; i < n; i++) {
                rates[i] = rates[i] * traceScale / peak;
            }
        }
        return new Schedule("trace:" + name + (traceScale > 0 ? " (peak " + fmt(traceScale) + "/s)" : ""),
                rates, durations);
    }

    private static List<String> readResource(String path) {
        try (InputStream in = Schedule.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + path);
            }
            return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).lines().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Duration parseDuration(String number, String unit) {
        long n = Long.parseLong(number);
        return switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            default -> Duration.ofMinutes(n);
        };
    }

    private static void requireRate(double rate, String what, boolean zeroOk) {
        if (!(zeroOk ? rate >= 0 : rate > 0) || Double.isInfinite(rate) || rate > 10_000_000) {
            throw new IllegalArgumentException(what + ": " + fmt(rate) + " (expected: " + (zeroOk ? "0" : "> 0")
                    + " .. 10000000 requests/s)");
        }
    }

    private static double max(double[] a) {
        double m = 0;
        for (double v : a) {
            m = Math.max(m, v);
        }
        return m;
    }

    static String fmt(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : String.format(Locale.ROOT, "%.3f", v);
    }

    /** The rate (requests/s) at {@code t} ns from the start; {@code t < 0} (warm-up) gives the first rate. */
    public double rateAt(long t) {
        return rates[segment(t)];
    }

    /** The end of the segment containing {@code t}: the next time the rate may change ({@link Long#MAX_VALUE} if never). */
    public long segmentEnd(long t) {
        return ends[segment(t)];
    }

    private int segment(long t) {
        int i = 0;
        while (t >= ends[i]) { // few segments; the last end is Long.MAX_VALUE
            i++;
        }
        return i;
    }

    /** The schedule's own length (the sum of its segments), or {@code null} for a constant rate. */
    public Duration length() {
        return rates.length == 1 && lengthNanos == Long.MAX_VALUE ? null : Duration.ofNanos(lengthNanos);
    }

    /** The mean rate over the first {@code nanos} ns: expected requests / seconds. */
    public double meanRate(long nanos) {
        if (nanos <= 0) {
            return rates[0];
        }
        double requests = 0;
        long t = 0;
        for (int i = 0; i < rates.length && t < nanos; i++) {
            long end = Math.min(ends[i], nanos);
            requests += rates[i] * (end - t) / 1e9;
            t = end;
        }
        return requests / (nanos / 1e9);
    }

    /** Whether this is a single constant rate. */
    public boolean isConstant() {
        return rates.length == 1;
    }

    @Override
    public String toString() {
        return description;
    }
}
