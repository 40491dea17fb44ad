package io.doubleface.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.spi.ToolProvider;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The framework's packages form layers: no package depends, directly or through others, on a
 * package that depends on it. Read from the compiled classes with the JDK's {@code jdeps}, so a
 * cycle introduced by any import, field or signature fails the build (docs/architecture.md).
 */
class PackageCyclesTest {

    private static final Pattern EDGE = Pattern.compile("^\\s+(io\\.doubleface\\S*)\\s+->\\s+(io\\.doubleface\\S*)");

    @Test
    void theFrameworksPackagesHaveNoCycle() {
        Path classes = Path.of("target", "classes");
        assertTrue(Files.isDirectory(classes.resolve("io/doubleface/api")), "compiled classes at " + classes.toAbsolutePath());
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("no jdeps in this JDK"));
        StringWriter out = new StringWriter();
        int rc = jdeps.run(new PrintWriter(out), new PrintWriter(out), "-verbose:package", "-filter:none",
                classes.toString());
        assertEquals(0, rc, out.toString());
        Map<String, Set<String>> deps = new TreeMap<>();
        for (String line : out.toString().split("\n")) {
            Matcher m = EDGE.matcher(line);
            if (m.find() && !m.group(1).equals(m.group(2))) {
                deps.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(m.group(2));
            }
        }
        assertTrue(deps.containsKey("io.doubleface.server.internal")
                        && deps.get("io.doubleface.server.internal").contains("io.doubleface.internal.engine"),
                "jdeps output was read (server.internal -> internal.engine expected):\n" + out);
        List<List<String>> cycles = stronglyConnected(deps);
        assertTrue(cycles.isEmpty(), "package cycles: " + cycles + "\n(dependencies: " + deps + ")");
    }

    /** Tarjan's strongly connected components with more than one package. */
    private static List<List<String>> stronglyConnected(Map<String, Set<String>> g) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        List<List<String>> out = new ArrayList<>();
        int[] counter = {0};
        for (String v : g.keySet()) {
            if (!index.containsKey(v)) {
                visit(v, g, index, low, stack, out, counter);
            }
        }
        return out;
    }

    private static void visit(String v, Map<String, Set<String>> g, Map<String, Integer> index, Map<String, Integer> low,
            Deque<String> stack, List<List<String>> out, int[] counter) {
        index.put(v, counter[0]);
        low.put(v, counter[0]++);
        stack.push(v);
        for (String w : g.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                visit(w, g, index, low, stack, out, counter);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (stack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            List<String> component = new ArrayList<>();
            String w;
            do {
                w = stack.pop();
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) {
                out.add(component);
            }
        }
    }
}
