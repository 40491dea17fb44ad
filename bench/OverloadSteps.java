import java.io.File;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

/**
 * Reads the interval logs of bench/overload-step.sh ({@code run-SETTING-MULTx-rN.hlog}, written by
 * {@code doubleface load --interval 10ms --hlog}) and prints, per setting and step, what a client
 * saw around the step: goodput (answers with status below 400, by the interval they ended in) and
 * the latency of those answers, per 10-ms interval, repeats merged (aligned on the step). A 10-ms
 * interval holds far fewer than the 10,000 samples a p99 needs (docs/measuring.md), so its tail is
 * given by its max, an upper bound of its p99: "every answer under 2x the calm p99" from some
 * interval on implies the p99 is too. The p99 is given where it has its samples: the calm phase,
 * and the overload from 50 ms after the step to its end. Writes the per-interval series to
 * DIR/intervals.csv and the summary table to stdout (markdown).
 *
 * <pre>
 *   java -cp cli/target/doubleface.jar bench/OverloadSteps.java DIR CAPACITY STEP_AT_S CALM_S AFTER_S
 * </pre>
 * CAPACITY: the closed-loop capacity (req/s) the goodput is compared with; STEP_AT_S: seconds from
 * the generator's start (warm-up included) to the step; CALM_S: seconds before the step that are
 * the calm reference; AFTER_S: seconds after the step that are reported.
 */
public final class OverloadSteps {
    static final int BIN_MS = 10;
    /** A p99 needs this many samples, a p50 this many (docs/measuring.md, samples per percentile). */
    static final int MIN_P99 = 10_000;
    static final int MIN_P50 = 200;
    /** The p99 of the overload is taken from this long after the step. */
    static final int SETTLE_MS = 50;
    static final Pattern NAME = Pattern.compile("run-(.+)-([0-9.]+)x-r([0-9]+)\\.hlog");

    /** One setting's step, its repeats merged per bin. */
    static final class Series {
        final String setting;
        final String mult;
        int repeats;
        final Histogram calm = new Histogram(3);
        final Histogram settled = new Histogram(3);
        /** Per bin: the ok answers' histogram (the intervals whose middle is in the bin; for p50s). */
        final TreeMap<Integer, Histogram> ok = new TreeMap<>();
        /** Per bin: answers (all, ok) spread over the bins their interval overlaps, and the ok max. */
        final TreeMap<Integer, Double> all = new TreeMap<>();
        final TreeMap<Integer, Double> good = new TreeMap<>();
        final TreeMap<Integer, Double> max = new TreeMap<>();

