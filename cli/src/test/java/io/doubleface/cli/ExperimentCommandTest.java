package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.experiments.MiniJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code doubleface experiment}: bad input, and a real (tiny) run over separate processes — a KV
 * leaf JVM, a mid-tier JVM and load-generator JVMs — whose results directory is checked.
 */
class ExperimentCommandTest {

    @Test
    void badInputIsAUsageError() {
        String[][] bad = {
            {"experiment"},
            {"experiment", "nonsense"},
            {"experiment", "fanout", "--configs", "doubleface,type9"},
            {"experiment", "fanout", "--fanouts", "30"},
            {"experiment", "fanout", "--sizes", "huge"},
            {"experiment", "fanout", "--driver", "cassandra"},
            {"experiment", "fanout", "--repeats", "0"},
            {"experiment", "priority", "--load-fraction", "0"},
            {"experiment", "fanout", "--service", "router"},
            {"experiment", "variability", "--configs", "doubleface+flush=sometimes"},
            {"experiment", "variability", "--configs", "doubleface+color=blue"},
        };
        for (String[] args : bad) {
            CliRun r = new CliRun();
            assertEquals(DoubleFaceCli.EXIT_USAGE, r.run(args), () -> String.join(" ", args) + "\n" + r.err());
            assertTrue(r.err().contains("Try 'doubleface experiment") && r.err().lines().count() <= 3, r.err());
        }
    }

