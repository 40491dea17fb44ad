package io.doubleface.experiments;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;

/**
 * Line plots of the experiments (one series per configuration), drawn by XChart ({@link Charts})
 * and written as PNG. X is either numeric (linear or log) or categorical (labels at evenly spaced
 * positions); missing values (null) break the line. Not thread-safe; build, then {@link #write}.
 */
final class LineChart {

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private boolean logX;
    private boolean logY;
    private List<String> categories;
    private boolean markersOnly;
    /** series name → points {x} (a gap) or {x, y}, in insertion order */
    private final Map<String, List<double[]>> series = new LinkedHashMap<>();

    LineChart(String title, String xLabel, String yLabel) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    /** X on a log scale (concurrency, fanout). */
    LineChart logX() {
        this.logX = true;
        return this;
    }

    /** Y on a log10 scale (latency). */
    LineChart logY() {
        this.logY = true;
        return this;
    }

    /** Categorical X: point x = index into {@code labels}. */
    LineChart categories(List<String> labels) {
        this.categories = List.copyOf(labels);
        return this;
    }

    /** Markers without lines (values that are not a series over x). */
    LineChart markersOnly() {
        this.markersOnly = true;
        return this;
    }

    /** Adds point (x, y) to {@code name}'s series; a null y leaves a gap. */
    LineChart point(String name, double x, Double y) {
        series.computeIfAbsent(name, k -> new ArrayList<>()).add(y == null || y.isNaN() ? new double[] {x}
                : new double[] {x, y});
        return this;
    }

    boolean isEmpty() {
        return series.values().stream().allMatch(l -> l.stream().allMatch(p -> p.length < 2));
    }

    void write(Path file) throws IOException {
        Charts.writePng(chart(), file);
    }

    XYChart chart() {
        XYChart chart = new XYChartBuilder().width(Charts.WIDTH).height(Charts.HEIGHT).title(title).xAxisTitle(xLabel)
                .yAxisTitle(yLabel).build();
        Charts.style(chart.getStyler());
        chart.getStyler().setXAxisLogarithmic(logX).setYAxisLogarithmic(logY);
        if (logY) {
            Charts.logTicks(chart.getStyler(), series.values().stream().flatMap(List::stream).filter(p -> p.length == 2)
                    .mapToDouble(p -> p[1]).filter(v -> v > 0).min().orElse(1), series.values().stream()
                    .flatMap(List::stream).filter(p -> p.length == 2).mapToDouble(p -> p[1]).max().orElse(1));
        }
        if (categories != null) {
            List<String> labels = categories;
            chart.getStyler().setxAxisTickLabelsFormattingFunction(x -> {
                long i = Math.round(x);
                return Math.abs(x - i) < 1e-9 && i >= 0 && i < labels.size() ? labels.get((int) i) : "";
            });
        }
        for (Map.Entry<String, List<double[]>> e : series.entrySet()) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (double[] p : e.getValue()) {
                xs.add(p[0]);
                ys.add(p.length < 2 ? null : p[1]); // XChart breaks the line at a null
            }
            XYSeries s = chart.addSeries(e.getKey(), xs, ys);
            s.setXYSeriesRenderStyle(markersOnly ? XYSeries.XYSeriesRenderStyle.Scatter : XYSeries.XYSeriesRenderStyle.Line);
        }
        return chart;
    }
}
