package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.experiments.MiniJson;
import io.doubleface.model.Configuration;
import io.doubleface.tune.Profile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code doubleface train} and the μTune experiments over real separate processes: bad input, a
 * tiny training run whose profile is read back, and a steady-load run of a static configuration
 * against the load adapter (its own mid-tier) over that profile.
 */
class TrainCommandTest {

    @Test
    void badInputIsAUsageError() {
        String[][] bad = {
            {"train"}, // --out is required
            {"train", "--out", "p.json", "--service", "web"},
            {"train", "--out", "p.json", "--service", "hdsearch", "--shards", "grpc://127.0.0.1:1-4"},
            {"train", "--out", "p.json", "--loads", "-5"},
            {"train", "--out", "p.json", "--loads", "fast"},
            {"train", "--out", "p.json", "--configs", "doubleface,type9"},
            {"train", "--out", "p.json", "--shards", "ftp://127.0.0.1:1"},
            {"train", "--out", "p.json", "--driver", "cassandra"},
            {"train", "--out", "/no/such/dir/p.json"},
            {"train", "--out", "p.json", "--duration", "0s"},
        };
        for (String[] args : bad) {
            CliRun r = new CliRun();
            assertEquals(DoubleFaceCli.EXIT_USAGE, r.run(args), () -> String.join(" ", args) + "\n" + r.err());
            assertTrue(r.err().contains("Try 'doubleface train") && r.err().lines().count() <= 3, r.err());
        }
    }

    @Test
    void experimentsRejectBadTuneOptions() {
        String[][] bad = {
            {"experiment", "mutune-models", "--loads", "0"},
            {"experiment", "mutune-steady", "--profile", "/no/such/profile.json"},
            {"experiment", "fanout", "--configs", "doubleface@connection=shared,nope@x=1"},
        };
        for (String[] args : bad) {
            CliRun r = new CliRun();
            assertEquals(DoubleFaceCli.EXIT_USAGE, r.run(args), () -> String.join(" ", args) + "\n" + r.err());
        }
    }

