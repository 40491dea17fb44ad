package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Grafana dashboard shipped with the compose topologies ({@value #DASHBOARD}) queries only
 * what a real server's {@code /metrics} exposes: every {@code doubleface_*} series name in its
 * PromQL exists in a scrape of a server with routes, the load adapter and stage tracing on, and
 * every label it groups by or names in a legend is a label of one of the series the query reads.
 * Also: the per-stage summary counts every traced request once.
 */
@Timeout(60)
class GrafanaDashboardTest {

    /** Relative to the framework module, where the tests run. */
    static final String DASHBOARD = "../docker/grafana/dashboards/doubleface.json";

    /** Labels Prometheus adds to every scraped series (the compose files' scrape configuration). */
    static final Set<String> TARGET_LABELS = Set.of("instance", "job");

    static final Pattern SERIES = Pattern.compile("\\bdoubleface_[a-z0-9_]+");
    static final Pattern BY = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");
    static final Pattern LEGEND = Pattern.compile("\\{\\{\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*}}");
    static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{([^}]*)})?\\s");
    static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");

    @Test
    void everyQueryOfTheDashboardReadsSeriesARealServerExposes() throws Exception {
        Map<String, Set<String>> exposed = scrape();
        Path out = Files.createDirectories(Paths.get("target")).resolve("dashboard-scrape.txt");
        Files.writeString(out, String.join("\n", new TreeSet<>(exposed.keySet())) + "\n");

        JsonObject dashboard = JsonParser.parseString(Files.readString(Paths.get(DASHBOARD))).getAsJsonObject();
        List<JsonObject> targets = new ArrayList<>();
        collectTargets(dashboard, targets);
        assertTrue(targets.size() >= 10, "only " + targets.size() + " queries in " + DASHBOARD);

        List<String> problems = new ArrayList<>();
        for (JsonObject t : targets) {
            String expr = t.get("expr").getAsString();
            Set<String> labels = new HashSet<>(TARGET_LABELS);
            Matcher m = SERIES.matcher(expr);
            int series = 0;
            while (m.find()) {
                series++;
                Set<String> l = exposed.get(m.group());
                if (l == null) {
                    problems.add("no series " + m.group() + " in /metrics (query: " + expr + ")");
                } else {
                    labels.addAll(l);
                }
            }
            if (series == 0) {
                problems.add("a query reads no doubleface series: " + expr);
            }
            Matcher by = BY.matcher(expr);
            while (by.find()) {
                for (String label : by.group(1).split(",")) {
                    if (!label.isBlank() && !labels.contains(label.strip())) {
                        problems.add("grouped by " + label.strip() + ", which none of its series has: " + expr);
                    }
                }
            }
            if (t.has("legendFormat")) {
                Matcher legend = LEGEND.matcher(t.get("legendFormat").getAsString());
                while (legend.find()) {
                    if (!labels.contains(legend.group(1))) {
                        problems.add("legend names " + legend.group(1) + ", which none of its series has: " + expr);
                    }
                }
            }
        }
        assertEquals(List.of(), problems, "the dashboard against a real scrape (names in " + out + ")");
    }

    /** Every {@code targets[]} entry with an {@code expr}, in panels and rows at any depth. */
    static void collectTargets(JsonElement e, List<JsonObject> out) {
        if (e.isJsonArray()) {
            e.getAsJsonArray().forEach(x -> collectTargets(x, out));
        } else if (e.isJsonObject()) {
            JsonObject o = e.getAsJsonObject();
            if (o.has("expr") && o.get("expr").isJsonPrimitive()) {
                out.add(o);
            }
            o.entrySet().forEach(x -> collectTargets(x.getValue(), out));
        }
    }

    static final Pattern TOTAL_COUNT = Pattern.compile("(?m)^doubleface_stage_seconds_count\\{[^}]*stage=\"total\"[^}]*} (\\d+)");

    /** Requests counted in the {@code total} stage, over every configuration. */
    static long totalStageCount(String scrape) {
        Matcher m = TOTAL_COUNT.matcher(scrape);
        long n = 0;
        while (m.find()) {
            n += Long.parseLong(m.group(1));
        }
        return n;
    }

    static boolean sleep(long millis) throws InterruptedException {
        Thread.sleep(millis);
        return true;
    }

    /** Series name → its label names, from a server that has served some requests under the adapter. */
    static Map<String, Set<String>> scrape() throws Exception {
        try (FanoutServer s = AdminPageTest.echoServer(b -> b.adaptive(LoadAdapterPluginTest.exampleSettings()).traceStages(1))
                        .start();
                HttpClient c = HttpClient.newHttpClient()) {
            HttpRequest echo = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/echo?key=7&fan=2")).build();
            for (int i = 0; i < 50; i++) {
                assertEquals(200, c.send(echo, HttpResponse.BodyHandlers.discarding()).statusCode());
            }
            HttpRequest metrics = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.adminPort() + "/metrics")).build();
            HttpResponse<String> r;
            long deadline = System.nanoTime() + 10_000_000_000L;
            do { // every traced request counted once in its stage summary (recorded just after its answer)
                r = c.send(metrics, HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body());
            } while (totalStageCount(r.body()) < 50 && System.nanoTime() < deadline && sleep(20));
            assertEquals(50, totalStageCount(r.body()), r.body());
            Map<String, Set<String>> names = new HashMap<>();
            for (String line : r.body().split("\n")) {
                Matcher m = SAMPLE.matcher(line);
                if (line.startsWith("#") || !m.find()) {
                    continue;
                }
                Set<String> labels = names.computeIfAbsent(m.group(1), k -> new HashSet<>());
                if (m.group(2) != null) {
                    Matcher l = LABEL.matcher(m.group(2));
                    while (l.find()) {
                        labels.add(l.group(1));
                    }
                }
            }
            return names;
        }
    }
}
