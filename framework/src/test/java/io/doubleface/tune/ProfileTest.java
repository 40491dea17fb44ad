package io.doubleface.tune;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfileTest {

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
        assertEquals(List.of("sip", "sdp-1n-64w", "sdb-1n-64w"), p.configurations());
    }

    @Test
    void p99IsPiecewiseLinearInLoad() {
        Profile p = synthetic();
        assertEquals(200, p.p99("sip", 100), 1e-9);
        assertEquals(250, p.p99("sip", 550), 1e-9);
        assertEquals(1150, p.p99("sip", 2500), 1e-9);
        assertEquals(200, p.p99("sip", 10), 1e-9, "below the first point: the first point's");
        assertEquals(2000, p.p99("sip", 7000), 1e-9, "beyond the last unsaturated point: its value");
        assertEquals(2500, p.p99("sdb-1n-64w", 50_000), 1e-9);
        assertTrue(Double.isNaN(p.p99("adb-1n-4w-4r", 100)), "unknown configuration");
    }

    @Test
    void capacityIsTheLastUnsaturatedLoad() {
        Profile p = synthetic();
        assertEquals(4000, p.capacity("sip"));
        assertEquals(8000, p.capacity("sdp-1n-64w"));
        assertEquals(12000, p.capacity("sdb-1n-64w"));
        assertEquals(0, p.capacity("nope"));
        assertEquals("sdb-1n-64w", p.peakSustaining());
    }

    @Test
    void writeThenReadGivesTheSameProfile(@TempDir Path dir) throws IOException {
        Profile p = synthetic();
        Path f = dir.resolve("sub/ycsb.json");
        p.write(f);
        Profile q = Profile.read(f);
        assertEquals(p.metadata(), q.metadata());
        assertEquals(p.configurations(), q.configurations());
        for (String c : p.configurations()) {
            assertEquals(p.points(c), q.points(c), c);
        }
        assertEquals(p.toJson(), q.toJson());
        assertTrue(Files.readString(f).contains("\"version\": 1"));
    }

    @Test
    void pointsAreSortedByLoad() {
        Profile p = Profile.builder().point("doubleface", point(2000, 500, false))
                .point("doubleface", point(100, 100, false)).build();
        assertEquals(100, p.points("doubleface").get(0).load());
    }

    @Test
    void readsAHandWrittenFileWithEscapesAndExponents() {
        String json = "{\"version\":1,\"service\":\"y\\u0063sb \\\"kv\\\"\",\"configurations\":[{\"name\":\"DOUBLEFACE\","
                + "\"points\":[{\"load\":1e2,\"p50_us\":50.5,\"p99_us\":1.2E2,\"p999_us\":200,\"throughput\":99,"
                + "\"cpu\":0.25,\"saturated\":false}]}]}";
        Profile p = Profile.parse(json, "inline");
        assertEquals("ycsb \"kv\"", p.metadata().service());
        assertEquals("", p.metadata().commit());
        assertEquals(120, p.p99("doubleface", 100));
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
}