    @Test
    void trainsAProfileAndTheAdapterRunsOverIt(@TempDir Path tmp) throws Exception {
        Path profileFile = tmp.resolve("p.json");
        CliRun r = new CliRun();
        // 6 s steps: 15,000+ samples, more than the 10,000 a p99 needs (docs/measuring.md#samples-per-percentile)
        int exit = r.run("train", "--no-pin", "--configs", "doubleface,sdb", "--loads", "2500,3000", "--duration", "6s",
                "--repeats", "2",
                "--warmup", "300ms", "--global-warmup", "1s", "--shard-count", "5", "--out", profileFile.toString(),
                "--results", tmp.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
        Path dir = only(tmp, "mutune-models-");
        String report = Files.readString(dir.resolve("report.md"));
        Profile p = Profile.read(profileFile);
        assertEquals(List.of("doubleface", "sdb-1n-64w"), p.configurations().stream().map(Configuration::name).toList(), report);
        for (Configuration c : p.configurations()) {
            assertEquals(2, p.points(c).size(), c.name());
            Profile.Point at2500 = p.points(c).get(0);
            assertEquals(2500, at2500.load(), 2500 * 0.05, c.name());
            assertTrue(at2500.p99Micros() >= at2500.p50Micros() && at2500.p50Micros() > 0, at2500.toString());
            assertTrue(at2500.throughput() > 0, at2500.toString());
            // two repeats: the median and the range of the two repeats' p99s
            assertEquals(2, at2500.repeats(), at2500.toString());
            assertTrue(at2500.p99LowMicros() <= at2500.p99Micros() && at2500.p99Micros() <= at2500.p99HighMicros()
                    && at2500.p99LowMicros() > 0, at2500.toString());
        }
        assertTrue(r.out().matches("(?s).*train:   at 2\\d{3} req/s: .*"),
                "the bands printed: " + r.out());
        assertTrue(Files.size(tmp.resolve("p.png")) > 0, "the plot next to the profile");
        assertTrue(report.contains("p99 relative to the best configuration"), report);
        assertTrue(r.out().contains("train: profile " + profileFile), r.out());

        CliRun s = new CliRun();
        exit = s.run("experiment", "mutune-steady", "--quick", "--no-pin", "--keep-raw", "--configs", "doubleface,adaptive",
                "--profile", profileFile.toString(), "--duration", "4s", "--warmup", "300ms", "--global-warmup", "1s",
                "--shards", "5", "--out", tmp.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, s.out() + s.err());
        Path steady = only(tmp, "mutune-steady-quick-");
        assertTrue(Files.size(steady.resolve("mid-tier-2.log")) > 0, "the adapter runs in a mid-tier of its own");
        assertTrue(Files.readString(steady.resolve("mid-tier-2.log")).contains("adaptive"),
                Files.readString(steady.resolve("mid-tier-2.log")));
        Map<String, Object> summary = MiniJson.object(Files.readString(steady.resolve("summary.json")));
        Map<String, Object> steps = MiniJson.path(summary, "results", "steps").asMap();
        assertEquals(3, steps.size(), steps.toString()); // --quick: 20%, 60%, 20% of capacity
        int measured = 0;
        for (Object o : steps.values()) {
            // one repeat (--quick): its p99 is the merged one (none when a 1-s step has no full
            // interval), and there is no spread to report
            Map<?, ?> step = (Map<?, ?>) o;
            List<?> reps = (List<?>) ((Map<?, ?>) step.get("p99_per_repeat")).get("doubleface");
            if (step.get("doubleface") == null) {
                assertEquals(List.of(), reps, step.toString());
            } else {
                measured++;
                assertEquals(1, reps.size(), step.toString());
                assertEquals(((Number) step.get("doubleface")).doubleValue(), ((Number) reps.get(0)).doubleValue(), 1e-9);
            }
            assertNull(step.get("best_static_repeat_spread"), step.toString());
        }
        // 4-s steps: at least two whole 1-s intervals after each step's first second, so the 60% step has
        // the 10,000 samples a p99 needs even when the trained capacity is low (2-s steps left one
        // interval, which the window missed when the interval boundaries fell just before the step's)
        assertTrue(measured > 0, "4-s steps leave whole intervals after the first second: " + steps);
        for (Map<String, Object> run : MiniJson.objects(summary, "runs")) {
            assertEquals(0, MiniJson.path(run, "load", "errors").asLong(), run.toString());
            assertTrue(MiniJson.path(run, "load", "requests").asLong() > 0, run.toString());
        }
        assertTrue(MiniJson.objects(summary, "runs").stream().anyMatch(run -> "adaptive".equals(run.get("config"))
                && run.get("adapter") instanceof Map<?, ?> a && a.containsKey("live") && a.containsKey("switch_log")),
                "the adapter's stats after each adaptive run are in summary.json");
        Map<String, Object> choices = MiniJson.path(summary, "results", "adapter_choices").asMap();
        assertNotNull(choices.get("adaptive"), choices.toString());
        String report2 = Files.readString(steady.resolve("report.md"));
        assertTrue(report2.contains("adapter switches"), report2);
    }

    @Test
    void trainsAProfileOfARunningMidTier(@TempDir Path tmp) throws Exception {
        Path profileFile = tmp.resolve("running.json");
        try (RunningMidTier m = new RunningMidTier(tmp)) {
            CliRun r = new CliRun();
            // 6 s at 2,000 req/s: 12,000 samples, more than the 10,000 a p99 needs (docs/measuring.md#samples-per-percentile)
            int exit = r.run("train", "--keep-raw", "--midtier", m.midTier(), "--admin", m.admin(), "--admin-token-file",
                    m.tokenFile.toString(), "--configs", "doubleface,sip", "--loads", "2000", "--duration", "6s", "--repeats", "1",
                    "--warmup", "300ms", "--global-warmup", "1s", "--out", profileFile.toString(), "--results",
                    tmp.toString());
            assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
            Profile p = Profile.read(profileFile);
            assertEquals(2, p.configurations().size(), p.configurations().toString());
            for (Configuration c : p.configurations()) {
                Profile.Point at = p.points(c).get(0);
                assertEquals(1, p.points(c).size(), c.name());
                assertTrue(at.throughput() > 0 && at.p50Micros() > 0, at.toString());
            }
            // trained on the running server: both configurations were activated there
            List<String> to = MiniJson.objects(m.stats(), "switch_log").stream().map(x -> (String) x.get("to")).toList();
            assertTrue(to.stream().anyMatch(c -> c.startsWith("sip")), to.toString());
            Path dir = only(tmp, "mutune-models-");
            assertFalse(Files.exists(dir.resolve("mid-tier.log")), "no mid-tier process");
        }
    }

    @Test
    void theAdapterRunsOverAMuSuiteServiceWithItsProfile(@TempDir Path tmp) throws Exception {
        Path profileFile = tmp.resolve("setalgebra.json");
        Profile.builder().service("setalgebra")
                .point("doubleface", new Profile.Point(200, 300, 900, 1500, 200, 0.3, false))
                .point("doubleface", new Profile.Point(4000, 500, 2000, 4000, 4000, 0.9, false))
                .point("sip", new Profile.Point(200, 200, 500, 900, 200, 0.2, false))
                .point("sip", new Profile.Point(4000, 900, 9000, 20000, 3000, 1.0, true))
                .build().write(profileFile);
        CliRun s = new CliRun();
        int exit = s.run("experiment", "mutune-steady", "--quick", "--no-pin", "--keep-raw", "--service", "setalgebra", "--configs",
                "adaptive", "--profile", profileFile.toString(), "--loads", "500", "--duration", "2s", "--warmup", "300ms",
                "--global-warmup", "1s", "--shards", "3", "--out", tmp.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, s.out() + s.err());
        Path steady = only(tmp, "mutune-steady-quick-");
        String mid = Files.readString(steady.resolve("mid-tier.log"));
        assertTrue(mid.contains("doubleface serve setalgebra") && mid.contains("adapter  adaptive, detector ring-16, "
                + "profile " + profileFile), mid);
        Map<String, Object> summary = MiniJson.object(Files.readString(steady.resolve("summary.json")));
        List<Map<String, Object>> runs = MiniJson.objects(summary, "runs");
        assertEquals(1, runs.size(), runs.toString()); // one run stepping through the loads (one step: 500 req/s)
        for (Map<String, Object> run : runs) {
            assertEquals("/setalgebra?query={key}&limit=10", MiniJson.path(run, "load", "mix").asString());
            assertEquals(0, MiniJson.path(run, "load", "errors").asLong(), run.toString());
            assertTrue(MiniJson.path(run, "load", "requests").asLong() > 0, run.toString());
            assertTrue(run.get("adapter") instanceof Map<?, ?> a && a.containsKey("switch_log"), run.toString());
        }
    }

    private static Path only(Path dir, String prefix) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> l = s.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
            assertEquals(1, l.size(), l.toString());
            return l.get(0);
        }
    }
}