        Series(String setting, String mult) {
            this.setting = setting;
            this.mult = mult;
        }
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        double capacity = Double.parseDouble(args[1]);
        double stepAt = Double.parseDouble(args[2]);
        double calmS = Double.parseDouble(args[3]);
        double afterS = Double.parseDouble(args[4]);
        int lastBin = (int) Math.round(afterS * 1000 / BIN_MS);
        Map<String, Series> series = new TreeMap<>();
        File[] files = dir.listFiles();
        if (files == null) {
            throw new IllegalArgumentException("not a directory: " + dir);
        }
        for (File f : files) {
            Matcher m = NAME.matcher(f.getName());
            if (!m.matches()) {
                continue;
            }
            Series s = series.computeIfAbsent(m.group(1) + " " + m.group(2), k -> new Series(m.group(1), m.group(2)));
            s.repeats++;
            try (HistogramLogReader r = new HistogramLogReader(f)) {
                EncodableHistogram e;
                while ((e = r.nextIntervalHistogram()) != null) {
                    if (!(e instanceof Histogram h) || "send_lag".equals(h.getTag())) {
                        continue;
                    }
                    // a response counts for the interval in which it ended; an interval's answers are
                    // spread over the 10-ms bins it overlaps (the coordinator's ticks are late at
                    // times, making one interval longer and the next shorter)
                    double begin = h.getStartTimeStamp() / 1000.0 - r.getStartTimeSec() - stepAt;
                    double end = h.getEndTimeStamp() / 1000.0 - r.getStartTimeSec() - stepAt;
                    int bin = (int) Math.floor((begin + end) / 2 * 1000 / BIN_MS);
                    boolean okTag = "ok".equals(h.getTag());
                    if (okTag || h.getTag() == null) {
                        spread(okTag ? s.good : s.all, begin, end, h.getTotalCount(), lastBin);
                    }
                    if (okTag && h.getTotalCount() > 0) {
                        for (int b = (int) Math.floor(begin * 1000 / BIN_MS); b * BIN_MS < end * 1000; b++) {
                            s.max.merge(b, h.getMaxValue() / 1000.0, Math::max);
                        }
                    }
                    if (end <= 0 && end > -calmS && okTag) {
                        s.calm.add(h);
                    }
                    if (okTag && end * 1000 > SETTLE_MS && end <= afterS) {
                        s.settled.add(h);
                    }
                    if (bin < -10 || bin > lastBin) {
                        continue;
                    }
                    if (okTag) {
                        s.ok.computeIfAbsent(bin, b -> new Histogram(3)).add(h);
                    }
                }
            }
        }
        if (series.isEmpty()) {
            throw new IllegalArgumentException("no run-SETTING-MULTx-rN.hlog in " + dir);
        }
        try (PrintWriter csv = new PrintWriter(new File(dir, "intervals.csv"), "UTF-8")) {
            csv.println("setting,step,repeats,bin_end_ms,answers_per_s,goodput_per_s,goodput_over_capacity,ok_samples,ok_p50_ms,ok_max_ms");
            for (Series s : series.values()) {
                for (int b = -10; b <= lastBin; b++) {
                    Histogram h = s.ok.get(b);
                    long n = h == null ? 0 : h.getTotalCount();
                    double perS = 1000.0 / BIN_MS / s.repeats;
                    double g = s.good.getOrDefault(b, 0.0);
                    csv.printf(Locale.ROOT, "%s,%sx,%d,%d,%.0f,%.0f,%.3f,%d,%s,%s%n", s.setting, s.mult, s.repeats,
                            (b + 1) * BIN_MS, s.all.getOrDefault(b, 0.0) * perS, g * perS, g * perS / capacity, n,
                            n >= MIN_P50 ? String.format(Locale.ROOT, "%.2f", h.getValueAtPercentile(50) / 1000.0) : "",
                            s.max.containsKey(b) ? String.format(Locale.ROOT, "%.2f", s.max.get(b)) : "");
                }
            }
        }
        System.out.println("| setting | step | repeats | calm p99 (ms) | goodput / C, first 100 ms after the step, per 10 ms | min goodput / C, 10-ms / 100-ms intervals, whole overload | max in the first 50 ms (ms) | p99 from +50 ms to the end (ms; / calm) | every answer under 2x the calm p99 from |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        for (Series s : series.values()) {
            double perS = 1000.0 / BIN_MS / s.repeats;
            double calm = s.calm.getTotalCount() >= MIN_P99 ? s.calm.getValueAtPercentile(99) / 1000.0 : Double.NaN;
            double settled = s.settled.getTotalCount() >= MIN_P99 ? s.settled.getValueAtPercentile(99) / 1000.0 : Double.NaN;
            List<String> first = new ArrayList<>();
            double min10 = Double.POSITIVE_INFINITY;
            double min100 = Double.POSITIVE_INFINITY;
            double early = 0;
            int lastBad = -1;
            for (int b = 0; b <= lastBin; b++) {
                double g = s.good.getOrDefault(b, 0.0) * perS / capacity;
                if (b < 10) {
                    first.add(String.format(Locale.ROOT, "%.2f", g));
                }
                if (b < lastBin) { // the last interval may be cut by the end of the run
                    min10 = Math.min(min10, g);
                }
                if (b % 10 == 9 && b < lastBin) {
                    double sum = 0;
                    for (int k = b - 9; k <= b; k++) {
                        sum += s.good.getOrDefault(k, 0.0);
                    }
                    min100 = Math.min(min100, sum * perS / 10 / capacity);
                }
                double max = s.max.getOrDefault(b, 0.0);
                if ((b + 1) * BIN_MS <= SETTLE_MS) {
                    early = Math.max(early, max);
                }
                if (!(max <= 2 * calm)) {
                    lastBad = b;
                }
            }
            String back = Double.isNaN(calm) ? "n/a (no calm p99)"
                    : lastBad < 0 ? "the first interval" : lastBad >= lastBin ? "never (within the run)"
                    : "+" + (lastBad + 1) * BIN_MS + " ms";
            System.out.printf(Locale.ROOT, "| %s | %sx | %d | %s | %s | %.2f / %.2f | %.1f | %s | %s |%n", s.setting,
                    s.mult, s.repeats, fmt(calm), String.join(" ", first), min10, min100, early,
                    Double.isNaN(settled) ? "n/a" : fmt(settled) + " (" + fmt(settled / calm) + "x)", back);
        }
    }

    /** Adds {@code count} answers of the interval [begin, end] (s) to the bins it overlaps, by overlap. */
    static void spread(TreeMap<Integer, Double> bins, double begin, double end, long count, int lastBin) {
        if (count == 0) {
            return;
        }
        if (!(end > begin)) {
            bins.merge((int) Math.floor(end * 1000 / BIN_MS), (double) count, Double::sum);
            return;
        }
        for (int b = (int) Math.floor(begin * 1000 / BIN_MS); b * BIN_MS < end * 1000 && b <= lastBin + 1; b++) {
            double lo = Math.max(begin, b * BIN_MS / 1000.0);
            double hi = Math.min(end, (b + 1) * BIN_MS / 1000.0);
            if (hi > lo) {
                bins.merge(b, count * (hi - lo) / (end - begin), Double::sum);
            }
        }
    }

    private static String fmt(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
    }
}
