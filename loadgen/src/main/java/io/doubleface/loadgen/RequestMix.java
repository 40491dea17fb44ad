package io.doubleface.loadgen;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Weighted request-path templates: {@code 50:/query?fanout=5&key={key},50:/query?fanout=3&key={key}}.
 * A template's {@value #KEY} is replaced by a uniform random key in {@code [0, keys)} per request.
 * A template is sent as a {@code GET} unless it starts with a method and a space
 * ({@code 1:POST /social/posts?user={key}&text=hi}): then with that method and no body.
 *
 * <p>Immutable and thread-safe; the random source is the caller's.
 */
public final class RequestMix {

    /** The placeholder replaced by a random key: {@value}. */
    public static final String KEY = "{key}";

    /** The methods a template may name: {@value}. */
    static final String METHODS = "GET|POST|PUT|DELETE";
    private static final java.util.regex.Pattern WITH_METHOD = java.util.regex.Pattern.compile(
            "(" + METHODS + ") (/.*)");

    /** Whether a request with this method may be sent again after its connection failed (RFC 9110, 9.2.2). */
    static boolean idempotent(String method) {
        return !"POST".equals(method);
    }

    /** One template: as given, its method, its path split at {@link #KEY}, and its weight. */
    record Template(String path, String method, byte[][] parts, int weight) {
        boolean hasKey() {
            return parts.length > 1;
        }
    }

    private final List<Template> templates;
    private final int[] cumulative;
    private final int totalWeight;

    private RequestMix(List<Template> templates) {
        this.templates = List.copyOf(templates);
        this.cumulative = new int[templates.size()];
        int sum = 0;
        for (int i = 0; i < templates.size(); i++) {
            sum += templates.get(i).weight();
            cumulative[i] = sum;
        }
        this.totalWeight = sum;
    }

    /** One path template (weight 1). */
    public static RequestMix single(String path) {
        return new RequestMix(List.of(template(path, 1)));
    }

    /**
     * Parses {@code w1:PATH1,w2:PATH2,…}. Paths may not contain commas.
     *
     * @throws IllegalArgumentException with what was expected
     */
    public static RequestMix parse(String spec) {
        List<Template> list = new ArrayList<>();
        for (String part : (spec == null ? "" : spec).split(",")) {
            String p = part.strip();
            if (p.isEmpty()) {
                continue;
            }
            int colon = p.indexOf(':');
            int weight;
            try {
                weight = colon < 0 ? -1 : Integer.parseInt(p.substring(0, colon).strip());
            } catch (NumberFormatException e) {
                weight = -1;
            }
            if (weight < 1 || weight > 1_000_000) {
                throw new IllegalArgumentException("mix entry '" + p + "' (expected: WEIGHT:PATH with a weight "
                        + "1..1000000, e.g. 50:/query?fanout=5&key={key})");
            }
            list.add(template(p.substring(colon + 1).strip(), weight));
        }
        if (list.isEmpty()) {
            throw new IllegalArgumentException("mix '" + spec + "' (expected: WEIGHT:PATH,…, e.g. "
                    + "50:/query?fanout=5&key={key},50:/query?fanout=3&key={key})");
        }
        return new RequestMix(list);
    }

    private static Template template(String given, int weight) {
        java.util.regex.Matcher m = WITH_METHOD.matcher(given);
        String method = m.matches() ? m.group(1) : "GET";
        String path = m.matches() ? m.group(2) : given;
        if (!path.startsWith("/") || path.chars().anyMatch(c -> c <= ' ' || c >= 127)) {
            throw new IllegalArgumentException("path '" + path + "' (expected: starting with / and no spaces or "
                    + "non-ASCII characters)");
        }
        String[] split = path.split(java.util.regex.Pattern.quote(KEY), -1);
        byte[][] parts = new byte[split.length][];
        for (int i = 0; i < split.length; i++) {
            parts[i] = split[i].getBytes(StandardCharsets.US_ASCII);
        }
        return new Template(given, method, parts, weight);
    }

    /** The index of a template drawn by weight. */
    public int pick(SplittableRandom random) {
        if (cumulative.length == 1) {
            return 0;
        }
        int r = random.nextInt(totalWeight);
        int i = 0;
        while (r >= cumulative[i]) {
            i++;
        }
        return i;
    }

    /** The path of template {@code i} with {@code key} in place of {@value #KEY}. */
    public String path(int i, long key) {
        return templates.get(i).path().replace(KEY, Long.toString(key));
    }

    /** The templates' paths as given. */
    public List<String> paths() {
        return templates.stream().map(Template::path).toList();
    }

    List<Template> templates() {
        return templates;
    }

    @Override
    public String toString() {
        if (templates.size() == 1) {
            return templates.get(0).path();
        }
        StringBuilder b = new StringBuilder();
        for (Template t : templates) {
            b.append(b.isEmpty() ? "" : ",").append(t.weight()).append(':').append(t.path());
        }
        return b.toString();
    }
}
