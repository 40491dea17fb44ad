package io.doubleface.experiments;

import io.doubleface.internal.loop.ThreadStats;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The mid-tier's counters at one instant: requests answered and per-loop iterations, wake-ups and
 * events from {@code /admin/stats}, and per-thread context switches and CPU time from
 * {@code /proc/PID/task}. {@link #delta} of two samples describes one run.
 *
 * @param loops loop name#position in /admin/stats → {iterations, wakeups, events, tail batches,
 *     replies in tail batches} (the last two: the DoubleFace scheduler's; 0 for other loops)
 * @param loopGroups loop name → group ({@code io}, {@code t2a-be}, …)
 * @param threads per-thread counters by thread id ({@code /proc/PID/task}); with {@code perThread}
 *     false, one entry per thread group, as the server counts itself ({@code /admin/stats} {@code threads})
 * @param stages configuration → stage → {count, sum of X, sum of X²} (µs) of the mid-tier's per-stage
 *     tracing ({@code /admin/stats} {@code stages}); empty when tracing is off
 * @param perThread whether {@code threads} has one entry per thread (else per group: no active-thread count)
 */
record MidTierSample(long nanos, long answered, Map<String, long[]> loops, Map<String, String> loopGroups,
        Map<String, ThreadStats.Sample> threads, Map<String, Map<String, double[]>> stages, boolean perThread) {

    /** A sample with per-thread counters. */
    MidTierSample(long nanos, long answered, Map<String, long[]> loops, Map<String, String> loopGroups,
            Map<String, ThreadStats.Sample> threads, Map<String, Map<String, double[]>> stages) {
        this(nanos, answered, loops, loopGroups, threads, stages, true);
    }

    /** Counters per loop: iterations, wake-ups, events, tail batches, tail replies. */
    static final int LOOP_COUNTERS = 5;

    static MidTierSample of(Map<String, Object> adminStats, long pid) {
        MidTierSample s = ofServer(adminStats);
        return new MidTierSample(s.nanos, s.answered, s.loops, s.loopGroups, ThreadStats.threadsOf(pid), s.stages, true);
    }

    /**
     * A sample of a mid-tier whose process is not on this machine (an external topology): its
     * threads as it counts them itself, per group ({@code /admin/stats} {@code threads}). Context
     * switches and CPU per run stay right (a group's sums, unless a pool thread exits during the
     * run); how many threads were active is unknown ({@link Delta#activeThreads} -1).
     */
    static MidTierSample ofServer(Map<String, Object> adminStats) {
        Map<String, Object> req = MiniJson.path(adminStats, "requests").asMap();
        long answered = ((Number) req.get("answered")).longValue();
        Map<String, long[]> loops = new TreeMap<>();
        Map<String, String> groups = new TreeMap<>();
        int i = 0;
        for (Map<String, Object> l : MiniJson.objects(adminStats, "loops")) {
            // names repeat across configurations (type2a-1f1b and -1f2b both have a t2a-be-0): key by position too
            String name = l.get("name") + "#" + i++;
            loops.put(name, new long[] {num(l, "iterations"), num(l, "wakeups"), num(l, "events"),
                num(l, "tail_batches"), num(l, "tail_replies")});
            groups.put(name, (String) l.get("group"));
        }
        Map<String, ThreadStats.Sample> threads = new TreeMap<>();
        if (adminStats.get("threads") instanceof java.util.List<?>) {
            for (Map<String, Object> g : MiniJson.objects(adminStats, "threads")) {
                String group = String.valueOf(g.get("group"));
                threads.put("group:" + group, new ThreadStats.Sample("group:" + group, group, group,
                        num(g, "voluntary_switches"), num(g, "involuntary_switches"), num(g, "cpu_ms")));
            }
        }
        return new MidTierSample(System.nanoTime(), answered, loops, groups, threads, stagesOf(adminStats), false);
    }

    /** The running sums of {@code /admin/stats} {@code stages} (servers without {@code sum_us}: none). */
    static Map<String, Map<String, double[]>> stagesOf(Map<String, Object> adminStats) {
        Map<String, Map<String, double[]>> out = new TreeMap<>();
        if (!(adminStats.get("stages") instanceof Map<?, ?> st)) {
            return out;
        }
        st.forEach((config, v) -> {
            if (v instanceof Map<?, ?> byStage) {
                Map<String, double[]> m = new LinkedHashMap<>();
                byStage.forEach((stage, x) -> {
                    if (x instanceof Map<?, ?> one && one.get("sum_us") instanceof Number sum
                            && one.get("sum_sq_us2") instanceof Number sq && one.get("count") instanceof Number n) {
                        m.put((String) stage, new double[] {n.doubleValue(), sum.doubleValue(), sq.doubleValue()});
                    }
                });
                if (!m.isEmpty()) {
                    out.put((String) config, m);
                }
            }
        });
        return out;
    }

    private static long num(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v instanceof Number n ? n.longValue() : 0;
    }

    /**
     * What happened between {@code before} and {@code after}. Threads are compared one by one (a
     * thread born during the run counts from zero; one that died is lost — pools here don't shrink
     * during a run except type2b's cached workers after 60 s idle).
     */
    static Delta delta(MidTierSample before, MidTierSample after) {
        double secs = (after.nanos - before.nanos) / 1e9;
        long requests = after.answered - before.answered;
        // group -> {iterations, wakeups, events, tail batches, tail replies}
        Map<String, long[]> byLoopGroup = new TreeMap<>();
        after.loops.forEach((name, a) -> {
            long[] b = before.loops.getOrDefault(name, new long[LOOP_COUNTERS]);
            long[] acc = byLoopGroup.computeIfAbsent(after.loopGroups.get(name), k -> new long[LOOP_COUNTERS]);
            for (int i = 0; i < LOOP_COUNTERS; i++) {
                acc[i] += a[i] - b[i];
            }
        });
        Map<String, long[]> byThreadGroup = new TreeMap<>(); // group -> {threads active, switches, cpu ms}
        long switches = 0;
        long cpuMillis = 0;
        int active = 0;
        for (ThreadStats.Sample a : after.threads.values()) {
            ThreadStats.Sample b = before.threads.get(a.tid());
            long sw = a.switches() - (b == null ? 0 : b.switches());
            long cpu = a.cpuMillis() - (b == null ? 0 : b.cpuMillis());
            boolean isActive = cpu > 0 || sw > 2;
            long[] acc = byThreadGroup.computeIfAbsent(a.group(), k -> new long[3]);
            acc[0] += isActive ? 1 : 0;
            acc[1] += sw;
            acc[2] += cpu;
            switches += sw;
            cpuMillis += cpu;
            active += isActive ? 1 : 0;
        }
        Map<String, Map<String, Stage>> stages = new TreeMap<>();
        after.stages.forEach((config, byStage) -> byStage.forEach((stage, a) -> {
            double[] b = before.stages.getOrDefault(config, Map.of()).getOrDefault(stage, new double[3]);
            long n = Math.round(a[0] - b[0]);
            if (n > 0) {
                stages.computeIfAbsent(config, k -> new LinkedHashMap<>()).put(stage,
                        new Stage(n, a[1] - b[1], a[2] - b[2]));
            }
        }));
        if (!after.perThread) { // one entry per group: the count of active threads is unknown
            active = -1;
            byThreadGroup.values().forEach(acc -> acc[0] = -1);
        }
        return new Delta(secs, requests, byLoopGroup, byThreadGroup, switches, cpuMillis, active, stages);
    }

    /**
     * One stage's traced requests between two samples: their count and the sums of X and X² (µs),
     * whence the mean, the variance and C² (variance / mean²) the variability paper ranks stages by.
     */
    record Stage(long count, double sumMicros, double sumSqMicros2) {
        double meanMicros() {
            return count == 0 ? Double.NaN : sumMicros / count;
        }

        /** Population variance, µs². */
        double varianceMicros2() {
            double m = meanMicros();
            return count == 0 ? Double.NaN : Math.max(0, sumSqMicros2 / count - m * m);
        }

        double stddevMicros() {
            return Math.sqrt(varianceMicros2());
        }

        double cv2() {
            double m = meanMicros();
            return m > 0 ? varianceMicros2() / (m * m) : Double.NaN;
        }

        Map<String, Object> toJson() {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("count", count);
            j.put("sum_us", round(sumMicros));
            j.put("sum_sq_us2", Math.round(sumSqMicros2));
            j.put("mean_us", round(meanMicros()));
            j.put("stddev_us", round(stddevMicros()));
            j.put("cv2", round(cv2()));
            return j;
        }
    }

    /**
     * The mid-tier's side of one run.
     *
     * @param threadGroups group → {active threads (-1: not known), context switches, CPU ms}
     * @param activeThreads threads that ran during the run; -1 when not known (counters per group,
     *     {@link #ofServer})
     * @param stages configuration → stage → the run's traced requests in it (empty when tracing is off)
     */
    record Delta(double seconds, long requests, Map<String, long[]> loopGroups, Map<String, long[]> threadGroups,
            long contextSwitches, long cpuMillis, int activeThreads, Map<String, Map<String, Stage>> stages) {

        /** The run's figures of {@code stage} under configuration {@code config}; null if none was traced. */
        Stage stage(String config, String stage) {
            Map<String, Stage> m = stages.get(config);
            return m == null ? null : m.get(stage);
        }

        double switchesPerRequest() {
            return requests == 0 ? Double.NaN : (double) contextSwitches / requests;
        }

        double cpuMicrosPerRequest() {
            return requests == 0 ? Double.NaN : cpuMillis * 1000.0 / requests;
        }

        /** Events per wake-up of the loops in {@code group}; NaN if they never woke. */
        double eventsPerWakeup(String group) {
            long[] g = loopGroups.get(group);
            return g == null || g[1] == 0 ? Double.NaN : (double) g[2] / g[1];
        }

        /** Replies per tail batch of the DoubleFace scheduler on the loops of {@code group}; NaN without batches. */
        double repliesPerTailBatch(String group) {
            long[] g = loopGroups.get(group);
            return g == null || g[3] == 0 ? Double.NaN : (double) g[4] / g[3];
        }

        double wakeupsPerSecond(String group) {
            long[] g = loopGroups.get(group);
            return g == null ? Double.NaN : g[1] / seconds;
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("seconds", round(seconds));
            m.put("requests", requests);
            m.put("context_switches", contextSwitches);
            m.put("context_switches_per_request", round(switchesPerRequest()));
            m.put("context_switches_per_second", round(contextSwitches / seconds));
            m.put("cpu_ms", cpuMillis);
            m.put("cpu_us_per_request", round(cpuMicrosPerRequest()));
            m.put("active_threads", activeThreads < 0 ? null : activeThreads); // null: not known (external mid-tier)
            Map<String, Object> lg = new LinkedHashMap<>();
            loopGroups.forEach((k, v) -> {
                Map<String, Object> g = new LinkedHashMap<>();
                g.put("iterations", v[0]);
                g.put("wakeups", v[1]);
                g.put("events", v[2]);
                g.put("wakeups_per_second", round(v[1] / seconds));
                g.put("events_per_wakeup", round(v[1] == 0 ? Double.NaN : (double) v[2] / v[1]));
                if (v[3] > 0) {
                    g.put("tail_batches", v[3]);
                    g.put("replies_per_tail_batch", round((double) v[4] / v[3]));
                }
                lg.put(k, g);
            });
            m.put("loops", lg);
            Map<String, Object> tg = new LinkedHashMap<>();
            threadGroups.forEach((k, v) -> {
                if (v[0] > 0 || v[1] > 0 || (v[0] < 0 && v[2] > 0)) {
                    Map<String, Object> g = new LinkedHashMap<>();
                    if (v[0] >= 0) { // -1: not known (an external mid-tier's counters are per group)
                        g.put("active_threads", v[0]);
                    }
                    g.put("context_switches", v[1]);
                    g.put("cpu_ms", v[2]);
                    tg.put(k, g);
                }
            });
            m.put("threads", tg);
            if (!stages.isEmpty()) {
                Map<String, Object> st = new LinkedHashMap<>();
                stages.forEach((config, byStage) -> {
                    Map<String, Object> c = new LinkedHashMap<>();
                    byStage.forEach((stage, x) -> c.put(stage, x.toJson()));
                    st.put(config, c);
                });
                m.put("stages", st);
            }
            return m;
        }
    }

    static Object round(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return null;
        }
        return Math.round(v * 1000) / 1000.0;
    }
}
