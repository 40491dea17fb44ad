package io.doubleface.experiments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The charts render headless to PNG files of the stated size, with gaps where values are missing. */
class ChartsTest {

    private static BufferedImage png(Path file) throws Exception {
        BufferedImage img = ImageIO.read(file.toFile());
        assertNotNull(img, file + " is not a PNG");
        assertEquals(Charts.WIDTH, img.getWidth());
        assertEquals(Charts.HEIGHT, img.getHeight());
        return img;
    }

    @Test
    void logLineChartWithGapsIsAPng(@TempDir Path dir) throws Exception {
        LineChart ch = new LineChart("p99 vs concurrency", "users", "p99 (ms)").logX().logY();
        ch.point("a", 1, null).point("a", 4, 2.5).point("a", 16, 40.0).point("b", 1, 1.0).point("b", 4, null)
                .point("b", 16, 900.0);
        assertFalse(ch.isEmpty());
        ch.write(dir.resolve("line.png"));
        png(dir.resolve("line.png"));
    }

    @Test
    void categoricalChartIsAPng(@TempDir Path dir) throws Exception {
        LineChart ch = new LineChart("events per wake-up", "configuration", "events").categories(List.of("x", "y", "z"));
        ch.point("io", 0, 1.5).point("io", 1, 2.5).point("io", 2, 3.5);
        ch.write(dir.resolve("cat.png"));
        png(dir.resolve("cat.png"));
    }

    @Test
    void aChartWithoutValuesIsEmpty() {
        assertTrue(new LineChart("t", "x", "y").point("a", 1, null).point("a", 2, Double.NaN).isEmpty());
    }

    @Test
    void logDotsSkipMissingValues(@TempDir Path dir) throws Exception {
        Map<String, List<Double>> v = new LinkedHashMap<>();
        v.put("p50", List.of(0.5, 1.2));
        v.put("p99", Arrays.asList(3.0, null));
        v.put("p99.9", Arrays.asList(null, null));
        Charts.dots(dir.resolve("bars.png"), "latency", "ms", true, List.of("doubleface", "type2b"), v);
        BufferedImage img = png(dir.resolve("bars.png"));
        int colored = 0;
        for (int x = 0; x < img.getWidth(); x += 3) {
            for (int y = 0; y < img.getHeight(); y += 3) {
                int rgb = img.getRGB(x, y) & 0xFFFFFF;
                int r = rgb >> 16;
                int g = (rgb >> 8) & 0xFF;
                int b = rgb & 0xFF;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    colored++;
                }
            }
        }
        assertTrue(colored > 5, "dots drawn: " + colored + " colored samples");
    }
}
