package io.doubleface.tune;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.model.Configuration;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfileTest {

    static Configuration c(String name) {
        return Configuration.parse(name);
    }

    /** A synthetic profile: SIP best at low load, SDP in the middle, SDB the only one at peak. */
    static Profile synthetic() {
        return Profile.builder().service("ycsb").shards("kv://127.0.0.1:7101-7104").machine("test, 2 cpus")
                .date("2026-11-22T06:00:00Z").commit("abc123")
                .point("sip", point(100, 200, false)).point("sip", point(1000, 300, false))
                .point("sip", point(4000, 2000, false)).point("sip", point(8000, 90_000, true))
                .point("sdp", point(100, 300, false)).point("sdp", point(1000, 280, false))
                .point("sdp", point(4000, 600, false)).point("sdp", point(8000, 3000, false))
                .point("sdp", point(12000, 50_000, true))
                .point("sdb", point(100, 400, false)).point("sdb", point(1000, 420, false))
                .point("sdb", point(4000, 700, false)).point("sdb", point(8000, 1500, false))
                .point("sdb", point(12000, 2500, false))
                .build();
    }

    static Profile.Point point(double load, double p99, boolean saturated) {
        return new Profile.Point(load, p99 / 2, p99, p99 * 2, saturated ? load / 2 : load, load / 10_000, saturated);
    }

    @Test
    void namesAreStoredCanonically() {
        Profile p = synthetic();
        assertEquals(List.of("sip", "sdp-1n-64w", "sdb-1n-64w"), p.configurations().stream().map(Configuration::name).toList());
    }

    @Test
    void p99IsPiecewiseLinearInLoad() {
        Profile p = synthetic();
        assertEquals(200, p.p99(c("sip"), 100), 1e-9);
        assertEquals(250, p.p99(c("sip"), 550), 1e-9);
        assertEquals(1150, p.p99(c("sip"), 2500), 1e-9);
        assertEquals(200, p.p99(c("sip"), 10), 1e-9, "below the first point: the first point's");
        assertEquals(2000, p.p99(c("sip"), 7000), 1e-9, "beyond the last unsaturated point: its value");
        assertEquals(2500, p.p99(c("sdb-1n-64w"), 50_000), 1e-9);
        assertTrue(Double.isNaN(p.p99(c("adb-1n-4w-4r"), 100)), "unknown configuration");
    }

    @Test
    void capacityIsTheLastUnsaturatedLoad() {
        Profile p = synthetic();
        assertEquals(4000, p.capacity(c("sip")));
        assertEquals(8000, p.capacity(c("sdp-1n-64w")));
        assertEquals(12000, p.capacity(c("sdb-1n-64w")));
        assertEquals(0, p.capacity(c("type1-4")), "not in the profile");
        assertEquals("sdb-1n-64w", p.peakSustaining().name());
    }

    @Test
    void writeThenReadGivesTheSameProfile(@TempDir Path dir) throws IOException {
        Profile p = synthetic();
        Path f = dir.resolve("sub/ycsb.json");
        p.write(f);
        Profile q = Profile.read(f);
        assertEquals(p.metadata(), q.metadata());
        assertEquals(p.configurations(), q.configurations());
        for (Configuration c : p.configurations()) {
            assertEquals(p.points(c), q.points(c), c.name());
        }
        assertEquals(p.toJson(), q.toJson());
        assertTrue(Files.readString(f).contains("\"version\": 1"));
    }

    @Test
    void pointsAreSortedByLoad() {
        Profile p = Profile.builder().point("doubleface", point(2000, 500, false))
                .point("doubleface", point(100, 100, false)).build();
        assertEquals(100, p.points(c("doubleface")).get(0).load());
    }

    @Test
    void readsAHandWrittenFileWithEscapesAndExponents() {
        String json = "{\"version\":1,\"service\":\"y\\u0063sb \\\"kv\\\"\",\"configurations\":[{\"name\":\"DOUBLEFACE\","
                + "\"points\":[{\"load\":1e2,\"p50_us\":50.5,\"p99_us\":1.2E2,\"p999_us\":200,\"throughput\":99,"
                + "\"cpu\":0.25,\"saturated\":false}]}]}";
        Profile p = Profile.parse(json, "inline");
        assertEquals("ycsb \"kv\"", p.metadata().service());
        assertEquals("", p.metadata().commit());
        assertEquals(120, p.p99(c("doubleface"), 100));
    }

    @Test
    void badFilesFailWithTheFileAndTheProblem() {
        String ok = "{\"name\":\"sip\",\"points\":[{\"load\":100,\"p50_us\":1,\"p99_us\":2,\"p999_us\":3,"
                + "\"throughput\":100,\"cpu\":0.1,\"saturated\":false}]}";
        bad("", "f.json", "JSON: End of input at line 1 column 1");
        bad("[]", "f.json", "expected a JSON object at the top");
        bad("{\"version\":1,", "f.json", "JSON: End of input at line 1 column 14");
        bad("{\"configurations\":[]}", "f.json", "missing or non-integer \"version\"");
        bad("{\"version\":2,\"configurations\":[]}", "f.json", "version 2 is not supported (expected: 1)");
        bad("{\"version\":1}", "f.json", "missing \"configurations\" array");
        bad("{\"version\":1,\"configurations\":[]}", "f.json", "at least one configuration");
        bad("{\"version\":1,\"configurations\":[{\"points\":[]}]}", "f.json", "configurations[0]: missing \"name\"");
        bad("{\"version\":1,\"configurations\":[{\"name\":\"warp-9\",\"points\":[{}]}]}", "f.json",
                "unknown model 'warp'");
        bad("{\"version\":1,\"configurations\":[" + ok.replace("\"p99_us\":2", "\"p99_us\":\"2\"") + "]}", "f.json",
                "configurations[0] (sip).points[0]: missing or non-numeric \"p99_us\"");
        bad("{\"version\":1,\"configurations\":[" + ok.replace("\"p99_us\":2", "\"p99_us\":0.5") + "]}", "f.json",
                "expected: p50 <= p99 <= p99.9");
        bad("{\"version\":1,\"configurations\":[" + ok.replace("\"load\":100", "\"load\":-1") + "]}", "f.json",
                "load: -1.0 (expected: > 0)");
        bad("{\"version\":1,\"configurations\":[" + ok + "," + ok + "]}", "f.json", "two points at load 100");
        bad("{\"version\":1,\"version\":1}", "f.json", "duplicate member \"version\"");
        bad("{\"version\":1,\"configurations\":[" + ok + "]} x", "f.json", "after the document");
        bad("[".repeat(100), "f.json", "Nesting limit 64 reached");
    }

    private static void bad(String json, String source, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Profile.parse(json, source),
                json);
        assertTrue(e.getMessage().startsWith("profile " + source + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(expected), "'" + e.getMessage() + "' should contain '" + expected + "'");
    }

    @Test
    void missingFileIsAnIoError(@TempDir Path dir) {
        assertThrows(NoSuchFileException.class, () -> Profile.read(dir.resolve("none.json")));
    }

    /**
     * The peak-sustaining sdb and the low-load sip, each step measured three times: at 100 req/s
     * sip's repeats lie wholly below sdb's; at 1,000 its median is lower but the ranges overlap.
     */
    static Profile repeated() {
        return Profile.builder().service("ycsb").shards("test").machine("test").date("2026-11-29").commit("test")
                .point("sip", new Profile.Point(100, 100, 200, Double.NaN, 100, 0.01, false, 150, 250, 3))
                .point("sip", new Profile.Point(1000, 150, 300, Double.NaN, 1000, 0.1, false, 250, 450, 3))
                .point("sip", new Profile.Point(2000, 300, 1000, Double.NaN, 2000, 0.2, false, 800, 1300, 3))
                .point("sip", new Profile.Point(4000, 900, 90_000, Double.NaN, 2000, 1.0, true, 80_000, 95_000, 3))
                .point("sdb", new Profile.Point(100, 200, 420, Double.NaN, 100, 0.01, false, 350, 500, 3))
                .point("sdb", new Profile.Point(1000, 200, 420, Double.NaN, 1000, 0.1, false, 350, 500, 3))
                .point("sdb", new Profile.Point(4000, 300, 700, Double.NaN, 4000, 0.4, false, 600, 900, 3))
                .point("sdb", new Profile.Point(12_000, 800, 2500, Double.NaN, 12_000, 1.2, false, 2000, 3100, 3))
                .build();
    }

    @Test
    void repeatRangesSurviveTheFileAndInterpolate(@TempDir Path dir) throws IOException {
        Profile p = repeated();
        Path f = dir.resolve("p.json");
        p.write(f);
        String json = Files.readString(f);
        assertTrue(json.contains("\"p99_range_us\": [150, 250], \"repeats\": 3"), json);
        Profile q = Profile.read(f);
        assertEquals(p.points(c("sip")), q.points(c("sip")));
        assertEquals(3, q.repeats(c("sip")));
        assertEquals(200, q.p99Low(c("sip"), 550), 1e-9, "halfway between 150 and 250");
        assertEquals(350, q.p99High(c("sip"), 550), 1e-9, "halfway between 250 and 450");
        // a single-repeat profile reads as before: its range is the p99 itself
        Profile once = synthetic();
        assertEquals(1, once.repeats(c("sip")));
        assertEquals(once.p99(c("sip"), 550), once.p99High(c("sip"), 550), 1e-9);
        assertTrue(!once.toJson().contains("p99_range_us"), "no range written for one repeat");
    }

    @Test
    void bandsTakeALowerP99OnlyBeyondTheRepeatsSpread() {
        List<Profile.Band> bands = repeated().bands(0.10, 0.10);
        assertEquals(List.of(100.0, 1000.0, 2000.0, 4000.0, 12_000.0), bands.stream().map(Profile.Band::load).toList());
        assertEquals("sip", bands.get(0).choice().name(), bands.get(0).reason());
        assertEquals("p99 200 µs (150–250, 3 repeats) below sdb-1n-64w's 420 µs (350–500, 3 repeats)",
                bands.get(0).reason());
        // at 1,000 sip's median is 29% lower, but one of its repeats (450) is above one of sdb's (350)
        assertEquals("sdb-1n-64w", bands.get(1).choice().name());
        assertEquals("peak-sustaining; sip's lower p99 300 µs (250–450, 3 repeats) is within the noise of "
                + "420 µs (350–500, 3 repeats)", bands.get(1).reason());
        assertEquals("sdb-1n-64w", bands.get(3).choice().name());
        assertTrue(bands.get(3).reason().startsWith("peak-sustaining; no other configuration has capacity"),
                bands.get(3).reason());
        // without repeats the hysteresis alone decides, as before
        assertEquals("sip", synthetic().bands(0.10, 0.10).get(0).choice().name());
        assertTrue(repeated().toJson().contains("\"bands\": [\n    {\"load\": 100, \"choice\": \"sip\""),
                repeated().toJson());
    }

    @Test
    void aRangeThatDoesNotHoldItsP99IsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Profile.Point(100, 100, 200, Double.NaN, 100, 0.01, false, 250, 300, 3));
        assertTrue(e.getMessage().contains("does not hold the p99 200"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> new Profile.Point(100, 100, 200, Double.NaN, 100, 0.01, false, 150, 250, 0));
        String bad = repeated().toJson().replace("\"p99_range_us\": [150, 250]", "\"p99_range_us\": [150]");
        e = assertThrows(IllegalArgumentException.class, () -> Profile.parse(bad, "bad.json"));
        assertEquals("profile bad.json: configurations[0] (sip).points[0]: \"p99_range_us\": expected [low, high]",
                e.getMessage());
    }
}
