package io.doubleface.tune;

import io.doubleface.model.Configuration;
import io.doubleface.internal.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A trained latency profile: for each threading configuration, what it measured at each offered
 * load — p50/p99/p99.9 latency, throughput, CPU, and whether it was saturated there. The load
 * adapter interpolates it ({@link #p99}, {@link #capacity}); the trainer writes it
 * ({@link #builder()}, {@link #write}). The file format (versioned JSON, {@value #VERSION}) is
 * documented in {@code docs/tuning.md}.
 *
 * <pre>{@code
 * Profile p = Profile.builder()
 *         .service("ycsb").shards("kv://127.0.0.1:7101-7120").machine("2 cpus").commit("abc123")
 *         .point("sip", new Profile.Point(100, 180, 420, 900, 100, 0.9, false))
 *         .point("sdb-1n-64w", new Profile.Point(100, 240, 610, 1200, 100, 0.2, false))
 *         .build();
 * p.write(Path.of("profiles/ycsb-kv.json"));
 * Profile again = Profile.read(Path.of("profiles/ycsb-kv.json"));
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class Profile {

    /** The format version this code reads and writes: {@value}. */
    public static final int VERSION = 1;
    /** Largest profile file read: {@value} bytes. */
    public static final long MAX_FILE_BYTES = 16L << 20;

    /**
     * One measured load step of one configuration. Latencies in microseconds.
     *
     * <p>A step measured more than once (training's {@code --repeats}) keeps the median p99 and the
     * range of the repeats' p99s: the load adapter leaves the peak-sustaining configuration for
     * another only where the other's range lies wholly below its own ({@link #beyondNoise}).
     *
     * @param load offered load, requests per second (&gt; 0)
     * @param p50Micros median latency
     * @param p99Micros 99th percentile (the median over repeats)
     * @param p999Micros 99.9th percentile, or {@code NaN} when not measured (a p99.9 needs
     *     100,000 samples; written as {@code null})
     * @param throughput answered requests per second
     * @param cpu CPU used by the mid-tier, in cores (1.0 = one core busy)
     * @param saturated the offered load was not sustained (or p99 exploded): infeasible here
     * @param p99LowMicros the lowest repeat's p99 ({@code p99Micros} with one repeat)
     * @param p99HighMicros the highest repeat's p99 ({@code p99Micros} with one repeat)
     * @param repeats how many repeats the point summarises (&ge; 1)
     */
    public record Point(double load, double p50Micros, double p99Micros, double p999Micros, double throughput,
            double cpu, boolean saturated, double p99LowMicros, double p99HighMicros, int repeats) {
        public Point {
            positive("load", load);
            nonNegative("p50", p50Micros);
            nonNegative("p99", p99Micros);
            if (!Double.isNaN(p999Micros)) {
                nonNegative("p99.9", p999Micros);
            }
            nonNegative("throughput", throughput);
            nonNegative("cpu", cpu);
            if (p99Micros < p50Micros || (!Double.isNaN(p999Micros) && p999Micros < p99Micros)) {
                throw new IllegalArgumentException("percentiles at load " + load + ": p50 " + p50Micros + ", p99 "
                        + p99Micros + ", p99.9 " + p999Micros + " (expected: p50 <= p99 <= p99.9)");
            }
            if (repeats < 1) {
                throw new IllegalArgumentException("repeats at load " + load + ": " + repeats + " (expected: >= 1)");
            }
            nonNegative("p99 low", p99LowMicros);
            nonNegative("p99 high", p99HighMicros);
            if (p99LowMicros > p99Micros || p99HighMicros < p99Micros) {
                throw new IllegalArgumentException("p99 range at load " + load + ": " + p99LowMicros + ".." + p99HighMicros
                        + " does not hold the p99 " + p99Micros + " (expected: low <= p99 <= high)");
            }
        }

        /** A step measured once: its p99 range is the p99 itself. */
        public Point(double load, double p50Micros, double p99Micros, double p999Micros, double throughput, double cpu,
                boolean saturated) {
            this(load, p50Micros, p99Micros, p999Micros, throughput, cpu, saturated, p99Micros, p99Micros, 1);
        }
    }

    /**
     * What a trained profile says to run at one of its loads, and why ({@link #bands}).
     *
     * @param load the measured load, requests per second
     * @param choice the configuration the adapter's profile rule picks there
     * @param reason why, in words (printed by {@code doubleface train} and written in the profile)
     */
    public record Band(double load, Configuration choice, String reason) {}

    /** Where and how a profile was trained. Any field may be empty. */
    public record Metadata(String service, String shards, String machine, String date, String commit) {
        public Metadata {
            service = Objects.requireNonNullElse(service, "");
            shards = Objects.requireNonNullElse(shards, "");
            machine = Objects.requireNonNullElse(machine, "");
            date = Objects.requireNonNullElse(date, "");
            commit = Objects.requireNonNullElse(commit, "");
        }
    }

    private final Metadata metadata;
    private final Map<Configuration, List<Point>> configurations;

    private Profile(Metadata metadata, Map<Configuration, List<Point>> configurations) {
        this.metadata = metadata;
        this.configurations = configurations;
    }

    private static void positive(String what, double v) {
        if (!(v > 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(what + ": " + v + " (expected: > 0)");
        }
    }

    private static void nonNegative(String what, double v) {
        if (!(v >= 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(what + ": " + v + " (expected: >= 0)");
        }
    }

    public Metadata metadata() {
        return metadata;
    }

    /** The configurations measured, in file order (their names parsed once, when the profile was read). */
    public List<Configuration> configurations() {
        return List.copyOf(configurations.keySet());
    }

    /** The points of {@code config}, by increasing load; empty if unknown. */
    public List<Point> points(Configuration config) {
        return configurations.getOrDefault(config, List.of());
    }

    /**
     * The highest load {@code config} sustained: the load of its last unsaturated point before
     * the first saturated one (0 if it saturated at its first point or is unknown). Loads beyond
     * the last measured point are not assumed sustainable.
     */
    public double capacity(Configuration config) {
        double cap = 0;
        for (Point p : points(config)) {
            if (p.saturated()) {
                break;
            }
            cap = p.load();
        }
        return cap;
    }

    /**
     * The p99 of {@code config} at {@code load}, in microseconds, interpolated linearly between
     * the two measured loads around it (from unsaturated points only); the nearest point's value
     * outside the measured range. {@code NaN} if the configuration has no unsaturated point.
     */
    public double p99(Configuration config, double load) {
        return interpolate(config, load, Point::p99Micros);
    }

    /** The lowest repeat's p99 of {@code config} at {@code load}, interpolated as {@link #p99}. */
    public double p99Low(Configuration config, double load) {
        return interpolate(config, load, Point::p99LowMicros);
    }

    /** The highest repeat's p99 of {@code config} at {@code load}, interpolated as {@link #p99}. */
    public double p99High(Configuration config, double load) {
        return interpolate(config, load, Point::p99HighMicros);
    }

    /**
     * The fewest repeats behind any unsaturated point of {@code config} (0 if it has none): a
     * configuration measured once somewhere has no spread to compare there.
     */
    public int repeats(Configuration config) {
        int r = Integer.MAX_VALUE;
        for (Point p : points(config)) {
            if (p.saturated()) {
                break;
            }
            r = Math.min(r, p.repeats());
        }
        return r == Integer.MAX_VALUE ? 0 : r;
    }

    private double interpolate(Configuration config, double load, java.util.function.ToDoubleFunction<Point> value) {
        List<Point> pts = points(config);
        Point below = null;
        for (Point p : pts) {
            if (p.saturated()) {
                break;
            }
            if (p.load() >= load) {
                if (below == null) {
                    return value.applyAsDouble(p);
                }
                double f = (load - below.load()) / (p.load() - below.load());
                double b = value.applyAsDouble(below);
                return b + f * (value.applyAsDouble(p) - b);
            }
            below = p;
        }
        return below == null ? Double.NaN : value.applyAsDouble(below);
    }

    /**
     * Whether {@code x} beats {@code than} at {@code load} by more than the noise the profile
     * measured: with at least two repeats behind both, the highest repeat's p99 of {@code x} below
     * the lowest of {@code than} (their ranges do not overlap: with three repeats each, a chance of
     * 1 in 20 when the two do not differ); with fewer, only the p99 better by {@code hysteresis}
     * (a profile without repeats has no spread to compare).
     *
     * @param lift how much live latencies raised both predictions ({@code x}'s, {@code than}'s);
     *     1 when they did not
     */
    boolean beyondNoise(Configuration x, double liftX, Configuration than, double liftThan, double load, double hysteresis) {
        double px = p99(x, load) * liftX;
        double pt = p99(than, load) * liftThan;
        if (Double.isNaN(px) || Double.isNaN(pt) || !(px < pt * (1 - hysteresis))) {
            return false;
        }
        if (repeats(x) < 2 || repeats(than) < 2) {
            return true;
        }
        return p99High(x, load) * liftX < p99Low(than, load) * liftThan;
    }

    /**
     * What the profile says to run at each of its measured loads, and why: the configuration with
     * the lowest p99 among those with capacity for the load plus {@code margin}, where it beats
     * the peak-sustaining one beyond the noise ({@link #beyondNoise}); the peak-sustaining one
     * otherwise. The adapter applies the same rule live (docs/tuning.md, "Decisions"); this is
     * its offline reading, for the trainer's output and the profile file.
     */
    public List<Band> bands(double margin, double hysteresis) {
        Configuration anchor = peakSustaining();
        java.util.TreeSet<Double> loads = new java.util.TreeSet<>();
        configurations.values().forEach(ps -> ps.forEach(p -> loads.add(p.load())));
        List<Band> out = new ArrayList<>();
        for (double l : loads) {
            Configuration best = null;
            for (Configuration c : configurations.keySet()) {
                if (c.equals(anchor) || l * (1 + margin) > capacity(c) || Double.isNaN(p99(c, l))) {
                    continue;
                }
                if (beyondNoise(c, 1, anchor, 1, l, hysteresis) && (best == null || p99(c, l) < p99(best, l))) {
                    best = c;
                }
            }
            out.add(new Band(l, best == null ? anchor : best, best == null ? anchorReason(anchor, l, margin, hysteresis)
                    : String.format(java.util.Locale.ROOT, "p99 %s below %s's %s", range(best, l), anchor, range(anchor, l))));
        }
        return List.copyOf(out);
    }

    private String anchorReason(Configuration anchor, double l, double margin, double hysteresis) {
        Configuration closest = null;
        for (Configuration c : configurations.keySet()) {
            if (!c.equals(anchor) && l * (1 + margin) <= capacity(c) && !Double.isNaN(p99(c, l))
                    && (closest == null || p99(c, l) < p99(closest, l))) {
                closest = c;
            }
        }
        if (closest == null) {
            return "peak-sustaining; no other configuration has capacity for this load plus the margin";
        }
        if (!(p99(closest, l) < p99(anchor, l) * (1 - hysteresis))) {
            return String.format(java.util.Locale.ROOT, "peak-sustaining; no other better by the hysteresis (%.0f %%): %s %s, "
                    + "%s %s", hysteresis * 100, anchor, range(anchor, l), closest, range(closest, l));
        }
        return String.format(java.util.Locale.ROOT, "peak-sustaining; %s's lower p99 %s is within the noise of %s",
                closest, range(closest, l), range(anchor, l));
    }

    /** {@code 420 µs} or, with repeats, {@code 420 µs (310–610, 3 repeats)}. */
    private String range(Configuration c, double l) {
        double p = p99(c, l);
        if (repeats(c) < 2) {
            return String.format(java.util.Locale.ROOT, "%.0f µs (1 repeat)", p);
        }
        return String.format(java.util.Locale.ROOT, "%.0f µs (%.0f–%.0f, %d repeats)", p, p99Low(c, l), p99High(c, l),
                repeats(c));
    }

    /**
     * The peak-sustaining configuration: the highest {@link #capacity}, ties broken by the lower
     * p99 at that load. The adapter starts there (and the FM policy varies only its pool sizes).
     */
    public Configuration peakSustaining() {
        Configuration best = null;
        for (Configuration c : configurations.keySet()) {
            if (best == null) {
                best = c;
                continue;
            }
            double cc = capacity(c);
            double cb = capacity(best);
            if (cc > cb || (cc == cb && cc > 0 && p99(c, cc) < p99(best, cb))) {
                best = c;
            }
        }
        return best;
    }

    // ---- reading --------------------------------------------------------------------------------

    /**
     * Reads a profile file.
     *
     * @throws IOException if it cannot be read
     * @throws IllegalArgumentException naming the file and the problem if it is not a valid profile
     */
    public static Profile read(Path file) throws IOException {
        long size = Files.size(file);
        if (size > MAX_FILE_BYTES) {
            throw new IllegalArgumentException("profile " + file + ": " + size + " bytes (expected: at most "
                    + MAX_FILE_BYTES + ")");
        }
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Parses a profile document.
     *
     * @param source named in error messages (e.g. the file name)
     * @throws IllegalArgumentException naming {@code source} and the problem
     */
    public static Profile parse(String json, String source) {
        try {
            return fromTree(Json.parse(json));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("profile " + source + ": " + e.getMessage(), e);
        }
    }

    private static Profile fromTree(Object tree) {
        if (!(tree instanceof Map<?, ?> root)) {
            throw new IllegalArgumentException("expected a JSON object at the top");
        }
        Object v = root.get("version");
        if (!(v instanceof Double d) || d != Math.rint(d)) {
            throw new IllegalArgumentException("missing or non-integer \"version\" (expected: " + VERSION + ")");
        }
        if (d.intValue() != VERSION) {
            throw new IllegalArgumentException("version " + d.intValue() + " is not supported (expected: " + VERSION + ")");
        }
        Builder b = builder()
                .service(str(root, "service", "")).shards(str(root, "shards", "")).machine(str(root, "machine", ""))
                .date(str(root, "date", "")).commit(str(root, "commit", ""));
        Object cs = root.get("configurations");
        if (!(cs instanceof List<?> list)) {
            throw new IllegalArgumentException("missing \"configurations\" array");
        }
        for (int i = 0; i < list.size(); i++) {
            String where = "configurations[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> c)) {
                throw new IllegalArgumentException(where + ": expected an object");
            }
            Object name = c.get("name");
            if (!(name instanceof String n)) {
                throw new IllegalArgumentException(where + ": missing \"name\"");
            }
            where += " (" + n + ")";
            Configuration config;
            try {
                config = Configuration.parse(n);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
            if (!(c.get("points") instanceof List<?> pts) || pts.isEmpty()) {
                throw new IllegalArgumentException(where + ": missing or empty \"points\" array");
            }
            for (int j = 0; j < pts.size(); j++) {
                String pw = where + ".points[" + j + "]";
                if (!(pts.get(j) instanceof Map<?, ?> p)) {
                    throw new IllegalArgumentException(pw + ": expected an object");
                }
                try {
                    double p99 = num(p, "p99_us");
                    double lo = p99;
                    double hi = p99;
                    int repeats = 1;
                    if (p.get("p99_range_us") != null) {
                        if (!(p.get("p99_range_us") instanceof List<?> r) || r.size() != 2 || !(r.get(0) instanceof Double a)
                                || !(r.get(1) instanceof Double z)) {
                            throw new IllegalArgumentException("\"p99_range_us\": expected [low, high]");
                        }
                        lo = a;
                        hi = z;
                        double k = num(p, "repeats");
                        if (k != Math.rint(k) || k < 1 || k > Integer.MAX_VALUE) {
                            throw new IllegalArgumentException("\"repeats\": " + k + " (expected: an integer >= 1)");
                        }
                        repeats = (int) k;
                    }
                    b.point(config, new Point(num(p, "load"), num(p, "p50_us"), p99, p.get("p999_us") == null ? Double.NaN : num(p, "p999_us"),
                            num(p, "throughput"), num(p, "cpu"), bool(p, "saturated"), lo, hi, repeats));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(pw + ": " + e.getMessage(), e);
                }
            }
        }
        return b.build();
    }

    private static String str(Map<?, ?> m, String k, String dflt) {
        Object v = m.get(k);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof String s)) {
            throw new IllegalArgumentException("\"" + k + "\": expected a string");
        }
        return s;
    }

    private static double num(Map<?, ?> m, String k) {
        if (!(m.get(k) instanceof Double d)) {
            throw new IllegalArgumentException("missing or non-numeric \"" + k + "\"");
        }
        return d;
    }

    private static boolean bool(Map<?, ?> m, String k) {
        if (!(m.get(k) instanceof Boolean b)) {
            throw new IllegalArgumentException("missing or non-boolean \"" + k + "\"");
        }
        return b;
    }

    // ---- writing --------------------------------------------------------------------------------

    /**
     * The profile as a JSON document (the format {@link #parse} reads), one point per line, and
     * its {@link #bands} at the default margin and hysteresis (for readers; {@link #parse}
     * ignores them and the adapter applies the rule live).
     */
    public String toJson() {
        StringBuilder b = new StringBuilder(4096);
        b.append("{\n  \"version\": ").append(VERSION).append(",\n");
        b.append("  \"service\": ").append(Json.quote(metadata.service())).append(",\n");
        b.append("  \"shards\": ").append(Json.quote(metadata.shards())).append(",\n");
        b.append("  \"machine\": ").append(Json.quote(metadata.machine())).append(",\n");
        b.append("  \"date\": ").append(Json.quote(metadata.date())).append(",\n");
        b.append("  \"commit\": ").append(Json.quote(metadata.commit())).append(",\n");
        b.append("  \"configurations\": [");
        boolean firstC = true;
        for (Map.Entry<Configuration, List<Point>> e : configurations.entrySet()) {
            b.append(firstC ? "\n" : ",\n");
            firstC = false;
            b.append("    {\"name\": ").append(Json.quote(e.getKey().name())).append(", \"points\": [");
            boolean firstP = true;
            for (Point p : e.getValue()) {
                b.append(firstP ? "\n" : ",\n");
                firstP = false;
                b.append("      {\"load\": ").append(num(p.load())).append(", \"p50_us\": ").append(num(p.p50Micros()))
                        .append(", \"p99_us\": ").append(num(p.p99Micros())).append(", \"p999_us\": ")
                        .append(num(p.p999Micros())).append(", \"throughput\": ").append(num(p.throughput()))
                        .append(", \"cpu\": ").append(num(p.cpu())).append(", \"saturated\": ").append(p.saturated());
                if (p.repeats() > 1) {
                    b.append(", \"p99_range_us\": [").append(num(p.p99LowMicros())).append(", ").append(num(p.p99HighMicros()))
                            .append("], \"repeats\": ").append(p.repeats());
                }
                b.append('}');
            }
            b.append("\n    ]}");
        }
        b.append("\n  ],\n  \"bands\": [");
        boolean firstB = true;
        for (Band band : bands(TuneSettings.DEFAULT_MARGIN, TuneSettings.DEFAULT_HYSTERESIS)) {
            b.append(firstB ? "\n" : ",\n");
            firstB = false;
            b.append("    {\"load\": ").append(num(band.load())).append(", \"choice\": ").append(Json.quote(band.choice().name()))
                    .append(", \"reason\": ").append(Json.quote(band.reason())).append('}');
        }
        b.append("\n  ]\n}\n");
        return b.toString();
    }

    private static String num(double v) {
        if (Double.isNaN(v)) {
            return "null";
        }
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }

    /** Writes the profile to {@code file} (through a temporary file, then a rename). */
    public void write(Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, toJson(), StandardCharsets.UTF_8);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public String toString() {
        return "Profile" + configurations.keySet();
    }

    /** Starts a profile (for the trainer and tests). */
    public static Builder builder() {
        return new Builder();
    }

    /** Collects points; {@link #build()} validates and sorts them. Not thread-safe. */
    public static final class Builder {
        private String service = "";
        private String shards = "";
        private String machine = "";
        private String date = "";
        private String commit = "";
        private final Map<Configuration, List<Point>> points = new LinkedHashMap<>();

        private Builder() {}

        public Builder service(String s) {
            this.service = s;
            return this;
        }

        /** The shards URI the profile was trained against. */
        public Builder shards(String s) {
            this.shards = s;
            return this;
        }

        /** A description of the machine (CPU, cores, pinning). */
        public Builder machine(String s) {
            this.machine = s;
            return this;
        }

        /** When it was trained (ISO-8601 recommended). */
        public Builder date(String s) {
            this.date = s;
            return this;
        }

        /** The git commit of the code trained. */
        public Builder commit(String s) {
            this.commit = s;
            return this;
        }

        /**
         * Adds one measured point of {@code configuration} (any name {@link Configuration#parse}
         * accepts), parsed here and stored as {@link #point(Configuration, Point)} does.
         *
         * @throws IllegalArgumentException if the name is not a configuration
         */
        public Builder point(String configuration, Point p) {
            return point(Configuration.parse(configuration), p);
        }

        /** Adds one measured point of {@code configuration}. */
        public Builder point(Configuration configuration, Point p) {
            Objects.requireNonNull(configuration, "configuration");
            points.computeIfAbsent(configuration, k -> new ArrayList<>()).add(Objects.requireNonNull(p, "point"));
            return this;
        }

        /**
         * The profile: points sorted by load.
         *
         * @throws IllegalArgumentException if it has no configuration, or a configuration has two
         *     points at the same load
         */
        public Profile build() {
            if (points.isEmpty()) {
                throw new IllegalArgumentException("a profile needs at least one configuration with one point");
            }
            Map<Configuration, List<Point>> m = new LinkedHashMap<>();
            points.forEach((c, l) -> {
                List<Point> sorted = new ArrayList<>(l);
                sorted.sort(Comparator.comparingDouble(Point::load));
                for (int i = 1; i < sorted.size(); i++) {
                    if (sorted.get(i).load() == sorted.get(i - 1).load()) {
                        throw new IllegalArgumentException(c + ": two points at load " + sorted.get(i).load());
                    }
                }
                m.put(c, Collections.unmodifiableList(sorted));
            });
            return new Profile(new Metadata(service, shards, machine, date, commit), Collections.unmodifiableMap(m));
        }
    }
}
