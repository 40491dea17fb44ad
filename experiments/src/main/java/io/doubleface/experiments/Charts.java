package io.doubleface.experiments;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;

/**
 * The project's PNG charts, on XChart: the experiments' line plots ({@link LineChart}) and the
 * demo's percentiles per configuration ({@link #dots}), with one look (white background, light grid, one palette,
 * legend below) and one way to write them (headless AWT, {@value #WIDTH}×{@value #HEIGHT} PNG).
 * Stateless.
 */
public final class Charts {

    /** Width of every chart in pixels: {@value}. */
    public static final int WIDTH = 900;
    /** Height of every chart in pixels: {@value}. */
    public static final int HEIGHT = 520;

    private static final Color[] COLORS = {new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868),
        new Color(0xC44E52), new Color(0x8172B3), new Color(0x937860), new Color(0xDA8BC3), new Color(0x8C8C8C)};

    private Charts() {}

    /**
     * Writes a dot plot to {@code file} (PNG): for each category, one marker per series ({@code values}
     * in category order, null for none), one above the other; the percentiles of each configuration.
     * (Dots, not bars: XChart's bar charts refuse a missing value on a log axis.)
     *
     * @param logY y on a log10 scale (latency percentiles that differ by orders of magnitude)
     */
    public static void dots(Path file, String title, String yLabel, boolean logY, List<String> categories,
            Map<String, List<Double>> values) throws IOException {
        LineChart ch = new LineChart(title, null, yLabel).categories(categories).markersOnly();
        if (logY) {
            ch.logY();
        }
        for (Map.Entry<String, List<Double>> e : values.entrySet()) {
            for (int i = 0; i < categories.size(); i++) {
                ch.point(e.getKey(), i, i < e.getValue().size() ? e.getValue().get(i) : null);
            }
        }
        ch.write(file);
    }

    /**
     * Writes a stacked bar chart to {@code file} (PNG): one bar per category, each series a segment
     * ({@code values} in category order; a missing value counts as 0). The per-stage breakdown of
     * the variability experiment: one bar per configuration, one segment per stage.
     */
    static void stackedBars(Path file, String title, String yLabel, List<String> categories,
            Map<String, List<Double>> values) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title).yAxisTitle(yLabel)
                .build();
        style(chart.getStyler());
        chart.getStyler().setStacked(true);
        chart.getStyler().setOverlapped(false);
        chart.getStyler().setXAxisLabelRotation(20);
        for (Map.Entry<String, List<Double>> e : values.entrySet()) {
            List<Double> ys = new java.util.ArrayList<>();
            for (int i = 0; i < categories.size(); i++) {
                Double v = i < e.getValue().size() ? e.getValue().get(i) : null;
                ys.add(v == null || v.isNaN() ? 0.0 : v);
            }
            chart.addSeries(e.getKey(), categories, ys);
        }
        writePng(chart, file);
    }

    /** The project's look: white, light grid, the palette, the legend under the plot. */
    static void style(AxesChartStyler s) {
        s.setChartBackgroundColor(Color.WHITE);
        s.setPlotBackgroundColor(Color.WHITE);
        s.setPlotBorderVisible(false);
        s.setPlotGridLinesColor(new Color(0xDDDDDD));
        s.setSeriesColors(COLORS);
        s.setMarkerSize(6);
        s.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        s.setLegendPosition(Styler.LegendPosition.OutsideS);
        s.setLegendLayout(Styler.LegendLayout.Horizontal);
        s.setLegendBorderColor(Color.WHITE);
    }

    /**
     * Ticks of a log y axis over {@code min}..{@code max}: every 1..9 × 10^n while the data spans
     * under two decades, the powers of ten only beyond (their labels would overlap).
     */
    static void logTicks(AxesChartStyler s, double min, double max) {
        s.setYAxisLogarithmicDecadeOnly(!(min > 0 && max / min < 100));
    }

    /** Writes {@code chart} to {@code file} as PNG, without a display. */
    static void writePng(Chart<?, ?> chart, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
