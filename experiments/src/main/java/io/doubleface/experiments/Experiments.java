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
 * The experiments of the DoubleFaceAD paper and of μTune by name ({@link #of}), each a list of
 * points (load settings) run under a list of configurations, plus its report; each is a class of
 * its own ({@link Concurrency}, {@link Fanout}, {@link Imbalance}, {@link Priority},
 * {@link MutuneModels}, {@link MutuneSteady}, {@link MutuneFlash}, {@link Variability}, {@link Demo}) holding its
 * points and its tables. Here: what they share. See {@code docs/experiments.md} for what each
 * reproduces and what we measured.
 */
final class Experiments {

    static final List<String> NAMES = List.of("concurrency", "fanout", "imbalance", "priority", "mutune-models",
            "mutune-steady", "mutune-flash", "variability", "demo");

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

        /**
         * The load generator's arguments of point {@code p} under configuration {@code config}
         * (default: the point's own, the same for every configuration).
         */
        default List<String> loadArgs(Point p, String config, Map<String, Object> prepared) {
            return p.loadArgs(prepared);
        }

        /**
         * Whether each run's mid-tier sample is taken when the generator's warm-up ends ({@code true})
         * or before the generator starts (default): the stage figures of {@link Variability} must not
         * include the warm-up's requests.
         */
        default boolean sampleAfterWarmup() {
            return false;
        }

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

        /**
         * Why this experiment cannot run on the running mid-tier {@code e} (an external topology), or
         * {@code null} if it can (default): e.g. it needs a mid-tier process of its own.
         */
        default String externalRefusal(ExternalTopology e) {
            return null;
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
            case "variability" -> new Variability();
            case "demo" -> new Demo();
            default -> throw new IllegalArgumentException("experiment: " + name + " (expected one of " + NAMES + ")");
        };
    }

    /**
     * The requests of a run, for report texts: {@code fanout 5, small replies} for YCSB (byte for byte
     * what the reports said before services existed), else the service and its request mix.
     */
    static String workload(ExperimentRunner.Options o) {
        ServiceSpec s = o.service();
        return s == null || s.isYcsb() ? "fanout " + fanout(o) + ", small replies"
                : s.name() + "'s requests (" + s.requests() + ")";
    }

    /** The fanout of the experiments' standard request when the mid-tier has enough shards: {@value}. */
    static final int STANDARD_FANOUT = 5;

    /**
     * The fanout of the standard request (warm-up, capacity, the open-loop experiments' requests):
     * {@value #STANDARD_FANOUT}, or the shard count if smaller (an external mid-tier over 4 shards).
     */
    static int fanout(ExperimentRunner.Options o) {
        return o.shards() > 0 ? Math.min(STANDARD_FANOUT, o.shards()) : STANDARD_FANOUT;
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

    /** Measured seconds of a run: {@code --duration} if given, else {@code quick} or {@code full}. */
    static double measuredSeconds(ExperimentRunner.Options o, double quick, double full) {
        return o.duration() != null ? o.duration().toMillis() / 1000.0 : o.quick() ? quick : full;
    }

    static <T> List<T> or(List<T> given, List<T> dflt) {
        return given != null ? given : dflt;
    }

    /** Closed-loop capacity (fanout {@link #fanout}, small) of {@code config}, measured with 64 users. */
    static double capacity(Topology t, ExperimentRunner.Options o, String config, PrintWriter out) throws IOException {
        t.switchTo(config);
        Duration d = Duration.ofMillis(o.quick() ? 1500 : 4000);
        Topology.LoadRun lr = t.load("capacity " + config, List.of("--users", "64", "--url", query(fanout(o), "small"), "--keys",
                Long.toString(o.records()), "--warmup", "1s", "--duration", d.toMillis() + "ms"), d.plusSeconds(60));
        double cap = lr.number("throughput_rps");
        out.printf(Locale.ROOT, "experiment: closed-loop capacity of %s (64 users, fanout %d, small): %.0f req/s%n",
                config, fanout(o), cap);
        out.flush();
        return cap;
    }

    /** {@code serve --prepare} of the run's static configurations (a load-adapter mid-tier builds them at start). */
    static List<String> prepareStatic(List<String> configs) {
        return staticConfigs(configs).isEmpty() ? List.of() : List.of("--prepare", String.join(",", staticConfigs(configs)));
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

    /** Samples a run needs for a reportable p99, with a margin: {@value}. */
    static final int MIN_P99_SAMPLES = 11_000;

    /** Loads as fractions of doubleface's capacity for the steady experiment: up, then down. */
    static final List<Double> STEADY = List.of(0.1, 0.3, 0.5, 0.7, 0.85, 0.7, 0.5, 0.3, 0.1);
    static final List<Double> STEADY_QUICK = List.of(0.2, 0.6, 0.2);
}
