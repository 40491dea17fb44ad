package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code demo} end to end, in-process, in its quickest form: correctness phase, closed- and
 * open-loop runs, the table and the report directory. Asserts behaviour, never speed.
 */
class DemoCommandTest {

    @Test
    void quickDemoWritesTheReportWithOneEntryPerConfiguration(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("demo");
        CliRun r = new CliRun();
        int code = r.run("demo", "--quick", "--configs", "doubleface,type2a-1f1b", "--out", out.toString());
        assertEquals(0, code, () -> "stdout:\n" + r.out() + "\nstderr:\n" + r.err());

        String stdout = r.out();
        assertTrue(stdout.contains("correctness: all 200 queries answered 200 with byte-identical bodies under the 2 "
                + "configurations"), stdout);
        assertTrue(stdout.contains("same process, shared cores"), stdout);
        for (String config : new String[] {"doubleface", "type2a-1f1b"}) {
            assertTrue(stdout.matches("(?s).*\\n" + Pattern.quote(config) + " +\\d+ +\\d+ .*"),
                    () -> config + " row missing:\n" + stdout);
        }
        assertTrue(r.err().contains("demo: [3/3] open loop 2/2: type2a-1f1b"), r.err());

        for (String f : new String[] {"report.md", "summary.json", "environment.json", "latency.png"}) {
            assertTrue(Files.size(out.resolve(f)) > 0, f);
        }
        BufferedImage png = ImageIO.read(out.resolve("latency.png").toFile());
        assertTrue(png != null && png.getWidth() > 0, "latency.png is not a PNG");

        String summary = Files.readString(out.resolve("summary.json"));
        for (String config : new String[] {"doubleface", "type2a-1f1b"}) {
            assertEquals(1, count(summary, "\"configuration\": \"" + config + "\""), summary);
        }
        Matcher tp = Pattern.compile("\"throughput_rps\": ([0-9.]+)").matcher(summary);
        int entries = 0;
        while (tp.find()) {
            entries++;
            assertTrue(Double.parseDouble(tp.group(1)) > 0, summary);
        }
        assertEquals(2, entries, summary);
        for (String field : new String[] {"p50_ms", "p99_ms", "p999_ms"}) {
            Matcher m = Pattern.compile("\"" + field + "\": (null|[0-9]+\\.[0-9]+)[,\\n]").matcher(summary);
            int n = 0;
            while (m.find()) {
                n++;
            }
            assertEquals(2, n, () -> field + " missing or not a number/null:\n" + summary);
        }

        String environment = Files.readString(out.resolve("environment.json"));
        for (String key : new String[] {"\"git_commit\"", "\"jdk\"", "\"cpus\"", "\"configurations\"",
            "\"closed_loop_duration_s\"", "\"open_loop_duration_s\"", "\"warmup_s\"", "\"open_loop_rate_rps\""}) {
            assertTrue(environment.contains(key), () -> key + " missing:\n" + environment);
        }
        String report = Files.readString(out.resolve("report.md"));
        assertTrue(report.contains("| doubleface |") && report.contains("latency.png"), report);
    }

    @Test
    void demoTakesItsWorkloadOptionsAndTheDeprecatedRequestsAlias(@TempDir Path dir) throws Exception {
        CliRun r = new CliRun();
        int code = r.run("demo", "--requests", "40", "--users", "3", "--fanout", "4", "--size", "large",
                "--configs", "doubleface-fifo,type2b-fixed-2", "--embedded-shards", "4", "--records", "30",
                "--io-threads", "1", "--rate", "100", "--warmup", "0ms", "--duration", "500ms",
                "--open-duration", "500ms", "--out", dir.toString());
        assertEquals(0, code, () -> "stdout:\n" + r.out() + "\nstderr:\n" + r.err());
        assertTrue(r.out().contains("GET /query?fanout=4&size=large&key={key}"), r.out());
        assertTrue(r.out().contains("correctness: all 40 queries"), r.out());
        assertTrue(r.out().matches("(?s).*\\ndoubleface-fifo +\\d+ +100 .*"), r.out());
        assertTrue(r.out().matches("(?s).*\\ntype2b-fixed-2 +\\d+ +100 .*"), r.out());
        // 50 samples: too few for any reported percentile
        assertTrue(Files.readString(dir.resolve("summary.json")).contains("\"p999_ms\": null"));
    }

    @Test
    void badDemoOptionsAreUsageErrors() {
        for (String[] args : new String[][] {{"demo", "--users", "0"}, {"demo", "--rate", "-5"},
            {"demo", "--duration", "0ms"}, {"demo", "--check-requests", "0"}}) {
            CliRun r = new CliRun();
            assertEquals(2, r.run(args), () -> String.join(" ", args) + "\nstderr: " + r.err());
        }
    }

    private static int count(String s, String part) {
        int n = 0;
        for (int i = s.indexOf(part); i >= 0; i = s.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }
}