    @Test
    void aTinyFanoutRunWritesTheResultsDirectory(@TempDir Path out) throws Exception {
        CliRun r = new CliRun();
        int exit = r.run("experiment", "fanout", "--quick", "--no-pin", "--configs", "doubleface,type2a-1f1b",
                "--fanouts", "1,5", "--sizes", "small", "--concurrency", "4", "--duration", "1s", "--warmup",
                "500ms", "--global-warmup", "1s", "--shards", "5", "--out", out.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
        Path dir;
        try (Stream<Path> s = Files.list(out)) {
            dir = s.filter(p -> p.getFileName().toString().startsWith("fanout-quick-")).findFirst().orElseThrow();
        }
        for (String f : List.of("report.md", "summary.json", "environment.json", "fanout-small-c4.png", "raw.tar.xz",
                "intervals.tar.xz")) {
            assertTrue(Files.size(dir.resolve(f)) > 0, f);
        }
        // the raw files are packed (docs/results/README.md): process logs and run logs in raw.tar.xz, interval logs apart
        List<String> raw = tarList(dir.resolve("raw.tar.xz"));
        assertTrue(raw.containsAll(List.of("mid-tier.log", "leaf.log", "logs/run-0001.log")), raw.toString());
        assertTrue(raw.stream().noneMatch(f -> f.endsWith(".hlog")), raw.toString());
        assertTrue(!Files.exists(dir.resolve("mid-tier.log")) && !Files.exists(dir.resolve("logs")), "packed, not left");
        List<String> intervals = tarList(dir.resolve("intervals.tar.xz"));
        Map<String, Object> summary = MiniJson.object(Files.readString(dir.resolve("summary.json")));
        List<Object> runs = MiniJson.path(summary, "runs").asList();
        assertEquals(4, runs.size()); // 2 fanouts × 2 configurations × 1 repeat
        for (Object o : runs) {
            @SuppressWarnings("unchecked")
            Map<String, Object> run = (Map<String, Object>) o;
            long requests = MiniJson.path(run, "load", "requests").asLong();
            assertTrue(requests > 0, run.toString());
            assertEquals(0, MiniJson.path(run, "load", "errors").asLong(), run.toString());
            // the mid-tier answered at least what the generator counted (plus warm-up), and its counters moved
            assertTrue(MiniJson.path(run, "mid_tier", "requests").asLong() >= requests, run.toString());
            assertTrue(MiniJson.path(run, "mid_tier", "loops", "io", "wakeups").asLong() > 0, run.toString());
            assertTrue(intervals.contains(MiniJson.path(run, "interval_log").asString()), intervals.toString());
        }
        Map<String, Object> ratios = MiniJson.path(summary, "results", "throughput_rps_relative_to_doubleface").asMap();
        assertEquals(2, ratios.size(), ratios.toString());
        String report = Files.readString(dir.resolve("report.md"));
        assertTrue(report.contains("throughput relative to doubleface"), report);
        Map<String, Object> env = MiniJson.object(Files.readString(dir.resolve("environment.json")));
        assertEquals("kv", env.get("driver"));
        assertTrue(r.out().contains("[  4/4]"), r.out());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"router, 6, 1000, leaves", "social, 2, 200, social leaf: 200 users"})
    void aTinyRunOverAServiceStartsItsLeavesAndAsksItsRequests(String service, int shards, int records,
            String leafLine, @TempDir Path out) throws Exception {
        CliRun r = new CliRun();
        int exit = r.run("experiment", "concurrency", "--quick", "--no-pin", "--keep-raw", "--service", service, "--configs",
                "doubleface,type2a-1f1b", "--concurrency", "4", "--sizes", "small", "--duration", "1s", "--warmup",
                "500ms", "--global-warmup", "1s", "--shards", Integer.toString(shards), "--records",
                Integer.toString(records), "--out", out.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
        Path dir;
        try (Stream<Path> s = Files.list(out)) {
            dir = s.filter(p -> p.getFileName().toString().startsWith("concurrency-quick-")).findFirst().orElseThrow();
        }
        Map<String, Object> env = MiniJson.object(Files.readString(dir.resolve("environment.json")));
        assertEquals(service, env.get("service"));
        assertTrue(Files.readString(dir.resolve("leaf.log")).contains(leafLine), "a " + service + " leaf process");
        Map<String, Object> summary = MiniJson.object(Files.readString(dir.resolve("summary.json")));
        List<Object> runs = MiniJson.path(summary, "runs").asList();
        assertEquals(2, runs.size(), runs.toString());
        for (Object o : runs) {
            @SuppressWarnings("unchecked")
            Map<String, Object> run = (Map<String, Object>) o;
            assertTrue(MiniJson.path(run, "load", "requests").asLong() > 0, run.toString());
            assertEquals(0, MiniJson.path(run, "load", "errors").asLong(), run.toString());
            for (Object c : MiniJson.path(run, "load", "classes").asList()) { // every request of the mix was sent
                @SuppressWarnings("unchecked")
                Map<String, Object> requestClass = (Map<String, Object>) c;
                assertTrue(MiniJson.path(requestClass, "requests").asLong() > 0, requestClass.toString());
            }
        }
        // the service's own requests (router: gets and sets; social: timeline reads and posts), not YCSB
        // queries, reached the mid-tier
        String mid = Files.readString(dir.resolve("mid-tier.log"));
        assertTrue(mid.contains("doubleface serve " + service), mid);
    }

    @Test
    void aTinyPriorityRunReportsRequestClassesAndTailBatches(@TempDir Path out) throws Exception {
        CliRun r = new CliRun();
        int exit = r.run("experiment", "priority", "--quick", "--no-pin", "--configs", "doubleface-cfa,doubleface-fifo",
                "--duration", "1s", "--warmup", "300ms", "--global-warmup", "1s", "--shards", "8", "--reply-work-us", "20",
                "--out", out.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
        Path dir;
        try (Stream<Path> s = Files.list(out)) {
            dir = s.filter(p -> p.getFileName().toString().startsWith("priority-quick-")).findFirst().orElseThrow();
        }
        Map<String, Object> summary = MiniJson.object(Files.readString(dir.resolve("summary.json")));
        List<Object> runs = MiniJson.path(summary, "runs").asList();
        assertEquals(4, runs.size()); // 2 mixes × 2 configurations × 1 repeat
        for (Object o : runs) {
            @SuppressWarnings("unchecked")
            Map<String, Object> run = (Map<String, Object>) o;
            List<Object> classes = MiniJson.path(run, "load", "classes").asList();
            assertEquals(2, classes.size(), run.toString()); // Lfan and Sfan
            long sum = 0;
            for (Object c : classes) {
                sum += ((Number) ((Map<?, ?>) c).get("requests")).longValue();
            }
            assertEquals(MiniJson.path(run, "load", "requests").asLong(), sum, run.toString());
            // the DoubleFace scheduler's tail batches were counted: every reply goes through one
            assertTrue(MiniJson.path(run, "mid_tier", "loops", "io", "tail_batches").asLong() > 0, run.toString());
        }
        String report = Files.readString(dir.resolve("report.md"));
        assertTrue(report.contains("p99 of doubleface-fifo / p99 of doubleface-cfa"), report);
        assertTrue(report.contains("By request class"), report);
        assertTrue(report.contains("replies per tail batch"), report);
        // the regime beside the figures: per configuration, its run's batches and send lag
        assertTrue(report.contains("Regime of Lfan/Sfan 5/3"), report);
        for (Object o : runs) {
            @SuppressWarnings("unchecked")
            Map<String, Object> run = (Map<String, Object>) o;
            String mix = MiniJson.path(run, "params", "mix").asString();
            String config = String.valueOf(run.get("config"));
            Map<String, Object> regime = MiniJson.path(summary, "results", "regime Lfan/Sfan " + mix, config).asMap();
            assertEquals(MiniJson.path(run, "mid_tier", "loops", "io", "replies_per_tail_batch").asDouble(),
                    ((Number) regime.get("replies_per_tail_batch")).doubleValue(), 1e-9, regime + " " + run);
            // a p99 the run could not report (too few samples in a 1-s run) is null in both
            Object lag = MiniJson.path(run, "load", "send_lag_p99_ms").v();
            if (lag == null) {
                assertEquals(null, regime.get("send_lag_p99_ms"), regime + " " + run);
            } else {
                assertEquals(((Number) lag).doubleValue(), ((Number) regime.get("send_lag_p99_ms")).doubleValue(), 1e-3,
                        regime + " " + run);
            }
        }
    }

    @Test
    void aTinyPriorityRunOverAServiceAsksTheServicesRequests(@TempDir Path out) throws Exception {
        CliRun r = new CliRun();
        int exit = r.run("experiment", "priority", "--quick", "--no-pin", "--keep-raw", "--service", "router",
                "--configs", "doubleface-cf,doubleface-fifo", "--duration", "1s", "--warmup", "300ms",
                "--global-warmup", "1s", "--shards", "6", "--records", "1000", "--out", out.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
        Path dir;
        try (Stream<Path> s = Files.list(out)) {
            dir = s.filter(p -> p.getFileName().toString().startsWith("priority-quick-")).findFirst().orElseThrow();
        }
        List<Object> runs = MiniJson.path(MiniJson.object(Files.readString(dir.resolve("summary.json"))), "runs")
                .asList();
        assertEquals(2, runs.size(), runs.toString()); // one mix (the service's) × 2 configurations
        for (Object o : runs) {
            @SuppressWarnings("unchecked")
            Map<String, Object> run = (Map<String, Object>) o;
            assertTrue(MiniJson.path(run, "load", "requests").asLong() > 0, run.toString());
            assertEquals(0, MiniJson.path(run, "load", "errors").asLong(), run.toString());
            for (Object c : MiniJson.path(run, "load", "classes").asList()) { // router's gets and sets, not YCSB
                assertTrue(String.valueOf(((Map<?, ?>) c).get("url")).startsWith("/router/"), c.toString());
            }
        }
        String report = Files.readString(dir.resolve("report.md"));
        assertTrue(report.contains("router's requests: open-loop latency"), report);
        assertTrue(report.contains("p99 of doubleface-fifo / p99 of doubleface-cf"), report);
    }

    @Test
    void aTinyVariabilityRunTracesEveryStageAndSweepsTheKnobs(@TempDir Path out) throws Exception {
        CliRun r = new CliRun();
        int exit = r.run("experiment", "variability", "--quick", "--no-pin", "--configs",
                "doubleface,doubleface+flush=per-write,doubleface-poll", "--duration", "1s", "--warmup", "300ms",
                "--global-warmup", "1s", "--shards", "5", "--out", out.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
        // the knob variant ran on the same mid-tier with its knob set, and the next run set it back
        assertTrue(r.out().contains("knobs of doubleface+flush=per-write: flush-policy per-write"), r.out());
        assertTrue(r.out().contains("knobs of doubleface-poll: flush-policy per-iteration"), r.out());
        Path dir;
        try (Stream<Path> s = Files.list(out)) {
            dir = s.filter(p -> p.getFileName().toString().startsWith("variability-quick-")).findFirst().orElseThrow();
        }
        Map<String, Object> summary = MiniJson.object(Files.readString(dir.resolve("summary.json")));
        List<Map<String, Object>> runs = MiniJson.objects(summary, "runs");
        assertEquals(6, runs.size()); // 1 load × 2 arrival processes × 3 configurations
        for (Map<String, Object> run : runs) {
            long answered = MiniJson.path(run, "load", "requests").asLong();
            assertTrue(answered > 0, run.toString());
            assertEquals(0, MiniJson.path(run, "load", "errors").asLong(), run.toString());
            String model = MiniJson.path(run, "config").asString().startsWith("doubleface-poll") ? "doubleface-poll"
                    : "doubleface";
            // every request the mid-tier answered in the run's window is traced in every stage
            long mid = MiniJson.path(run, "mid_tier", "requests").asLong();
            for (String stage : List.of("queue", "plan", "round_trip", "reply_wait", "last_reply", "merge",
                    "respond", "total")) {
                long n = MiniJson.path(run, "mid_tier", "stages", model, stage, "count").asLong();
                assertTrue(Math.abs(n - mid) <= 0.02 * mid + 20, stage + " " + n + " for " + mid + " answered in " + run);
            }
        }
        // the window starts when the generator's warm-up ends: each run's generator wrote its --measure-file
        List<String> raw = tarList(dir.resolve("raw.tar.xz"));
        for (int i = 1; i <= 6; i++) {
            String f = String.format("logs/run-%04d.measuring", i + 4); // runs 1-4: 3 warm-ups, 1 capacity
            assertTrue(raw.contains(f), f + " in " + raw);
        }
        Map<String, Object> sweep = MiniJson.path(summary, "results", "knob_sweeps", "doubleface").asMap();
        assertEquals(2, sweep.size(), sweep.toString()); // one per point
        String report = Files.readString(dir.resolve("report.md"));
        assertTrue(report.contains("Stages at 50% poisson: mean / σ (C²), µs"), report);
        assertTrue(report.contains("Stages at 50% h2:4"), report);
        assertTrue(report.contains("Stages ranked by variance"), report);
        assertTrue(report.contains("doubleface at 50% poisson: the knob of the top stage"), report);
        for (String f : List.of("variability-stages-50pct-poisson.png", "variability-stages-50pct-h2-4.png",
                "variability-variance-vs-mean.png")) {
            assertTrue(Files.size(dir.resolve(f)) > 0, f);
        }
    }

    @Test
    void configurationsWithShardOptionsGetTheirOwnMidTierOverTheSameLeaf(@TempDir Path out) throws Exception {
        // real redis-server shards: per-loop connections vs one shared connection per shard, same run
        CliRun r = new CliRun();
        int exit = r.run("experiment", "fanout", "--quick", "--no-pin", "--keep-raw", "--driver", "redis", "--configs",
                "doubleface,doubleface@connection=shared", "--fanouts", "3", "--sizes", "small", "--concurrency", "2",
                "--duration", "1s", "--warmup", "300ms", "--global-warmup", "500ms", "--shards", "3", "--records",
                "200", "--out", out.toString());
        assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
        Path dir;
        try (Stream<Path> s = Files.list(out)) {
            dir = s.filter(p -> p.getFileName().toString().startsWith("fanout-quick-")).findFirst().orElseThrow();
        }
        assertTrue(Files.readString(dir.resolve("mid-tier.log")).contains("redis://127.0.0.1:"));
        assertTrue(Files.readString(dir.resolve("mid-tier-2.log")).contains("connection=shared"),
                Files.readString(dir.resolve("mid-tier-2.log")));
        Map<String, Object> env = MiniJson.object(Files.readString(dir.resolve("environment.json")));
        assertTrue(env.get("shards").toString().contains("?connection=shared"), env.toString());
        Map<String, Object> summary = MiniJson.object(Files.readString(dir.resolve("summary.json")));
        List<Map<String, Object>> runs = MiniJson.objects(summary, "runs");
        assertEquals(2, runs.size());
        for (Map<String, Object> run : runs) {
            assertTrue(MiniJson.path(run, "load", "requests").asLong() > 0, run.toString());
            assertEquals(0, MiniJson.path(run, "load", "errors").asLong(), run.toString());
            assertTrue(MiniJson.path(run, "mid_tier", "requests").asLong() > 0, run.toString());
        }
        assertEquals("doubleface@connection=shared", MiniJson.path(runs.get(1), "config").asString());
    }

    @Test
    void anExperimentOverARunningMidTierSwitchesItAndStartsNothing(@TempDir Path out) throws Exception {
        try (RunningMidTier m = new RunningMidTier(out)) {
            CliRun r = new CliRun();
            int exit = r.run("experiment", "fanout", "--quick", "--keep-raw", "--midtier", m.midTier(), "--admin",
                    m.admin(), "--admin-token-file", m.tokenFile.toString(), "--configs", "doubleface,type2a-1f1b",
                    "--fanouts", "5", "--sizes", "small", "--concurrency", "4", "--duration", "1s", "--warmup", "300ms",
                    "--global-warmup", "500ms", "--out", out.toString());
            assertEquals(DoubleFaceCli.EXIT_OK, exit, r.out() + r.err());
            // the pre-run checks say which server this is: its version (as its /admin/stats has it) and backends
            Object version = m.stats().get("version");
            String versionText = version instanceof String v ? v : "unknown";
            assertTrue(r.out().contains("experiment: mid-tier " + m.midTier() + ": doubleface " + versionText
                    + ", configuration doubleface; backends: records (kv, 5 shards: kv://127.0.0.1:"), r.out());
            Path dir;
            try (Stream<Path> s = Files.list(out)) {
                dir = s.filter(p -> p.getFileName().toString().startsWith("fanout-quick-")).findFirst().orElseThrow();
            }
            // nothing was started but load generators
            assertTrue(!Files.exists(dir.resolve("leaf.log")) && !Files.exists(dir.resolve("mid-tier.log")),
                    "no leaf, no mid-tier process");
            Map<String, Object> summary = MiniJson.object(Files.readString(dir.resolve("summary.json")));
            List<Map<String, Object>> runs = MiniJson.objects(summary, "runs");
            assertEquals(List.of("doubleface", "type2a-1f1b"), runs.stream().map(x -> x.get("config")).toList());
            for (Map<String, Object> run : runs) {
                assertTrue(MiniJson.path(run, "load", "throughput_rps").asDouble() > 0, run.toString());
                assertEquals(0, MiniJson.path(run, "load", "errors").asLong(), run.toString());
                // sampled from the server's /admin/stats: its requests, its loops, its own thread counters
                assertTrue(MiniJson.path(run, "mid_tier", "requests").asLong() >= MiniJson.path(run, "load", "requests")
                        .asLong(), run.toString());
                assertTrue(MiniJson.path(run, "mid_tier", "loops", "io", "wakeups").asLong() > 0, run.toString());
                assertTrue(MiniJson.path(run, "mid_tier", "cpu_ms").asLong() > 0, run.toString());
                assertNull(MiniJson.path(run, "mid_tier").asMap().get("active_threads"), "unknown, not 0");
            }
            // the server's switch log: both configurations were activated on it, and it was put back at the end
            Map<String, Object> stats = m.stats();
            List<String> to = MiniJson.objects(stats, "switch_log").stream().map(x -> (String) x.get("to")).toList();
            assertTrue(to.contains("type2a-1f1b") && to.indexOf("doubleface") > to.indexOf("type2a-1f1b"), to.toString());
            assertEquals("doubleface", stats.get("config"));
            Map<String, Object> env = MiniJson.object(Files.readString(dir.resolve("environment.json")));
            assertEquals(m.midTier(), MiniJson.path(env, "topology", "mid_tier").asString());
            assertEquals(m.admin(), MiniJson.path(env, "topology", "admin").asString());
            assertEquals(5, MiniJson.path(env, "topology", "server_at_start", "shards").asLong());
            assertEquals(versionText, MiniJson.path(env, "topology", "server_at_start", "version").asString());
            assertEquals("external: not pinned by the runner", MiniJson.path(env, "pinning", "mid_tier").asString());
            String all = Files.readString(dir.resolve("environment.json")) + Files.readString(dir.resolve("report.md"));
            assertTrue(!all.contains(RunningMidTier.TOKEN), "the token is never written down");
            String report = Files.readString(dir.resolve("report.md"));
            assertTrue(report.contains("- topology: external mid-tier " + m.midTier()), report);
            assertTrue(report.contains("throughput relative to doubleface"), report);
            assertTrue(report.contains("- per run: 300 ms warm-up + measured time; each configuration warmed up 500 ms "
                    + "before the first run"), report);

            // no warm-ups at all: none is run, and the report says so in words (not "warmed up 0 s")
            CliRun none = new CliRun();
            Path noWarm = Files.createDirectories(out.resolve("no-warm-up"));
            assertEquals(DoubleFaceCli.EXIT_OK, none.run("experiment", "fanout", "--quick", "--midtier", m.midTier(),
                    "--admin", m.admin(), "--admin-token-file", m.tokenFile.toString(), "--configs", "doubleface",
                    "--fanouts", "5", "--sizes", "small", "--concurrency", "4", "--duration", "1s", "--warmup", "0s",
                    "--global-warmup", "0s", "--out", noWarm.toString()), none.out() + none.err());
            assertTrue(none.out().contains("experiment: no warm-up of doubleface (--global-warmup 0s)"), none.out());
            Path dir2;
            try (Stream<Path> s = Files.list(noWarm)) {
                dir2 = s.filter(p -> p.getFileName().toString().startsWith("fanout-quick-")).findFirst().orElseThrow();
            }
            String report2 = Files.readString(dir2.resolve("report.md"));
            assertTrue(report2.contains("- per run: no warm-up, measured time only; no warm-up of a configuration before "
                    + "its first run"), report2);
        }
    }

    @Test
    void aRunningMidTierThatIsWrongOrCannotBeUsedIsAUsageError(@TempDir Path tmp) throws Exception {
        // bound but never listening, and held for the whole test: a connection there is refused, and no
        // server started meanwhile can be given the port (closing a probe socket first allowed both)
        try (java.net.Socket held = new java.net.Socket()) {
            held.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            int closed = held.getLocalPort();
            String nowhere = "http://127.0.0.1:" + closed;
            Path wrongToken = Files.writeString(tmp.resolve("wrong.token"), "not-the-token-of-that-server");
            // {arguments, what the message must say}
            List<String[][]> cases = new ArrayList<>(List.of(
                    new String[][] {{"experiment", "fanout", "--midtier", nowhere, "--admin", nowhere},
                        {"--admin " + nowhere + ": no answer (connection refused)"}},
                    new String[][] {{"experiment", "fanout", "--midtier", "ftp://127.0.0.1:1"}, {"--midtier: ftp://"}},
                    new String[][] {{"experiment", "fanout", "--midtier", nowhere, "--configs", "doubleface,doubleface+gc=zgc"},
                        {"doubleface+gc=zgc: +gc= is the collector of a mid-tier JVM of its own"}},
                    new String[][] {{"experiment", "fanout", "--midtier", nowhere, "--configs", "doubleface@connection=shared"},
                        {"@OPTIONS are shard-URI options"}},
                    new String[][] {{"experiment", "fanout", "--midtier", nowhere, "--configs", "adaptive"},
                        {"adaptive: a load-adapter policy runs in a mid-tier started with --config adaptive"}},
                    new String[][] {{"experiment", "fanout", "--midtier", nowhere, "--driver", "redis"},
                        {"--driver cannot be used with --midtier"}},
                    new String[][] {{"experiment", "fanout", "--midtier", nowhere, "--io-threads", "2"},
                        {"--io-threads cannot be used with --midtier"}},
                    new String[][] {{"experiment", "fanout", "--admin", nowhere}, {"--admin needs --midtier"}},
                    new String[][] {{"train", "--out", tmp.resolve("p.json").toString(), "--midtier", nowhere, "--shards",
                        "kv://127.0.0.1:1-2"}, {"--shards cannot be used with --midtier"}}));
            try (RunningMidTier m = new RunningMidTier(tmp)) {
                String[] at = {"--midtier", m.midTier(), "--admin", m.admin()};
                // --out: a run refused after the connection must not leave a results directory in the working directory
                String[] token = {"--admin-token-file", m.tokenFile.toString(), "--out", tmp.toString()};
                cases.addAll(List.of(
                        new String[][] {concat(new String[] {"experiment", "fanout"}, at, new String[] {"--admin-token-file",
                            wrongToken.toString()}), {"the mid-tier refused the admin token for changing the configuration "
                                + "(HTTP 401)"}},
                        new String[][] {concat(new String[] {"experiment", "fanout"}, at), {"the mid-tier refused a request "
                            + "without an admin token"}},
                        new String[][] {concat(new String[] {"experiment", "imbalance"}, at, token),
                            {"imbalance --midtier: its tables count the mid-tier's active threads"}},
                        new String[][] {concat(new String[] {"experiment", "priority"}, at, token),
                            {"priority --midtier: it sets the mid-tier's per-reply CPU work"}},
                        new String[][] {concat(new String[] {"experiment", "mutune-steady"}, at, token),
                            {"a default configuration of mutune-steady; give --configs"}},
                        new String[][] {concat(new String[] {"experiment", "fanout", "--fanouts", "1,6"}, at, token),
                            {"fanout 6 (point small c=20 k=6) is more than the mid-tier's 5 shards (backend records (kv, 5 "
                                + "shards: kv://127.0.0.1:"}},
                        new String[][] {concat(new String[] {"experiment", "concurrency", "--service", "router"}, at, token),
                            {"answered HTTP 404", "does it run serve router (--service)?"}}));
                for (String[][] c : cases) {
                    CliRun r = new CliRun();
                    String[] args = c[0];
                    assertEquals(DoubleFaceCli.EXIT_USAGE, r.run(args), () -> String.join(" ", args) + "\n" + r.err());
                    for (String expected : c[1]) {
                        assertTrue(r.err().contains(expected), String.join(" ", args) + "\n" + r.err());
                    }
                    assertTrue(r.err().contains("Try 'doubleface " + args[0]) && r.err().lines().count() <= 3, r.err());
                }
                assertEquals(0, ((Number) m.stats().get("switches")).longValue(), "nothing was switched");
            }
        }
    }

    private static String[] concat(String[]... parts) {
        return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }

    /** The members of a .tar.xz archive (GNU tar, as the runner packs them). */
    private static List<String> tarList(Path archive) throws Exception {
        Process p = new ProcessBuilder("tar", "-tJf", archive.toString()).redirectErrorStream(true).start();
        List<String> names = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                .lines().toList();
        assertEquals(0, p.waitFor(), names.toString());
        return names;
    }
}
