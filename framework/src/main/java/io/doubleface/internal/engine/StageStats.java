package io.doubleface.internal.engine;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Per-stage service times of traced requests, per configuration, aggregated as the variability
 * paper does (WWW'19): running sums of X and X² (mean, variance, squared coefficient of variation
 * C² = variance / mean²) and an HdrHistogram per stage for percentiles. Recording is wait-free
 * ({@link LongAdder}, {@link DoubleAdder}, HdrHistogram's {@link Recorder}); reading takes an
 * interval histogram and adds it to a cumulative one, so nothing is ever reset under a writer.
 *
 * <p>Which requests are traced: one in {@link #every()} (1 = all), decided when the request is
 * admitted ({@link #sample}); 0 = tracing off, and then nothing is recorded or allocated.
 */
public final class StageStats {

    /** The stages of a request, each the time between two points of {@link FanoutExchange}'s life. */
    public enum Stage {
        /** Admission to the start of the plan: the hop to the thread that plans (pool queue, loop task). */
        QUEUE("queue"),
        /** The service's {@code plan} (and the sends the models do inside it). */
        PLAN("plan"),
        /**
         * End of the plan to the first reply's arrival at the mid-tier thread that receives it (the
         * driver's listener): send and flush, network, shard, and the reply's read and decode.
         */
        ROUND_TRIP("round_trip"),
        /**
         * The first reply's arrival to its outcome handled: the wait for the thread that runs
         * {@code onReply} (the DoubleFace tail batch at the end of the loop iteration, a Type-2b
         * worker) and that {@code onReply}.
         */
        REPLY_WAIT("reply_wait"),
        /** First to last reply handled (the fanout's spread: the slowest shard). */
        LAST_REPLY("last_reply"),
        /** Last reply handled to the end of the merge: the hop to the merging thread and {@code merge}. */
        MERGE("merge"),
        /**
         * End of the merge to the answer taken by the upstream connection: on the connection's loop
         * (where every model but the thread models merges) the response's encode, write and flush;
         * from another thread the hand-over to that loop.
         */
        RESPOND("respond"),
        /** Admission to the end of {@link #RESPOND}: the whole request in the server after its decode. */
        TOTAL("total");

        private final String label;

        Stage(String label) {
            this.label = label;
        }

        /** {@return the name in {@code /admin/stats}} */
        public String label() {
            return label;
        }
    }

    /** Most microseconds a stage histogram keeps (60 s); longer values are clamped. */
    static final long MAX_MICROS = 60_000_000L;
    /** Significant decimal digits of the stage histograms (percentiles within ~1 %). */
    static final int DIGITS = 2;

    private volatile int every;
    private final Map<String, Config> configs = new ConcurrentHashMap<>();

    /** One configuration's stages. */
    static final class Config {
        final EnumMap<Stage, One> stages = new EnumMap<>(Stage.class);

        Config() {
            for (Stage s : Stage.values()) {
                stages.put(s, new One());
            }
        }
    }

    /**
     * One stage: sums and a histogram, in microseconds. The histograms have a fixed range (1 µs to
     * {@link #MAX_MICROS}, two significant digits: ~1 %; ~120 KB per stage with its recorder) rather
     * than HdrHistogram's auto-resizing ones: a fresh auto-resizing histogram grows by catching an
     * index-out-of-bounds exception on the recording thread (the I/O loop), a path compiled code has
     * not seen. With a fixed range, recording never takes a new path, after a {@link #reset} either.
     */
    static final class One {
        final LongAdder n = new LongAdder();
        final DoubleAdder sum = new DoubleAdder();
        final DoubleAdder sumSq = new DoubleAdder();
        final Recorder recorder = new Recorder(1, MAX_MICROS, DIGITS);
        private Histogram cumulative; // guarded by this
        private Histogram interval;   // guarded by this

        void record(long nanos) {
            double us = Math.max(0, nanos) / 1000.0;
            n.increment();
            sum.add(us);
            sumSq.add(us * us);
            recorder.recordValue(Math.min(MAX_MICROS, Math.max(0, nanos / 1000)));
        }

        synchronized Histogram snapshot() {
            interval = recorder.getIntervalHistogram(interval);
            if (cumulative == null) {
                cumulative = new Histogram(1, MAX_MICROS, DIGITS);
            }
            cumulative.add(interval);
            return cumulative.copy();
        }

        /** Forgets what was recorded, keeping every histogram (the writers' path does not change). */
        synchronized void reset() {
            recorder.reset();
            if (cumulative != null) {
                cumulative.reset();
            }
            n.reset();
            sum.reset();
            sumSq.reset();
        }
    }

    /** @param every trace one request in {@code every} (1 = all, 0 = off) */
    public StageStats(int every) {
        every(every);
    }

    /** Traces one request in {@code every} from now on (1 = all, 0 = off). */
    public void every(int every) {
        if (every < 0) {
            throw new IllegalArgumentException("trace-stages: one in " + every + " (expected: 0 = off, 1 = all, N)");
        }
        this.every = every;
    }

    /**
     * Forgets every figure gathered so far, so that the next {@link #snapshot} covers only what is
     * recorded from now on (one window). A request being recorded at this moment may be counted in
     * one stage's old figures and another's new ones. Counters read from the figures (the
     * {@code /metrics} summaries) restart from zero, which Prometheus treats as a counter reset.
     * The histograms are emptied in place, not replaced: the recording path stays the one the JIT
     * compiled, so a reset does not stall a warm server.
     */
    public void reset() {
        for (Config c : configs.values()) {
            for (One one : c.stages.values()) {
                one.reset();
            }
        }
    }

    /** {@return one request in how many is traced; 0 = off} */
    public int every() {
        return every;
    }

    /**
     * Reads the command-line and {@code /admin/knobs} form of a tracing rate: {@code off} → 0,
     * {@code all} → 1, {@code sampled:N} → N (N ≥ 1), case-insensitive.
     *
     * @param spec the text
     * @return one request in how many to trace; 0 = off
     * @throws IllegalArgumentException naming the text and the expected forms
     */
    public static int parseEvery(String spec) {
        String s = spec.strip().toLowerCase(java.util.Locale.ROOT);
        if (s.equals("off")) {
            return 0;
        }
        if (s.equals("all")) {
            return 1;
        }
        if (s.startsWith("sampled:")) {
            try {
                int n = Integer.parseInt(s.substring("sampled:".length()));
                if (n >= 1) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // below
            }
        }
        throw new IllegalArgumentException("'" + spec + "' (expected: off, all or sampled:N, N >= 1)");
    }

    /** {@return {@code every} in the form {@link #parseEvery} reads: off, all or sampled:N} */
    public static String formatEvery(int every) {
        return every == 0 ? "off" : every == 1 ? "all" : "sampled:" + every;
    }

    /** Whether to trace the request being admitted now. */
    boolean sample() {
        int e = every;
        return e == 1 || (e > 1 && java.util.concurrent.ThreadLocalRandom.current().nextInt(e) == 0);
    }

    /** Records a finished traced request's stages (nanosecond points; 0 = the point was not reached). */
    void record(String config, long admitted, long planStart, long planEnd, long firstArrival, long firstReply,
            long lastReply, long mergeEnd, long answered) {
        Config c = configs.computeIfAbsent(config, k -> new Config());
        if (planStart != 0) {
            c.stages.get(Stage.QUEUE).record(planStart - admitted);
        }
        if (planEnd != 0 && planStart != 0) {
            c.stages.get(Stage.PLAN).record(planEnd - planStart);
        }
        if (firstArrival != 0 && planEnd != 0) {
            c.stages.get(Stage.ROUND_TRIP).record(firstArrival - planEnd);
        }
        if (firstReply != 0 && firstArrival != 0) {
            c.stages.get(Stage.REPLY_WAIT).record(firstReply - firstArrival);
        }
        if (lastReply != 0 && firstReply != 0) {
            c.stages.get(Stage.LAST_REPLY).record(lastReply - firstReply);
        }
        if (mergeEnd != 0 && lastReply != 0) {
            c.stages.get(Stage.MERGE).record(mergeEnd - lastReply);
        }
        if (mergeEnd != 0) {
            c.stages.get(Stage.RESPOND).record(answered - mergeEnd);
        }
        c.stages.get(Stage.TOTAL).record(answered - admitted);
    }

    /**
     * What one stage shows in {@code /admin/stats}.
     *
     * @param sumMicros the running sum of X (µs) and {@code sumSqMicros2} of X² (µs²): a reader that
     *     keeps two snapshots gets the count, mean and variance of the requests between them exactly
     *     (the percentiles are since the start or the last {@link #reset})
     */
    public record Summary(long count, double meanMicros, double stddevMicros, double cv2, long p50Micros,
            long p99Micros, long p999Micros, double sumMicros, double sumSqMicros2) {}

    /** {@return per configuration, per stage: count, mean, standard deviation, C² and percentiles since the start or the last reset} */
    public Map<String, Map<Stage, Summary>> snapshot() {
        Map<String, Map<Stage, Summary>> out = new java.util.TreeMap<>();
        configs.forEach((name, c) -> {
            Map<Stage, Summary> m = new EnumMap<>(Stage.class);
            c.stages.forEach((s, one) -> {
                long n = one.n.sum();
                if (n == 0) {
                    return;
                }
                double sum = one.sum.sum();
                double sumSq = one.sumSq.sum();
                double mean = sum / n;
                double var = Math.max(0, sumSq / n - mean * mean);
                Histogram h = one.snapshot();
                m.put(s, new Summary(n, mean, Math.sqrt(var), mean > 0 ? var / (mean * mean) : 0,
                        h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), sum, sumSq));
            });
            if (!m.isEmpty()) { // a configuration with nothing recorded since a reset is left out
                out.put(name, m);
            }
        });
        return out;
    }
}
