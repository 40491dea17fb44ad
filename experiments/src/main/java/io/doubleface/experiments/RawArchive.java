package io.doubleface.experiments;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Packs a finished results directory's raw files into archives, the rule of
 * {@code bench/results-pack.py} (keep the two in step): what a reader opens stays as files
 * ({@code *.md}, plots, {@code *.csv}, {@code *.txt}, {@code summary.json}, {@code environment.json},
 * {@code profile.json}, {@code quality.json}, except inside {@code logs/}, {@code runs/} and
 * {@code intervals/}); the interval logs ({@code *.hlog}) go into {@value #INTERVALS} (not committed:
 * most of the bytes, and they do not compress), every other raw file into {@value #ARCHIVE}.
 *
 * <p>Uses GNU {@code tar} with {@code xz} (the JDK has no xz encoder), with sorted members, owner 0
 * and mtime 0, so the same files give the same archive. Stateless.
 */
final class RawArchive {

    /** Archive of the raw files other than the interval logs: {@value}. */
    static final String ARCHIVE = "raw.tar.xz";
    /** Archive of the interval logs: {@value}. */
    static final String INTERVALS = "intervals.tar.xz";

    private static final List<PathMatcher> KEEP = Stream.of("*.md", "*.png", "*.svg", "*.csv", "*.txt",
            "summary.json", "environment.json", "profile.json", "quality.json")
            .map(g -> FileSystems.getDefault().getPathMatcher("glob:" + g)).toList();
    private static final Set<String> RAW_DIRS = Set.of("logs", "runs", "intervals");

    private RawArchive() {}

    /** Whether {@code rel} (a path inside a results directory) stays a file in git. */
    static boolean kept(Path rel) {
        for (int i = 0; i < rel.getNameCount() - 1; i++) {
            if (RAW_DIRS.contains(rel.getName(i).toString())) {
                return false;
            }
        }
        Path name = rel.getFileName();
        return KEEP.stream().anyMatch(m -> m.matches(name));
    }

    /** The raw files of {@code dir}, relative to it, sorted. */
    static List<String> rawFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).map(dir::relativize)
                    .filter(rel -> !kept(rel) && !rel.toString().equals(ARCHIVE) && !rel.toString().equals(INTERVALS))
                    .map(p -> p.toString().replace('\\', '/')).sorted().toList();
        }
    }

    /**
     * Packs {@code dir}'s raw files and removes them (and the directories left empty).
     *
     * @return what was packed, for the progress output
     * @throws IOException if {@code tar} fails or is missing (the files are then left as they are)
     */
    static String pack(Path dir) throws IOException {
        List<String> raw = rawFiles(dir);
        List<String> hlogs = raw.stream().filter(f -> f.endsWith(".hlog")).toList();
        List<String> other = raw.stream().filter(f -> !f.endsWith(".hlog")).toList();
        List<String> said = new ArrayList<>();
        if (!other.isEmpty()) {
            tar(dir, ARCHIVE, other);
            said.add(other.size() + " raw files into " + ARCHIVE);
        }
        if (!hlogs.isEmpty()) {
            tar(dir, INTERVALS, hlogs);
            said.add(hlogs.size() + " interval logs into " + INTERVALS);
        }
        for (String f : raw) {
            Files.delete(dir.resolve(f));
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path d : s.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList()) {
                try (Stream<Path> in = Files.list(d)) {
                    if (!d.equals(dir) && in.findAny().isEmpty()) {
                        Files.delete(d);
                    }
                }
            }
        }
        return said.isEmpty() ? "nothing to pack" : String.join(", ", said);
    }

    private static void tar(Path dir, String archive, List<String> files) throws IOException {
        ProcessBuilder pb = new ProcessBuilder("tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner",
                "--mtime=@0", "-cJf", archive, "-T", "-").directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().put("XZ_OPT", "-9");
        Process p = pb.start();
        try (OutputStream in = p.getOutputStream()) {
            in.write((String.join("\n", files) + "\n").getBytes(StandardCharsets.UTF_8));
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        try {
            if (p.waitFor() != 0) {
                Files.deleteIfExists(dir.resolve(archive));
                throw new IOException("tar -cJf " + archive + " in " + dir + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while packing " + dir, e);
        }
    }
}
