package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.server.FanoutServer;
import io.doubleface.tune.Profile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve ycsb --config adaptive|adaptive-window|fm [--profile FILE]}. */
class ServeAdaptiveTest {

    static final String[] BASE = {"serve", "ycsb", "--port", "0", "--admin-port", "0", "--embedded-shards", "4",
        "--records", "100", "--io-threads", "2"};

    static String[] args(String... more) {
        String[] a = new String[BASE.length + more.length];
        System.arraycopy(BASE, 0, a, 0, BASE.length);
        System.arraycopy(more, 0, a, BASE.length, more.length);
        return a;
    }

    @Test
    void adaptiveWithAProfileStartsOnItsPeakSustainingConfiguration(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("p.json");
        Profile.builder().service("ycsb")
                .point("sip", new Profile.Point(100, 50, 100, 200, 100, 0.5, false))
                .point("adb", new Profile.Point(100, 80, 300, 600, 100, 0.2, false))
                .point("adb", new Profile.Point(5000, 90, 400, 800, 5000, 1.0, false))
                .build().write(file);
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start(args("--config", "adaptive", "--profile", file.toString(),
                "--tune-interval", "10ms"));
        FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
        try {
            assertNotNull(server.internals().adapter());
            assertEquals(java.time.Duration.ofMillis(10), server.internals().adapter().settings().interval());
            assertEquals("adb-1n-4w-4r", server.configuration().name());
            assertTrue(r.out().contains("adapter  adaptive, detector ring-16, profile " + file + " (2 configurations)"),
                    r.out());
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
    }

    @Test
    void fmWithoutAProfileExploresFromTheAnchor() throws Exception {
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start(args("--config", "fm", "--profile", "none", "--tune-candidates",
                "doubleface,sip"));
        FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
        try {
            assertEquals("doubleface", server.configuration().name());
            assertTrue(r.out().contains("adapter  fm, detector window-5ms, no profile: exploring from doubleface over "
                    + "[doubleface, sip]"), r.out());
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
    }

    @Test
    void staticConfigurationHasNoAdapterAndPreparesWhatItIsTold() throws Exception {
        CliRun r = new CliRun();
        CompletableFuture<Integer> exit = r.start(args("--config", "sdb-1n-8w", "--prepare", "sip,adb"));
        FanoutServer server = r.server.get(30, TimeUnit.SECONDS);
        try {
            assertNull(server.internals().adapter());
            assertEquals("sdb-1n-8w", server.configuration().name());
            assertEquals(java.util.List.of("sdb-1n-8w", "sip", "adb-1n-4w-4r"),
                    server.internals().stats().configurations(), "prepared at start");
        } finally {
            assertEquals(0, r.stopAndAwait(exit), r.err());
        }
    }

    @Test
    void badProfilesAndOptionsAreUsageErrors(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"version\": 9, \"configurations\": []}");
        CliRun r = new CliRun();
        assertEquals(2, r.run(args("--config", "adaptive", "--profile", bad.toString())));
        assertTrue(r.err().contains("--profile: profile " + bad + ": version 9 is not supported (expected: 1)"), r.err());

        CliRun missing = new CliRun();
        assertEquals(2, missing.run(args("--config", "adaptive", "--profile", dir.resolve("none.json").toString())));
        assertTrue(missing.err().contains("--profile: cannot read"), missing.err());

        CliRun stat = new CliRun();
        assertEquals(2, stat.run(args("--config", "doubleface", "--profile", bad.toString())));
        assertTrue(stat.err().contains("--profile applies only to --config adaptive, adaptive-window or fm"), stat.err());

        CliRun interval = new CliRun();
        assertEquals(2, interval.run(args("--config", "adaptive", "--tune-interval", "2s")));
        assertTrue(interval.err().contains("tune interval: 2000000 µs (expected: 100 µs .. 1 s)"), interval.err());

        CliRun det = new CliRun();
        assertEquals(2, det.run(args("--config", "adaptive", "--tune-detector", "ewma")));
        assertTrue(det.err().contains("load detector 'ewma'"), det.err());

        CliRun cand = new CliRun();
        assertEquals(2, cand.run(args("--config", "adaptive", "--tune-candidates", "doubleface,sip")));
        assertTrue(cand.err().contains("--tune-candidates applies only without a profile (--profile none)"), cand.err());

        CliRun name = new CliRun();
        assertEquals(2, name.run(args("--config", "sdb-2r")));
        assertTrue(name.err().contains("sdb is synchronous and has no response threads"), name.err());
    }
}
