package io.doubleface.experiments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each experiment's tables, rendered again from a committed run's {@code summary.json} and
 * {@code environment.json} ({@link ReportReplay}), give that run's committed {@code report.md}
 * byte for byte: the report code of the experiment classes and {@link Report} still writes what
 * the runs in {@code docs/results} show. The runs are ones whose tables need no interval logs.
 */
class ReportReplayTest {

    private static final Path RESULTS = Path.of("..", "docs", "results");

    @ParameterizedTest
    @ValueSource(strings = {"concurrency-20261124T145907Z", "fanout-20261123T190132Z"})
    void replayedReportIsTheCommittedOne(String run, @TempDir Path out) throws Exception {
        ReportReplay.render(RESULTS.resolve(run), out);
        assertEquals(Files.readString(RESULTS.resolve(run).resolve("report.md")), Files.readString(out.resolve("report.md")),
                run);
        for (String png : Files.readString(out.resolve("report.md")).lines()
                .filter(l -> l.startsWith("![")).map(l -> l.substring(2, l.indexOf(']'))).toList()) {
            assertTrue(Files.size(out.resolve(png)) > 0, png);
        }
    }
}
