package io.doubleface.experiments;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The experiments of the DoubleFaceAD paper, each a list of points (load settings) run under a
 * list of configurations, plus its report. See {@code docs/experiments.md} for what each
 * reproduces and what we measured.
 */
final class Experiments {

    static final List<String> NAMES = List.of("concurrency", "fanout", "imbalance", "priority", "mutune-models",
            "mutune-steady", "mutune-flash", "demo");

    /** μTune's taxonomy plus DoubleFace with and without busy-poll: what mutune-models (and train) profile. */
    static final List<String> TAXONOMY = List.of("doubleface", "doubleface-poll", "sib", "sip", "sdb", "sdp", "aib",
            "aip", "adb", "adp");

    /** The five models, one configuration each, as the paper compares them. */
    static final List<String> FIVE_MODELS = List.of("doubleface", "type2a-1f1b", "type2b", "type1-32", "thread-64");

    private Experiments() {}

    /** One load setting; its arguments may depend on what {@link Experiment#prepare} measured. */
    record Point(String label, Map<String, Object> params, Function<Map<String, Object>, List<String>> args) {
        List<String> loadArgs(Map<String, Object> prepared) {
            return args.apply(prepared);
        }
    }

    interface Experiment {
        List<String> defaultConfigs(ExperimentRunner.Options o);

        List<Point> points(ExperimentRunner.Options o);

        /** Measured seconds of one run. */
        double runSeconds(ExperimentRunner.Options o);

        /** Measured seconds of a run of {@code p} (default: {@link #runSeconds(ExperimentRunner.Options)}). */
        default double runSeconds(ExperimentRunner.Options o, Point p, Map<String, Object> prepared) {
            return runSeconds(o);
        }

        default int defaultReplyWorkMicros() {
            return 0;
        }

        /**
         * Per-run warm-up unless {@code --warmup} (or {@code --quick}) says otherwise: 1 s, and
         * {@link #OPEN_LOOP_WARMUP} for open-loop experiments.
         */
        default Duration defaultWarmup() {
            return Duration.ofSeconds(1);
        }

        /** Runs before the points (e.g. finds capacity to set an open-loop rate); its result goes to every point. */
        default Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
            return Map.of();
        }

        /** Extra {@code serve ycsb} arguments of the mid-tier (e.g. {@code --prepare} for the adapter). */
        default List<String> serveArgs(ExperimentRunner.Options o, List<String> configs) {
            return List.of();
        }

        /** Extra {@code serve ycsb} arguments of load-adapter mid-tiers ({@code --config adaptive} etc.). */
        default List<String> adapterArgs(ExperimentRunner.Options o, List<String> configs) {
            return o.profile() == null ? List.of() : List.of("--profile", o.profile().toString());
        }

        /** What the experiment is, for the report's head. */
        String title();

        String description(ExperimentRunner.Options o);

