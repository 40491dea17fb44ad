import java.io.File;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

/**
 * Prints one CSV row per interval of a load generator's latency log (doubleface load --hlog): the
 * interval's start (epoch ms), count, p50, p99 and max in ms. The send-lag histograms (tagged) are
 * skipped. Run with the CLI jar on the class path:
 * {@code java -cp cli/target/doubleface.jar bench/HlogSeconds.java FILE.hlog}.
 */
public final class HlogSeconds {
    public static void main(String[] args) throws Exception {
        System.out.println("start_ms,count,p50_ms,p99_ms,max_ms");
        try (HistogramLogReader r = new HistogramLogReader(new File(args[0]))) {
            EncodableHistogram h;
            while ((h = r.nextIntervalHistogram()) != null) {
                if (h.getTag() != null || !(h instanceof Histogram hist)) {
                    continue;
                }
                System.out.printf("%d,%d,%.3f,%.3f,%.3f%n", hist.getStartTimeStamp(), hist.getTotalCount(),
                        hist.getValueAtPercentile(50) / 1000.0, hist.getValueAtPercentile(99) / 1000.0,
                        hist.getMaxValue() / 1000.0);
            }
        }
    }
}
