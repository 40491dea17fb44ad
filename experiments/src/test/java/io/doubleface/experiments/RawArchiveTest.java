package io.doubleface.experiments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A finished results directory is packed as {@code bench/results-pack.py} packs one: reports,
 * summaries and plots stay, raw files go into {@code raw.tar.xz}, interval logs into
 * {@code intervals.tar.xz}; the script and this class keep the same files.
 */
class RawArchiveTest {

    private static final List<String> KEPT = List.of("report.md", "summary.json", "environment.json", "profile.json",
            "p99.png", "sub-run/report.md", "sub-run/summary.json", "table.csv", "notes.txt");
    private static final List<String> RAW = List.of("leaf.log", "mid-tier.log", "mid-tier.ready.json",
            "logs/run-0001.log", "logs/notes.txt", "runs/r1/wrk.txt", "open-1.json", "sub-run/server.log");
    private static final List<String> HLOGS = List.of("intervals/run-0001.hlog", "sub-run/intervals/run-0001.hlog");

    private static Path run(Path dir) throws Exception {
        for (String f : Stream.of(KEPT, RAW, HLOGS).flatMap(List::stream).toList()) {
            Path p = dir.resolve(f);
            Files.createDirectories(p.getParent());
            Files.writeString(p, "content of " + f + "\n", StandardCharsets.UTF_8);
        }
        return dir;
    }

    private static List<String> files(Path dir) throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }

    private static List<String> tarList(Path archive) throws Exception {
        Process p = new ProcessBuilder("tar", "-tJf", archive.toString()).redirectErrorStream(true).start();
        List<String> names = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().sorted()
                .toList();
        assertEquals(0, p.waitFor(), names.toString());
        return names;
    }

    @Test
    void rawFilesGoIntoTheArchivesAndReportsStay(@TempDir Path tmp) throws Exception {
        Path dir = run(tmp.resolve("fanout-20261126T000000Z"));
        assertEquals("8 raw files into raw.tar.xz, 2 interval logs into intervals.tar.xz", RawArchive.pack(dir));
        List<String> expected = Stream.concat(KEPT.stream(), Stream.of("raw.tar.xz", "intervals.tar.xz")).sorted().toList();
        assertEquals(expected, files(dir));
        assertEquals(RAW.stream().sorted().toList(), tarList(dir.resolve("raw.tar.xz")));
        assertEquals(HLOGS, tarList(dir.resolve("intervals.tar.xz")));
        assertFalse(Files.exists(dir.resolve("logs")), "emptied directories are removed");
        assertEquals("nothing to pack", RawArchive.pack(dir));
    }

    @Test
    void theScriptKeepsTheSameFiles(@TempDir Path tmp) throws Exception {
        Path script = Path.of("..", "bench", "results-pack.py").toAbsolutePath().normalize();
        Path java = run(tmp.resolve("java"));
        Path python = run(tmp.resolve("python"));
        RawArchive.pack(java);
        Process p = new ProcessBuilder("python3", script.toString(), python.toString()).redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        assertEquals(files(java), files(python));
        assertEquals(tarList(java.resolve("raw.tar.xz")), tarList(python.resolve("raw.tar.xz")));
        assertTrue(out.contains("8 files into raw.tar.xz"), out);
    }
}
