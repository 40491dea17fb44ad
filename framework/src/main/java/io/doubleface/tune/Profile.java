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
     * @param load offered load, requests per second (&gt; 0)
     * @param p50Micros median latency
     * @param p99Micros 99th percentile
     * @param p999Micros 99.9th percentile, or {@code NaN} when not measured (a p99.9 needs
     *     100,000 samples; written as {@code null})
     * @param throughput answered requests per second
     * @param cpu CPU used by the mid-tier, in cores (1.0 = one core busy)
     * @param saturated the offered load was not sustained (or p99 exploded): infeasible here
     */
    public record Point(double load, double p50Micros, double p99Micros, double p999Micros, double throughput,
            double cpu, boolean saturated) {
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
        }
    }

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
    private final Map<String, List<Point>> configurations;

    private Profile(Metadata metadata, Map<String, List<Point>> configurations) {
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

    /** Canonical configuration names, in file order. */
    public List<String> configurations() {
        return List.copyOf(configurations.keySet());
    }

    /** The points of {@code config} (canonical name), by increasing load; empty if unknown. */
    public List<Point> points(String config) {
        return configurations.getOrDefault(config, List.of());
    }

    /**
     * The highest load {@code config} sustained: the load of its last unsaturated point before
     * the first saturated one (0 if it saturated at its first point or is unknown). Loads beyond
     * the last measured point are not assumed sustainable.
     */
    public double capacity(String config) {
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
    public double p99(String config, double load) {
        List<Point> pts = points(config);
        Point below = null;
        for (Point p : pts) {
            if (p.saturated()) {
                break;
            }
            if (p.load() >= load) {
                if (below == null) {
                    return p.p99Micros();
                }
                double f = (load - below.load()) / (p.load() - below.load());
                return below.p99Micros() + f * (p.p99Micros() - below.p99Micros());
            }
            below = p;
        }
        return below == null ? Double.NaN : below.p99Micros();
    }

    /**
     * The peak-sustaining configuration: the highest {@link #capacity}, ties broken by the lower
     * p99 at that load. The adapter starts there (and the FM policy varies only its pool sizes).
     */
    public String peakSustaining() {
        String best = null;
        for (String c : configurations.keySet()) {
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
            try {
                Configuration.parse(n);
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
                    b.point(n, new Point(num(p, "load"), num(p, "p50_us"), num(p, "p99_us"), p.get("p999_us") == null ? Double.NaN : num(p, "p999_us"),
                            num(p, "throughput"), num(p, "cpu"), bool(p, "saturated")));
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

    /** The profile as a JSON document (the format {@link #parse} reads), one point per line. */
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
        for (Map.Entry<String, List<Point>> e : configurations.entrySet()) {
            b.append(firstC ? "\n" : ",\n");
            firstC = false;
            b.append("    {\"name\": ").append(Json.quote(e.getKey())).append(", \"points\": [");
            boolean firstP = true;
            for (Point p : e.getValue()) {
                b.append(firstP ? "\n" : ",\n");
                firstP = false;
                b.append("      {\"load\": ").append(num(p.load())).append(", \"p50_us\": ").append(num(p.p50Micros()))
                        .append(", \"p99_us\": ").append(num(p.p99Micros())).append(", \"p999_us\": ")
                        .append(num(p.p999Micros())).append(", \"throughput\": ").append(num(p.throughput()))
                        .append(", \"cpu\": ").append(num(p.cpu())).append(", \"saturated\": ").append(p.saturated())
                        .append('}');
            }
            b.append("\n    ]}");
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
        private final Map<String, List<Point>> points = new LinkedHashMap<>();

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
         * accepts; stored under its canonical name).
         *
         * @throws IllegalArgumentException if the name is not a configuration
         */
        public Builder point(String configuration, Point p) {
            String canonical = Configuration.parse(configuration).name();
            points.computeIfAbsent(canonical, k -> new ArrayList<>()).add(Objects.requireNonNull(p, "point"));
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
            Map<String, List<Point>> m = new LinkedHashMap<>();
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
