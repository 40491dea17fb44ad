package io.doubleface.experiments;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * Line plots of the experiments (one series per configuration), drawn with {@code java.awt} on a
 * headless image and written as PNG. X is either numeric (linear or log2) or categorical (labels
 * at evenly spaced positions); missing values (null) break the line. Not thread-safe; build, then
 * {@link #write}.
 */
final class LineChart {

    private static final int WIDTH = 900;
    private static final int HEIGHT = 520;
    private static final Color[] COLORS = {new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868),
        new Color(0xC44E52), new Color(0x8172B3), new Color(0x937860), new Color(0xDA8BC3), new Color(0x8C8C8C)};

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private boolean logX;
    private boolean logY;
    private List<String> categories;
    private final Map<String, List<double[]>> series = new LinkedHashMap<>();

    LineChart(String title, String xLabel, String yLabel) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    /** X on a log2 scale (concurrency, fanout). */
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
        System.setProperty("java.awt.headless", "true");
        if (!ImageIO.write(draw(), "png", file.toFile())) {
            throw new IOException("no PNG writer in this JDK");
        }
    }

    private double tx(double x) {
        return logX ? Math.log(x) / Math.log(2) : x;
    }

    private double ty(double y) {
        return logY ? Math.log10(Math.max(y, 1e-6)) : y;
    }

    BufferedImage draw() {
        BufferedImage img = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            int left = 80;
            int right = WIDTH - 190;
            int top = 50;
            int bottom = HEIGHT - 60;
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(title, left, 25);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));

            double minX = Double.MAX_VALUE;
            double maxX = -Double.MAX_VALUE;
            double minY = Double.MAX_VALUE;
            double maxY = -Double.MAX_VALUE;
            for (List<double[]> pts : series.values()) {
                for (double[] p : pts) {
                    minX = Math.min(minX, tx(p[0]));
                    maxX = Math.max(maxX, tx(p[0]));
                    if (p.length > 1) {
                        minY = Math.min(minY, ty(p[1]));
                        maxY = Math.max(maxY, ty(p[1]));
                    }
                }
            }
            if (categories != null) {
                minX = -0.5;
                maxX = categories.size() - 0.5;
            }
            if (minY == Double.MAX_VALUE) {
                g.drawString("no data", (left + right) / 2, (top + bottom) / 2);
                return img;
            }
            if (!logY) {
                minY = Math.min(0, minY);
                maxY = maxY <= minY ? minY + 1 : maxY * 1.08;
            } else {
                minY = Math.floor(minY);
                maxY = Math.max(Math.ceil(maxY), minY + 1);
            }
            if (maxX <= minX) {
                maxX = minX + 1;
                minX -= 1;
            }
            double x0 = minX;
            double x1 = maxX;
            double y0 = minY;
            double y1 = maxY;
            java.util.function.DoubleUnaryOperator px = v -> left + (v - x0) / (x1 - x0) * (right - left);
            java.util.function.DoubleUnaryOperator py = v -> bottom - (v - y0) / (y1 - y0) * (bottom - top);

            // grid and y ticks
            g.setColor(new Color(0xDDDDDD));
            List<Double> yTicks = new ArrayList<>();
            if (logY) {
                for (double e = y0; e <= y1 + 1e-9; e++) {
                    yTicks.add(e);
                }
            } else {
                double step = niceStep((y1 - y0) / 6);
                for (double v = Math.ceil(y0 / step) * step; v <= y1 + 1e-9; v += step) {
                    yTicks.add(v);
                }
            }
            for (double v : yTicks) {
                int y = (int) py.applyAsDouble(v);
                g.setColor(new Color(0xDDDDDD));
                g.drawLine(left, y, right, y);
                g.setColor(Color.DARK_GRAY);
                String s = logY ? fmt(Math.pow(10, v)) : fmt(v);
                g.drawString(s, left - 8 - g.getFontMetrics().stringWidth(s), y + 4);
            }
            // x ticks
            List<double[]> xTicks = new ArrayList<>(); // {position, label value}
            if (categories != null) {
                for (int i = 0; i < categories.size(); i++) {
                    xTicks.add(new double[] {i, i});
                }
            } else {
                java.util.TreeSet<Double> xs = new java.util.TreeSet<>();
                series.values().forEach(l -> l.forEach(p -> xs.add(p[0])));
                for (double x : xs) {
                    xTicks.add(new double[] {tx(x), x});
                }
            }
            g.setColor(Color.DARK_GRAY);
            for (double[] t : xTicks) {
                int x = (int) px.applyAsDouble(t[0]);
                g.drawLine(x, bottom, x, bottom + 4);
                String s = categories != null ? categories.get((int) t[1]) : fmt(t[1]);
                g.drawString(s, x - g.getFontMetrics().stringWidth(s) / 2, bottom + 18);
            }
            g.setColor(Color.BLACK);
            g.drawLine(left, bottom, right, bottom);
            g.drawLine(left, top, left, bottom);
            g.drawString(xLabel, (left + right) / 2 - g.getFontMetrics().stringWidth(xLabel) / 2, bottom + 40);
            Graphics2D r = (Graphics2D) g.create();
            r.rotate(-Math.PI / 2);
            r.drawString(yLabel, -(top + bottom) / 2 - r.getFontMetrics().stringWidth(yLabel) / 2, 20);
            r.dispose();

            int i = 0;
            int legendY = top + 10;
            for (Map.Entry<String, List<double[]>> e : series.entrySet()) {
                Color c = COLORS[i++ % COLORS.length];
                g.setColor(c);
                g.setStroke(new BasicStroke(2f));
                double[] prev = null;
                for (double[] p : e.getValue()) {
                    if (p.length < 2) {
                        prev = null;
                        continue;
                    }
                    int x = (int) px.applyAsDouble(tx(p[0]));
                    int y = (int) py.applyAsDouble(ty(p[1]));
                    g.fillOval(x - 3, y - 3, 7, 7);
                    if (prev != null) {
                        g.drawLine((int) px.applyAsDouble(tx(prev[0])), (int) py.applyAsDouble(ty(prev[1])), x, y);
                    }
                    prev = p;
                }
                g.fillRect(right + 15, legendY - 9, 14, 10);
                g.setColor(Color.BLACK);
                g.drawString(e.getKey(), right + 35, legendY);
                legendY += 18;
            }
            return img;
        } finally {
            g.dispose();
        }
    }

    private static double niceStep(double raw) {
        double mag = Math.pow(10, Math.floor(Math.log10(raw)));
        double n = raw / mag;
        return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
    }

    private static String fmt(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e7) {
            return Long.toString((long) v);
        }
        return Math.abs(v) >= 10 ? String.format(Locale.ROOT, "%.0f", v)
                : Math.abs(v) >= 1 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2g", v);
    }
}
