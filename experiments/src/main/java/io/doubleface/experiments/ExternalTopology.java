package io.doubleface.experiments;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A mid-tier that is already running — a docker-compose topology, another host — given by the
 * address of its upstream and of its admin listener. An experiment over it starts no process but
 * the load generator (on this machine): every configuration is activated with
 * {@code PUT /admin/config?name=C}, the run-time knobs of {@code +flush=}/{@code +pin=} variants with
 * {@code PUT /admin/knobs}, and {@code /admin/stats} is sampled around each run as usual. Nothing
 * of the remote is pinned or restarted, so what needs a process of its own (a {@code +gc=}
 * collector, {@code @OPTIONS} shard options, a load-adapter policy, serve options) cannot be run.
 *
 * <p>{@link #connect} checks the mid-tier before anything is measured: its admin listener answers
 * {@code GET /admin/config}, the token is accepted for a change (a {@code PUT} of the configuration
 * already active, which changes nothing), the server does not run the load adapter (it would
 * switch configurations under the experiment), and the upstream answers one request of the
 * service. What it read there (configuration, shard count, knobs) goes into
 * {@code environment.json} and the report.
 *
 * <p>Credential: with a token ({@code serve --admin-token-file} or {@code DOUBLEFACE_ADMIN_TOKEN} on
 * the server) every request here carries {@code Authorization: Bearer TOKEN}; the server needs it
 * for every {@code PUT}, and for reads too when its admin listener is not on loopback.
 *
 * <p>Thread safety: immutable apart from the thread-safe HTTP client; the runner calls it from one
 * thread.
 */
public final class ExternalTopology {

    /** Admin port assumed when only the mid-tier's address is given: serve's default, and the compose files': {@value}. */
    public static final int DEFAULT_ADMIN_PORT = 9090;

    /** How long a connection attempt or one admin request may take: {@value} s. */
    static final int TIMEOUT_SECONDS = 10;

    private final URI midTier;
    private final URI admin;
    private final String token;
    private final HttpClient http;
    private final String activeAtStart;
    private final List<String> loadedAtStart;
    private final Map<String, Object> statsAtStart;
    private final Map<String, String> knobsAtStart;

    private ExternalTopology(URI midTier, URI admin, String token, HttpClient http, String activeAtStart,
            List<String> loadedAtStart, Map<String, Object> statsAtStart, Map<String, String> knobsAtStart) {
        this.midTier = midTier;
        this.admin = admin;
        this.token = token;
        this.http = http;
        this.activeAtStart = activeAtStart;
        this.loadedAtStart = loadedAtStart;
        this.statsAtStart = statsAtStart;
        this.knobsAtStart = knobsAtStart;
    }

    /**
     * Parses an {@code http://HOST[:PORT]} address of {@code option} (no path, query or user part).
     *
     * @throws IllegalArgumentException naming the option and what is wrong
     */
    public static URI address(String option, String value) {
        URI u;
        try {
            u = URI.create(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + value + " (expected: http://HOST:PORT)");
        }
        if (!"http".equalsIgnoreCase(u.getScheme()) || u.getHost() == null || u.getRawUserInfo() != null
                || u.getRawQuery() != null || u.getRawFragment() != null
                || !(u.getRawPath() == null || u.getRawPath().isEmpty() || u.getRawPath().equals("/"))) {
            throw new IllegalArgumentException(option + ": " + value + " (expected: http://HOST:PORT, no path)");
        }
        int port = u.getPort() < 0 ? 80 : u.getPort();
        return URI.create("http://" + hostForUri(u.getHost()) + ":" + port);
    }

    /** The admin address when {@code --admin} is not given: the mid-tier's host, port {@value #DEFAULT_ADMIN_PORT}. */
    public static URI defaultAdmin(URI midTier) {
        return URI.create("http://" + hostForUri(midTier.getHost()) + ":" + DEFAULT_ADMIN_PORT);
    }

    private static String hostForUri(String host) {
        return host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /**
     * Checks the running mid-tier and reads what it says of itself (see the class comment).
     *
     * @param midTier its upstream, {@code http://HOST:PORT} ({@link #address})
     * @param admin its admin listener ({@link #defaultAdmin} if the user gave none)
     * @param token its admin token, or {@code null} for none
     * @param service what it must serve (one request of it is sent)
     * @throws IllegalArgumentException saying what is wrong: no answer, the token refused, not the
     *     service, the load adapter running
     */
    public static ExternalTopology connect(URI midTier, URI admin, String token, ServiceSpec service) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(TIMEOUT_SECONDS)).build();
        String where = "--admin " + admin;
        HttpResponse<String> r = call(http, where, request(admin.resolve("/admin/config"), token).GET());
        refusedToken(r, where, token, "reading");
        if (r.statusCode() != 200) {
            throw new IllegalArgumentException(where + ": GET /admin/config answered HTTP " + r.statusCode()
                    + " (expected: 200 from the mid-tier's admin listener, serve --admin-port)");
        }
        Map<String, Object> config = json(where, "/admin/config", r.body());
        if (!(config.get("active") instanceof String active)) {
            throw new IllegalArgumentException(where + ": GET /admin/config has no \"active\" configuration; is this "
                    + "a doubleface mid-tier's admin listener?");
        }
        List<String> loaded = config.get("loaded") instanceof List<?> l ? l.stream().map(String::valueOf).toList()
                : List.of();
        r = call(http, where, request(admin.resolve("/admin/stats"), token).GET());
        if (r.statusCode() != 200) {
            throw new IllegalArgumentException(where + ": GET /admin/stats answered HTTP " + r.statusCode());
        }
        Map<String, Object> stats = json(where, "/admin/stats", r.body());
        if (stats.get("adapter") instanceof Map<?, ?> a) {
            throw new IllegalArgumentException(where + ": the mid-tier runs the load adapter (" + a.get("policy")
                    + "), which switches configurations itself; start it with a static --config to run an experiment "
                    + "over it");
        }
        // the token is checked for a change by a change that changes nothing: the active configuration again
        r = call(http, where, request(admin.resolve("/admin/config?name=" + enc(active)), token)
                .PUT(HttpRequest.BodyPublishers.noBody()));
        refusedToken(r, where, token, "changing the configuration");
        if (r.statusCode() != 200) {
            throw new IllegalArgumentException(where + ": PUT /admin/config?name=" + active + " (the active "
                    + "configuration) answered HTTP " + r.statusCode() + ": " + r.body().strip());
        }
        Map<String, String> knobs = null;
        r = call(http, where, request(admin.resolve("/admin/knobs"), token).GET());
        if (r.statusCode() == 200) {
            Map<String, Object> k = json(where, "/admin/knobs", r.body());
            knobs = new LinkedHashMap<>();
            knobs.put("flush", String.valueOf(k.get("flush_policy")));
            knobs.put("pin", k.get("pin_io_threads") instanceof List<?> cpus && !cpus.isEmpty()
                    ? String.join(",", cpus.stream().map(String::valueOf).toList()) : "off");
        }
        probeUpstream(http, midTier, service);
        return new ExternalTopology(midTier, admin, token, http, active, loaded, stats, knobs);
    }

    /** Sends one GET request of {@code service} to the upstream and wants a 200. */
    private static void probeUpstream(HttpClient http, URI midTier, ServiceSpec service) {
        String path = probePath(service);
        String where = "--midtier " + midTier;
        HttpResponse<String> r = call(http, where, HttpRequest.newBuilder(midTier.resolve(path)).GET());
        if (r.statusCode() != 200) {
            String body = r.body().strip();
            throw new IllegalArgumentException(where + ": GET " + path + " answered HTTP " + r.statusCode()
                    + (body.isEmpty() ? "" : " (" + abbreviate(body) + ")") + "; does it run serve " + service.name()
                    + " (--service)?");
        }
    }

    /** One GET request of the service with key 0: the YCSB query at fanout 1, else the first GET of its mix. */
    static String probePath(ServiceSpec service) {
        if (service.isYcsb()) {
            return "/query?fanout=1&size=small&key=0";
        }
        for (String part : service.requests().split(",")) {
            String p = part.replaceFirst("^\\d+:", "");
            if (p.startsWith("/")) {
                return p.replace("{key}", "0");
            }
        }
        throw new IllegalStateException(service.name() + ": no GET request in " + service.requests());
    }

    private static void refusedToken(HttpResponse<String> r, String where, String token, String what) {
        if (r.statusCode() == 401 || r.statusCode() == 403) {
            throw new IllegalArgumentException(where + ": the mid-tier refused " + (token == null
                    ? "a request without an admin token" : "the admin token") + " for " + what + " (HTTP "
                    + r.statusCode() + "); give its token with --admin-token-file FILE or DOUBLEFACE_ADMIN_TOKEN");
        }
    }

    private static HttpResponse<String> call(HttpClient http, String where, HttpRequest.Builder b) {
        try {
            return http.send(b.timeout(Duration.ofSeconds(TIMEOUT_SECONDS)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            throw new IllegalArgumentException(where + ": no answer (connection refused); is the mid-tier running and "
                    + "listening there?");
        } catch (HttpConnectTimeoutException e) {
            throw new IllegalArgumentException(where + ": no connection within " + TIMEOUT_SECONDS + " s");
        } catch (HttpTimeoutException e) {
            throw new IllegalArgumentException(where + ": no answer within " + TIMEOUT_SECONDS + " s");
        } catch (IOException e) {
            throw new IllegalArgumentException(where + ": " + (e.getMessage() == null ? e.toString() : e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalArgumentException(where + ": interrupted");
        }
    }

    private static HttpRequest.Builder request(URI uri, String token) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    private static Map<String, Object> json(String where, String path, String body) {
        try {
            return MiniJson.object(body);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(where + ": " + path + " did not answer JSON: " + abbreviate(body.strip()));
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 120 ? s : s.substring(0, 120) + "…";
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** The upstream, {@code http://HOST:PORT}: the load generator's {@code --target}. */
    public URI midTier() {
        return midTier;
    }

    /** The admin listener, {@code http://HOST:PORT}. */
    public URI admin() {
        return admin;
    }

    /** Shards of the mid-tier's first backend ({@code /admin/stats}): the largest fanout it takes. */
    public int shards() {
        return statsAtStart.get("shards") instanceof Number n ? n.intValue() : 0;
    }

    /** The mid-tier's doubleface version ({@code /admin/stats}), or {@code unknown} (run from classes, or older than the field). */
    public String version() {
        return statsAtStart.get("version") instanceof String v ? v : "unknown";
    }

    /**
     * Its backends as {@code /admin/stats} lists them, one phrase each: {@code records (kv, 5 shards:
     * kv://10.0.0.2:7001-7005)}; the first one's shard count is the largest fanout it takes.
     */
    public List<String> backends() {
        List<String> out = new ArrayList<>();
        if (statsAtStart.get("backends") instanceof List<?> l) {
            for (Object o : l) {
                if (o instanceof Map<?, ?> b) {
                    out.add(b.get("name") + " (" + (b.get("scheme") != null ? b.get("scheme") + ", " : "")
                            + (b.get("shards") instanceof Number n ? n.intValue() : 0) + " shards: " + b.get("driver") + ")");
                }
            }
        }
        return out;
    }

    /** One line for the pre-run checks: what the mid-tier says it is. */
    public String serverLine() {
        List<String> b = backends();
        return "mid-tier " + midTier + ": doubleface " + version() + ", configuration " + activeAtStart + "; backends: "
                + (b.isEmpty() ? statsAtStart.getOrDefault("driver", "unknown") : String.join(", ", b));
    }

    /** The backend whose shard count bounds the fanout (the first), as {@link #backends} words it; {@code null} if unknown. */
    String fanoutBackend() {
        List<String> b = backends();
        return b.isEmpty() ? null : b.get(0);
    }

    /** Whether the mid-tier traces the stages of every request ({@code serve --trace-stages all}: {@code one_in} 1). */
    boolean tracesEveryRequest() {
        return statsAtStart.get("stages") instanceof Map<?, ?> st && st.get("one_in") instanceof Number n
                && n.intValue() == 1;
    }

    /** The configuration active when {@link #connect} ran: restored when the experiment ends. */
    String activeAtStart() {
        return activeAtStart;
    }

    /** The run-time knobs ({@code flush}, {@code pin}) at connect time; {@code null}: the server has no {@code /admin/knobs}. */
    Map<String, String> knobsAtStart() {
        return knobsAtStart;
    }

    /** Sends an admin request (with the token) and returns its answer. */
    HttpResponse<String> admin(String method, String pathAndQuery) throws IOException {
        HttpRequest.Builder b = request(admin.resolve(pathAndQuery), token)
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(TIMEOUT_SECONDS));
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /**
     * What {@code environment.json} records of it: the addresses, that nothing was started or pinned,
     * and what the server said of itself when the experiment began. Never the token.
     */
    Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mid_tier", midTier.toString());
        m.put("admin", admin.toString());
        m.put("admin_token", token == null ? "none" : "given (not recorded)");
        m.put("started_by_runner", "nothing (load generator only)");
        m.put("pinning", "none of the remote; load generator as pinning.load_generator says");
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("version", version());
        server.put("active_configuration", activeAtStart);
        server.put("loaded_configurations", loadedAtStart);
        for (String k : List.of("driver", "shards", "deadline_ms", "uptime_ms", "backends")) {
            if (statsAtStart.containsKey(k)) {
                server.put(k, statsAtStart.get(k));
            }
        }
        server.put("knobs", knobsAtStart == null ? "none (no /admin/knobs)" : knobsAtStart);
        m.put("server_at_start", server);
        return m;
    }

    /** One line for the report's head. */
    String summaryLine() {
        return String.format(Locale.ROOT, "external mid-tier %s (admin %s; doubleface %s; %s, %d shards; configuration "
                + "%s at start), nothing started or pinned by the runner but the load generator", midTier, admin,
                version(), statsAtStart.getOrDefault("driver", "driver unknown"), shards(), activeAtStart);
    }
}
