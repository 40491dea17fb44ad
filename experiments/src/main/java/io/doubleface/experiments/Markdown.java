package io.doubleface.experiments;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The body of a {@code report.md} being written (headings, text, tables, images) and the cell
 * formats every experiment's tables share: a median over repeats with its min–max spread,
 * milliseconds, percentile names. Not thread-safe: one report, one thread.
 */
final class Markdown {

    private final StringBuilder md = new StringBuilder();

    void heading(String h) {
        md.append("\n### ").append(h).append("\n\n");
    }

    void text(String t) {
        md.append(t).append("\n");
    }

    void table(List<String> header, List<List<String>> body) {
        md.append("| ").append(String.join(" | ", header)).append(" |\n|");
        md.append("---|".repeat(header.size())).append('\n');
        for (List<String> r : body) {
            md.append("| ").append(String.join(" | ", r)).append(" |\n");
        }
    }

    void image(String file) {
        md.append("\n![").append(file).append("](").append(file).append(")\n");
    }

    @Override
    public String toString() {
        return md.toString();
    }

    /** The median of the values that are not NaN; NaN if there are none. */
    static double median(double[] v) {
        double[] s = Arrays.stream(v).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (s.length == 0) {
            return Double.NaN;
        }
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** A table cell: the median of {@code v} in {@code fmt}, with {@code (min–max)} when more than one value. */
    static String cell(double[] v, String fmt) {
        double m = median(v);
        if (Double.isNaN(m)) {
            return "n/a";
        }
        String s = String.format(Locale.ROOT, fmt, m);
        double[] ok = Arrays.stream(v).filter(d -> !Double.isNaN(d)).toArray();
        if (ok.length > 1) {
            double lo = Arrays.stream(ok).min().getAsDouble();
            double hi = Arrays.stream(ok).max().getAsDouble();
            s += " (" + String.format(Locale.ROOT, fmt, lo) + "–" + String.format(Locale.ROOT, fmt, hi) + ")";
        }
        return s;
    }

    /** Milliseconds with two decimals, {@code n/a} for null. */
    static String ms(Double v) {
        return v == null ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
    }

    /** A percentile's name: {@code 99}, {@code 99.9}. */
    static String fmtQ(double q) {
        return q == Math.rint(q) ? Long.toString((long) q) : Double.toString(q);
    }
}