        void report(Report r) throws IOException;
    }

    /**
     * Warm-up of an open-loop run: {@value #OPEN_LOOP_WARMUP_SECONDS} s. Each run is a fresh generator
     * JVM, whose first ~2 s (class loading, C1, a connection storm while it is slow) put p99s of
     * hundreds of ms into a 5-s step after a 1-s warm-up: measured at 4,730 req/s on 2026-11-24 (p99
     * 189 ms, 2,048 connections; 5.9 ms with 3 s).
     */
    static final long OPEN_LOOP_WARMUP_SECONDS = 3;
    static final Duration OPEN_LOOP_WARMUP = Duration.ofSeconds(OPEN_LOOP_WARMUP_SECONDS);

    static Experiment of(String name) {
        return switch (name) {
            case "concurrency" -> new Concurrency();
            case "fanout" -> new Fanout();
            case "imbalance" -> new Imbalance();
            case "priority" -> new Priority();
            case "mutune-models" -> new MutuneModels();
            case "mutune-steady" -> new MutuneSteady();
            case "mutune-flash" -> new MutuneFlash();
            case "demo" -> new Demo();
            default -> throw new IllegalArgumentException("experiment: " + name + " (expected one of " + NAMES + ")");
        };
    }

    static String query(int fanout, String size) {
        return "/query?fanout=" + fanout + "&size=" + size + "&key={key}";
    }

    static Map<String, Object> params(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static <T> List<T> or(List<T> given, List<T> dflt) {
        return given != null ? given : dflt;
    }

    /** Paper Fig. 4/5: throughput and latency vs concurrency, closed loop, fanout 5. */
    static final class Concurrency implements Experiment {
        @Override
        public List<String> defaultConfigs(ExperimentRunner.Options o) {
            return FIVE_MODELS;
        }

        @Override
        public List<Point> points(ExperimentRunner.Options o) {
            List<Point> ps = new ArrayList<>();
            int fanout = o.fanouts() != null ? o.fanouts().get(0) : 5;
            for (String size : or(o.sizes(), List.of("small", "large"))) {
                for (int c : or(o.concurrency(), o.quick() ? List.of(1, 16, 128) : List.of(1, 4, 16, 64, 256, 1024))) {
                    ps.add(new Point(size + " c=" + c, params("size", size, "concurrency", c, "fanout", fanout),
                            p -> List.of("--users", Integer.toString(c), "--url", query(fanout, size))));
                }
            }
            return ps;
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o) {
            return o.duration() != null ? o.duration().toMillis() / 1000.0 : o.quick() ? 1.5 : 4;
        }

        @Override
        public String title() {
            return "Throughput and latency vs concurrency (paper Fig. 4/5)";
        }

        @Override
        public String description(ExperimentRunner.Options o) {
            return "Closed loop (N users, zero think time), fanout 5, small (0.1 kB) and large (20 kB) shard replies. "
                    + "Latency here is closed-loop latency (each user waits for its answer), not an open-loop p99.";
        }

        @Override
        public void report(Report r) throws IOException {
            for (String size : r.distinct("size")) {
                List<Point> pts = r.points(p -> size.equals(p.params().get("size")));
                r.heading("Size " + size + ": throughput (req/s, median of repeats; spread min–max)");
                r.metricTable(pts, "concurrency", "throughput_rps", "%.0f");
                r.heading("Size " + size + ": closed-loop p99 latency (ms)");
                r.metricTable(pts, "concurrency", "p99_ms", "%.2f");
                r.heading("Size " + size + ": mid-tier context switches per request");
                r.midTable(pts, "concurrency", d -> d.switchesPerRequest(), "%.3f");
                r.heading("Size " + size + ": mid-tier CPU µs per request");
                r.midTable(pts, "concurrency", d -> d.cpuMicrosPerRequest(), "%.1f");
                r.plot(pts, "concurrency", "throughput_rps", true, false, "concurrency-" + size + "-throughput.png",
                        "Throughput vs concurrency, fanout 5, " + size, "concurrent users (closed loop)", "requests/s");
                r.plot(pts, "concurrency", "p99_ms", true, true, "concurrency-" + size + "-p99.png",
                        "Closed-loop p99 vs concurrency, fanout 5, " + size, "concurrent users (closed loop)", "p99 (ms)");
            }
        }
    }

    /** Paper Fig. 7/13: throughput vs fanout, normalized to doubleface. */
    static final class Fanout implements Experiment {
        @Override
        public List<String> defaultConfigs(ExperimentRunner.Options o) {
            return FIVE_MODELS;
        }

        @Override
        public List<Point> points(ExperimentRunner.Options o) {
            List<Point> ps = new ArrayList<>();
            for (String size : or(o.sizes(), List.of("small", "large"))) {
                for (int c : or(o.concurrency(), o.quick() ? List.of(20) : List.of(20, 100))) {
                    for (int f : or(o.fanouts(), o.quick() ? List.of(1, 5, 20) : List.of(1, 2, 5, 10, 20))) {
                        ps.add(new Point(size + " c=" + c + " k=" + f, params("size", size, "concurrency", c, "fanout", f),
                                p -> List.of("--users", Integer.toString(c), "--url", query(f, size))));
                    }
                }
            }
            return ps;
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o) {
            return o.duration() != null ? o.duration().toMillis() / 1000.0 : o.quick() ? 1.5 : 3;
        }

        @Override
        public String title() {
            return "Throughput vs fanout, normalized to doubleface (paper Fig. 7/13)";
        }

        @Override
        public String description(ExperimentRunner.Options o) {
            return "Closed loop at concurrency 20 and 100, fanout 1…20, small (0.1 kB) and large (20 kB) shard replies. "
                    + "Ratios are per repeat (each configuration against doubleface in the same pass), then the median.";
        }

        @Override
        public void report(Report r) throws IOException {
            for (String size : r.distinct("size")) {
                for (String c : r.distinct("concurrency")) {
                    List<Point> pts = r.points(p -> size.equals(p.params().get("size"))
                            && c.equals(String.valueOf(p.params().get("concurrency"))));
                    if (pts.isEmpty()) {
                        continue;
                    }
                    r.heading("Size " + size + ", concurrency " + c + ": throughput (req/s)");
                    r.metricTable(pts, "fanout", "throughput_rps", "%.0f");
                    String ref = r.reference("doubleface");
                    r.heading("Size " + size + ", concurrency " + c + ": throughput relative to " + ref);
                    r.ratioTable(pts, "fanout", "throughput_rps", ref);
                    r.ratioPlot(pts, "fanout", "throughput_rps", ref, "fanout-" + size + "-c" + c + ".png",
                            "Throughput / " + ref + "'s, " + size + " replies, " + c + " users", "fanout");
                    r.heading("Size " + size + ", concurrency " + c + ": mid-tier context switches per request");
                    r.midTable(pts, "fanout", d -> d.switchesPerRequest(), "%.2f");
                    r.heading("Size " + size + ", concurrency " + c + ": mid-tier CPU µs per request");
                    r.midTable(pts, "fanout", d -> d.cpuMicrosPerRequest(), "%.1f");
                }
            }
        }
    }

    /** Paper Tables 1–3: Type-2a with 1 frontend + 1/2/4 backend loops vs doubleface. */
    static final class Imbalance implements Experiment {
        @Override
        public List<String> defaultConfigs(ExperimentRunner.Options o) {
            return List.of("type2a-1f1b", "type2a-1f2b", "type2a-1f4b", "doubleface");
        }

        @Override
        public List<Point> points(ExperimentRunner.Options o) {
            int c = o.concurrency() != null ? o.concurrency().get(0) : 100;
            int f = o.fanouts() != null ? o.fanouts().get(0) : 5;
            String size = o.sizes() != null ? o.sizes().get(0) : "small";
            return List.of(new Point(size + " c=" + c + " k=" + f, params("size", size, "concurrency", c, "fanout", f),
                    p -> List.of("--users", Integer.toString(c), "--url", query(f, size))));
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o) {
            return o.duration() != null ? o.duration().toMillis() / 1000.0 : o.quick() ? 2 : 8;
        }

        @Override
        public String title() {
            return "Load imbalance between frontend and backend loops (paper Tables 1–3)";
        }

        @Override
        public String description(ExperimentRunner.Options o) {
            return "Closed loop, fanout 5, small replies. Wake-ups are event-loop returns from epoll_wait with work "
                    + "(LoopStats); events per wake-up = I/O events + tasks handled per wake-up. 'io' loops are the "
                    + "frontends (and everything under doubleface), 't2a-be' the Type-2a backend loops.";
        }

        @Override
        public void report(Report r) throws IOException {
            r.imbalanceTable();
        }
    }

    /** Paper Fig. 15: completion-first vs fifo reply scheduling, open loop, Lfan/Sfan mixes. */
    static final class Priority implements Experiment {
        @Override
        public Duration defaultWarmup() {
            return OPEN_LOOP_WARMUP;
        }

        static final List<int[]> MIXES = List.of(new int[] {5, 3}, new int[] {7, 1});

        @Override
        public List<String> defaultConfigs(ExperimentRunner.Options o) {
            return List.of("doubleface-cf", "doubleface-cfa", "doubleface-fifo", "type2a-1f1b", "type2b");
        }

        @Override
        public int defaultReplyWorkMicros() {
            return 200;
        }

        static String mixLabel(int[] m) {
            return m[0] + "/" + m[1];
        }

        static String mix(int[] m) {
            return "50:" + query(m[0], "small") + ",50:" + query(m[1], "small");
        }

        @Override
        public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
            Map<String, Object> rates = new LinkedHashMap<>();
            Duration d = Duration.ofMillis(o.quick() ? 1500 : 5000);
            t.switchTo("doubleface-fifo");
            for (int[] m : MIXES) {
                Topology.LoadRun lr = t.load("capacity " + mixLabel(m), List.of("--users", "64", "--mix", mix(m),
                        "--keys", Long.toString(o.records()), "--warmup", "1s", "--duration", d.toMillis() + "ms"),
                        d.plusSeconds(60));
                double cap = lr.number("throughput_rps");
                double rate = Math.max(10, Math.round(cap * o.loadFraction()));
                out.printf(Locale.ROOT, "experiment: capacity of doubleface-fifo with Lfan/Sfan %s: %.0f req/s; "
                        + "open loop at %.0f%% = %.0f req/s%n", mixLabel(m), cap, o.loadFraction() * 100, rate);
                rates.put(mixLabel(m), Map.of("capacity_rps", Math.round(cap), "rate_rps", rate));
            }
            return rates;
        }

        @Override
        public List<Point> points(ExperimentRunner.Options o) {
            List<Point> ps = new ArrayList<>();
            for (int[] m : MIXES) {
                String label = mixLabel(m);
                ps.add(new Point("Lfan/Sfan " + label, params("mix", label), prepared -> {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> r = (Map<String, Object>) prepared.get(label);
                    return List.of("--rate", String.valueOf(((Number) r.get("rate_rps")).longValue()), "--mix", mix(m),
                            "--max-connections", "2048");
                }));
            }
            return ps;
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o) {
            return o.duration() != null ? o.duration().toMillis() / 1000.0 : o.quick() ? 4 : 20;
        }

        @Override
        public String title() {
            return "Completion-first reply scheduling vs FIFO (paper Fig. 15)";
        }

        @Override
        public String description(ExperimentRunner.Options o) {
            return "Open loop (Poisson arrivals, latency from the intended send time) with a 50/50 mix of a large-fanout "
                    + "and a small-fanout query (Lfan/Sfan 5/3 and 7/1), small replies, per-reply CPU work in the "
                    + "mid-tier (--reply-work-us), offered load a fixed fraction of doubleface-fifo's closed-loop "
                    + "capacity with the same mix. doubleface-cf processes each loop iteration's replies in "
                    + "completion-first order (requests closest to completion first), doubleface-fifo in arrival order.";
        }

        @Override
        public void report(Report r) throws IOException {
            r.priorityTables();
        }
    }

    /** A short tour: every model, a closed-loop and an open-loop run, separate pinned processes. */
    static final class Demo implements Experiment {
        @Override
        public List<String> defaultConfigs(ExperimentRunner.Options o) {
            return FIVE_MODELS;
        }

        @Override
        public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
            double min = Double.MAX_VALUE;
            List<String> configs = o.configs() != null ? o.configs() : FIVE_MODELS;
            for (String c : configs) {
                t.switchTo(c);
                Topology.LoadRun lr = t.load("capacity " + c, List.of("--users", "16", "--url", query(5, "small"),
                        "--keys", Long.toString(o.records()), "--warmup", "500ms", "--duration",
                        (o.quick() ? 1000 : 2000) + "ms"), Duration.ofSeconds(60));
                min = Math.min(min, lr.number("throughput_rps"));
            }
            double rate = Math.max(10, Math.round(min * 0.5));
            out.printf(Locale.ROOT, "experiment: lowest capacity %.0f req/s; open loop at 50%% = %.0f req/s%n", min, rate);
            return Map.of("rate_rps", rate, "lowest_capacity_rps", Math.round(min));
        }

        @Override
        public List<Point> points(ExperimentRunner.Options o) {
            return List.of(
                    new Point("closed c=16", params("mode", "closed", "concurrency", 16, "fanout", 5),
                            p -> List.of("--users", "16", "--url", query(5, "small"))),
                    new Point("open 50%", params("mode", "open", "fanout", 5),
                            p -> List.of("--rate", String.valueOf(((Number) p.get("rate_rps")).longValue()), "--url",
                                    query(5, "small"))));
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o) {
            return o.duration() != null ? o.duration().toMillis() / 1000.0 : o.quick() ? 1.5 : 5;
        }

        @Override
        public String title() {
            return "A short tour of the five models";
        }

        @Override
        public String description(ExperimentRunner.Options o) {
            return "Fanout 5, small replies: a closed-loop run (16 users) for capacity and an open-loop run at half "
                    + "the lowest capacity for latency.";
        }

        @Override
        public void report(Report r) throws IOException {
            r.heading("Closed loop (16 users) and open loop (50% of the lowest capacity)");
            r.demoTable();
        }
    }

    /** Closed-loop capacity (fanout 5, small) of {@code config}, measured with 64 users. */
    static double capacity(Topology t, ExperimentRunner.Options o, String config, PrintWriter out) throws IOException {
        t.switchTo(config);
        Duration d = Duration.ofMillis(o.quick() ? 1500 : 4000);
        Topology.LoadRun lr = t.load("capacity " + config, List.of("--users", "64", "--url", query(5, "small"), "--keys",
                Long.toString(o.records()), "--warmup", "1s", "--duration", d.toMillis() + "ms"), d.plusSeconds(60));
        double cap = lr.number("throughput_rps");
        out.printf(Locale.ROOT, "experiment: closed-loop capacity of %s (64 users, fanout 5, small): %.0f req/s%n",
                config, cap);
        out.flush();
        return cap;
    }

    /** The configurations a load-adapter mid-tier should build at start: the static ones of the run. */
    static List<String> staticConfigs(List<String> configs) {
        List<String> out = new ArrayList<>();
        for (String c : configs) {
            if (!Topology.isAdapter(c) && c.indexOf('@') < 0) {
                out.add(c);
            }
        }
        return out;
    }

    /**
     * μTune Fig. 8/11: open-loop p99 vs offered load for each configuration of the taxonomy; the
     * same runs are the training data of {@code doubleface train} (a profile is written next to the
     * report).
     */
    static final class MutuneModels implements Experiment {
        @Override
        public Duration defaultWarmup() {
            return OPEN_LOOP_WARMUP;
        }

        static final List<Double> FRACTIONS = List.of(0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 1.0);
        static final List<Double> QUICK_FRACTIONS = List.of(0.1, 0.4, 0.7, 0.95);

        @Override
        public List<String> defaultConfigs(ExperimentRunner.Options o) {
            return o.quick() ? List.of("doubleface", "sip", "sdb", "adb") : TAXONOMY;
        }

        @Override
        public List<String> serveArgs(ExperimentRunner.Options o, List<String> configs) {
            return staticConfigs(configs).isEmpty() ? List.of() : List.of("--prepare", String.join(",", staticConfigs(configs)));
        }

        @Override
        public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
            Map<String, Object> m = new LinkedHashMap<>();
            if (o.loads() == null) {
                m.put("capacity_rps", Math.round(capacity(t, o, "doubleface", out)));
            }
            return m;
        }

        @Override
        public List<Point> points(ExperimentRunner.Options o) {
            List<Point> ps = new ArrayList<>();
            if (o.loads() != null) {
                for (double l : o.loads()) {
                    long rate = Math.round(l);
                    ps.add(new Point("load " + rate, params("load", rate), p -> openArgs(rate)));
                }
                return ps;
            }
            for (double f : o.quick() ? QUICK_FRACTIONS : FRACTIONS) {
                ps.add(new Point(String.format(Locale.ROOT, "load %.2f", f), params("fraction", f),
                        p -> openArgs(rate(f, p))));
            }
            return ps;
        }

        static long rate(double fraction, Map<String, Object> prepared) {
            return Math.max(10, Math.round(fraction * ((Number) prepared.get("capacity_rps")).doubleValue()));
        }

        /**
         * At least the experiment's run time, and long enough for {@link #MIN_P99_SAMPLES} samples
         * at the point's rate: a p99 needs 100/(1-0.99) = 10,000 (MEASURE.md rule 4).
         */
        @Override
        public double runSeconds(ExperimentRunner.Options o, Point p, Map<String, Object> prepared) {
            Object load = p.params().get("load");
            double rate = load != null ? ((Number) load).doubleValue()
                    : rate(((Number) p.params().get("fraction")).doubleValue(), prepared);
            return Math.max(runSeconds(o), Math.ceil(MIN_P99_SAMPLES / rate));
        }

        static List<String> openArgs(long rate) {
            return List.of("--rate", Long.toString(rate), "--url", query(5, "small"), "--max-connections", "2048");
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o) {
            return o.duration() != null ? o.duration().toMillis() / 1000.0 : o.quick() ? 2 : 5;
        }

        @Override
        public String title() {
            return "p99 vs load for each threading configuration (μTune Fig. 8/11)";
        }

        @Override
        public String description(ExperimentRunner.Options o) {
            return "Open loop (Poisson arrivals, latency from the intended send time), fanout 5, small replies, offered "
                    + "load a fraction of doubleface's closed-loop capacity (or --loads). μTune's taxonomy: s/a = "
                    + "synchronous/asynchronous, i/d = in-line/dispatch, b/p = block/poll (docs/models.md). A run is "
                    + "saturated when it answered less than 95% of the offered load, more than 0.1% failed, or its p99 "
                    + "exploded in every repeat (over 20 ms and 10x its lowest). The "
                    + "profile built from these runs (profile.json) is what `doubleface train` writes.";
        }

        @Override
        public void report(Report r) throws IOException {
            r.mutuneModelsTables();
        }
    }

    /** Samples a run needs for a reportable p99, with a margin: {@value}. */
    static final int MIN_P99_SAMPLES = 11_000;

    /** Loads as fractions of doubleface's capacity for the steady experiment: up, then down. */
    static final List<Double> STEADY = List.of(0.1, 0.3, 0.5, 0.7, 0.85, 0.7, 0.5, 0.3, 0.1);
    static final List<Double> STEADY_QUICK = List.of(0.2, 0.6, 0.2);

    /**
     * μTune Fig. 14: loads stepping up then down in one open-loop run; p99 per step for every
     * static configuration, the baselines and {@code adaptive}, and what the adapter chose.
     */
    static final class MutuneSteady implements Experiment {
        @Override
        public Duration defaultWarmup() {
            return OPEN_LOOP_WARMUP;
        }

        @Override
        public List<String> defaultConfigs(ExperimentRunner.Options o) {
            return o.quick() ? List.of("doubleface", "sip", "adaptive")
                    : List.of("doubleface", "doubleface-poll", "sip", "sdb", "adb", "fm", "adaptive-window", "adaptive");
        }

        @Override
        public List<String> serveArgs(ExperimentRunner.Options o, List<String> configs) {
            return staticConfigs(configs).isEmpty() ? List.of() : List.of("--prepare", String.join(",", staticConfigs(configs)));
        }

        @Override
        public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
            return Map.of("capacity_rps", Math.round(capacity(t, o, "doubleface", out)));
        }

        static double stepSeconds(ExperimentRunner.Options o) {
            return o.duration() != null ? o.duration().toMillis() / 1000.0 : o.quick() ? 3 : 6;
        }

        /** A step lasts at least stepSeconds, and 1 s more than MIN_P99_SAMPLES need at its rate. */
        static long stepMillis(ExperimentRunner.Options o, long rate) {
            return Math.round(1000 * Math.max(stepSeconds(o), 1 + Math.ceil((double) MIN_P99_SAMPLES / rate)));
        }

        static List<Long> rates(ExperimentRunner.Options o, Map<String, Object> prepared) {
            List<Long> out = new ArrayList<>();
            if (o.loads() != null) { // --loads: the steps as given (e.g. within a profile's trained range)
                for (double l : o.loads()) {
                    out.add(Math.round(l));
                }
                return out;
            }
            double cap = ((Number) prepared.get("capacity_rps")).doubleValue();
            for (double f : fractions(o)) {
                out.add(Math.max(10, Math.round(f * cap)));
            }
            return out;
        }

        static List<Double> fractions(ExperimentRunner.Options o) {
            return o.quick() ? STEADY_QUICK : STEADY;
        }

        @Override
        public List<Point> points(ExperimentRunner.Options o) {
            return List.of(new Point("steps", params("fractions", fractions(o)), p -> {
                StringBuilder sched = new StringBuilder("steps:");
                for (long rate : rates(o, p)) {
                    sched.append(sched.length() > 6 ? "," : "").append(rate).append('@').append(stepMillis(o, rate))
                            .append("ms");
                }
                return List.of("--schedule", sched.toString(), "--url", query(5, "small"), "--max-connections", "2048");
            }));
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o) {
            return stepSeconds(o) * (o.loads() != null ? o.loads().size() : fractions(o).size());
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o, Point p, Map<String, Object> prepared) {
            long ms = 0;
            for (long rate : rates(o, prepared)) {
                ms += stepMillis(o, rate);
            }
            return ms / 1000.0;
        }

        @Override
        public String title() {
            return "Steady loads stepping up and down: static configurations vs the load adapter (μTune Fig. 14)";
        }

        @Override
        public String description(ExperimentRunner.Options o) {
            return "One open-loop run per configuration whose offered load steps through fractions of doubleface's "
                    + "closed-loop capacity, up then down; fanout 5, small replies; each step long enough for 10,000 "
                    + "samples. p99 per step from the 1-s interval logs, the first second of each step left out (the "
                    + "switch transient is in the flash experiment). "
                    + "adaptive = μTune's policy over the trained profile (ring-buffer detector); adaptive-window = the "
                    + "same with a 5 ms time-window detector; fm = only the pool sizes of the peak-sustaining "
                    + "configuration vary. Each adapter runs in its own mid-tier process (docs/tuning.md).";
        }

        @Override
        public void report(Report r) throws IOException {
            r.steadyTables();
        }
    }

    /** μTune Table 2: a flash crowd: 100 req/s, a second near capacity, 100 req/s. */
    static final class MutuneFlash implements Experiment {
        @Override
        public Duration defaultWarmup() {
            return OPEN_LOOP_WARMUP;
        }

        @Override
        public List<String> defaultConfigs(ExperimentRunner.Options o) {
            return o.quick() ? List.of("doubleface", "adaptive") : List.of("doubleface", "sip", "fm", "adaptive");
        }

        @Override
        public List<String> serveArgs(ExperimentRunner.Options o, List<String> configs) {
            return staticConfigs(configs).isEmpty() ? List.of() : List.of("--prepare", String.join(",", staticConfigs(configs)));
        }

        @Override
        public Map<String, Object> prepare(Topology t, ExperimentRunner.Options o, PrintWriter out) throws IOException {
            if (o.loads() != null) { // --loads SPIKE: the spike's rate as given, no capacity run
                long spike = Math.round(o.loads().get(0));
                out.printf(Locale.ROOT, "experiment: spike at %d req/s (--loads)%n", spike);
                return params("capacity_rps", null, "spike_rps", spike);
            }
            double cap = capacity(t, o, "doubleface", out);
            return params("capacity_rps", Math.round(cap), "spike_rps", Math.round(cap * 0.9));
        }

        static long calmMillis(ExperimentRunner.Options o) {
            return o.duration() != null ? o.duration().toMillis() : o.quick() ? 5000 : 30_000;
        }

        @Override
        public List<Point> points(ExperimentRunner.Options o) {
            long calm = calmMillis(o);
            return List.of(new Point("flash", params("calm_ms", calm, "spike_ms", 1000), p -> List.of("--schedule",
                    "flash:100@" + calm + "ms," + p.get("spike_rps") + "@1s,100@" + calm + "ms", "--url",
                    query(5, "small"), "--max-connections", "4096")));
        }

        @Override
        public double runSeconds(ExperimentRunner.Options o) {
            return (2 * calmMillis(o) + 1000) / 1000.0;
        }

        @Override
        public String title() {
            return "Flash crowd: 100 req/s, one second near capacity, 100 req/s (μTune Table 2)";
        }

        @Override
        public String description(ExperimentRunner.Options o) {
            return "Open loop: 100 req/s, then 90% of doubleface's closed-loop capacity for 1 s, then 100 req/s; fanout "
                    + "5, small replies. Per configuration: latency before, during and after the spike from the 1-s "
                    + "interval logs, the worst request, the time until p99 is back within 1.5x of its pre-spike "
                    + "value, errors, and the adapter's switches.";
        }

        @Override
        public void report(Report r) throws IOException {
            r.flashTables();
        }
    }
}
