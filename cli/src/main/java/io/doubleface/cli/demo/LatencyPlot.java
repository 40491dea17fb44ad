package io.doubleface.cli.demo;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * The demo's plot: open-loop p50/p99/p99.9 per configuration as grouped bars, drawn with
 * {@code java.awt} on a headless {@link BufferedImage} and written as PNG. A percentile without
 * enough samples is drawn as "n/a" instead of a bar. Stateless; any thread.
 */
public final class LatencyPlot {

    static final int WIDTH = 900;
    static final int HEIGHT = 500;
    private static final String[] SERIES = {"p50", "p99", "p99.9"};
    private static final Color[] COLORS = {new Color(0x4C72B0), new Color(0xDD8452), new Color(0xC44E52)};

    private LatencyPlot() {}

    /** Writes the plot of {@code rows} to {@code file} (PNG). */
    public static void write(List<DemoRow> rows, String title, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        BufferedImage img = draw(rows, title);
        if (!ImageIO.write(img, "png", file.toFile())) {
            throw new IOException("no PNG writer in this JDK");
        }
    }

    static BufferedImage draw(List<DemoRow> rows, String title) {
        BufferedImage img = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            int left = 70;
            int right = WIDTH - 20;
            int top = 60;
            int bottom = HEIGHT - 60;

            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(title, left, 25);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));

            double max = 0;
            double min = Double.MAX_VALUE;
            for (DemoRow r : rows) {
                for (Double v : values(r)) {
                    if (v != null && v > 0) {
                        max = Math.max(max, v);
                        min = Math.min(min, v);
                    }
                }
            }
            if (max <= 0) {
                min = 0.1;
                max = 1;
            }
            // log scale: p50 and p99.9 differ by orders of magnitude
            double lo = Math.floor(Math.log10(min));
            double hi = Math.max(lo + 1, Math.ceil(Math.log10(max * 1.05)));
            double span = hi - lo;
            FontMetrics fm = g.getFontMetrics();
            for (int decade = (int) lo; decade <= (int) hi; decade++) {
                for (int m : new int[] {1, 2, 5}) {
                    double y = m * Math.pow(10, decade);
                    double frac = (Math.log10(y) - lo) / span;
                    if (frac > 1 + 1e-9) {
                        break;
                    }
                    int py = bottom - (int) Math.round((bottom - top) * frac);
                    g.setColor(new Color(m == 1 ? 0xD0D0D0 : 0xEEEEEE));
                    g.drawLine(left, py, right, py);
                    g.setColor(Color.BLACK);
                    String label = fmt(y);
                    g.drawString(label, left - 8 - fm.stringWidth(label), py + 4);
                }
            }
            g.drawLine(left, top, left, bottom);
            g.drawLine(left, bottom, right, bottom);
            Graphics2D rot = (Graphics2D) g.create();
            rot.rotate(-Math.PI / 2);
            rot.drawString("latency from intended send time (ms, log scale)", -(top + bottom) / 2 - 140, 18);
            rot.dispose();

            // bars
            int groups = Math.max(1, rows.size());
            double groupWidth = (right - left) / (double) groups;
            double barWidth = groupWidth * 0.8 / SERIES.length;
            for (int i = 0; i < rows.size(); i++) {
                DemoRow r = rows.get(i);
                Double[] v = values(r);
                double gx = left + i * groupWidth + groupWidth * 0.1;
                for (int s = 0; s < SERIES.length; s++) {
                    int x = (int) Math.round(gx + s * barWidth);
                    int w = (int) Math.max(1, Math.round(barWidth) - 2);
                    if (v[s] == null) {
                        g.setColor(Color.GRAY);
                        drawCentered(g, "n/a", x + w / 2, bottom - 4);
                        continue;
                    }
                    double frac = Math.max(0, (Math.log10(Math.max(v[s], 1e-9)) - lo) / span);
                    int h = (int) Math.max(1, Math.round((bottom - top) * frac));
                    g.setColor(COLORS[s]);
                    g.fillRect(x, bottom - h, w, h);
                    g.setColor(Color.DARK_GRAY);
                    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
                    drawCentered(g, fmt(v[s]), x + w / 2, bottom - h - 3);
                    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
                }
                g.setColor(Color.BLACK);
                drawCentered(g, r.configuration(), (int) Math.round(left + (i + 0.5) * groupWidth), bottom + 18);
            }

            // legend
            int lx = right - 240;
            for (int s = 0; s < SERIES.length; s++) {
                g.setColor(COLORS[s]);
                g.fillRect(lx + s * 80, 36, 14, 12);
                g.setColor(Color.BLACK);
                g.drawString(SERIES[s], lx + s * 80 + 18, 47);
            }
            g.setStroke(new BasicStroke(1));
            g.setColor(Color.GRAY);
            g.drawString("open loop (Poisson arrivals), same rate for every configuration; n/a: too few samples",
                    left, HEIGHT - 20);
        } finally {
            g.dispose();
        }
        return img;
    }

    private static Double[] values(DemoRow r) {
        return new Double[] {r.p50(), r.p99(), r.p999()};
    }

    private static void drawCentered(Graphics2D g, String s, int cx, int baseline) {
        g.drawString(s, cx - g.getFontMetrics().stringWidth(s) / 2, baseline);
    }

    private static String fmt(double v) {
        return v >= 10 ? String.format(Locale.ROOT, "%.0f", v)
                : v >= 1 ? String.format(Locale.ROOT, "%.1f", v)
                : v >= 0.01 ? String.format(Locale.ROOT, "%.2f", v) : String.format(Locale.ROOT, "%.3f", v);
    }
}
