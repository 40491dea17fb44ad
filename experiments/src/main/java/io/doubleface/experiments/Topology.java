package io.doubleface.experiments;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The processes of one experiment, on loopback: a leaf process holding the shards, the YCSB
 * mid-tier, and one load-generator process per run — each a separate JVM started from this one's
 * class path, pinned with {@code taskset} as {@link Settings} says. Closing stops them all.
 *
 * <p>A configuration name may carry shard-URI options after {@code @}
 * ({@code doubleface@connection=shared}): the driver options are fixed when a mid-tier opens its
 * shards, so each distinct option string gets its own mid-tier process over the same leaf, started
 * on first use and idle while another one is measured. {@link #switchTo} picks the process and
 * the configuration.
 *
 * <p>The load-adapter policies ({@code adaptive}, {@code adaptive-window}, {@code fm}) cannot be
 * switched to at run time: each runs in a mid-tier of its own, started with
 * {@code --config POLICY} and {@link Settings#adapterArgs} (e.g. {@code --profile FILE}).
 *
 * <p>With {@link Settings#externalShards} no leaf is started: the mid-tiers use those shards.
 *
 * <p>With {@link Settings#external} nothing is started but the load generator: the mid-tier is
 * the running one of the {@link ExternalTopology}, {@link #switchTo} activates each configuration
 * (and its run-time knobs) on it, and {@link #close} puts back the configuration and knobs it had.
 */
final class Topology implements AutoCloseable {

    /** Where each party runs and how the mid-tier is configured. */
    record Settings(String driver, int shards, long records, int ioThreads, String midCpus, String auxCpus,
            List<String> midJvm, List<String> auxJvm, Duration deadline, int replyWorkMicros, String policy,
            String firstConfig, String shardOptions, List<String> extraServeArgs, String externalShards,
            List<String> adapterArgs, String generator, ServiceSpec service, ExternalTopology external) {

        /** Settings of a spawned topology (no {@link ExternalTopology}). */
        Settings(String driver, int shards, long records, int ioThreads, String midCpus, String auxCpus,
                List<String> midJvm, List<String> auxJvm, Duration deadline, int replyWorkMicros, String policy,
                String firstConfig, String shardOptions, List<String> extraServeArgs, String externalShards,
                List<String> adapterArgs, String generator, ServiceSpec service) {
            this(driver, shards, records, ioThreads, midCpus, auxCpus, midJvm, auxJvm, deadline, replyWorkMicros,
                    policy, firstConfig, shardOptions, extraServeArgs, externalShards, adapterArgs, generator, service,
                    null);
        }

        /** Settings of the YCSB service (the runner's default). */
        Settings(String driver, int shards, long records, int ioThreads, String midCpus, String auxCpus,
                List<String> midJvm, List<String> auxJvm, Duration deadline, int replyWorkMicros, String policy,
                String firstConfig, String shardOptions, List<String> extraServeArgs, String externalShards,
                List<String> adapterArgs, String generator) {
            this(driver, shards, records, ioThreads, midCpus, auxCpus, midJvm, auxJvm, deadline, replyWorkMicros,
                    policy, firstConfig, shardOptions, extraServeArgs, externalShards, adapterArgs, generator,
                    ServiceSpec.YCSB);
        }
    }

    /** One mid-tier process: its shard-URI options and ports. */
    private record Mid(String options, String shardUri, Proc proc, int port, int adminPort) {}

    /** The running mid-tier of an external topology, or {@code null}: the mid-tiers are this runner's processes. */
    private final ExternalTopology external;

    /**
     * Main class of every process the runner starts: the doubleface CLI ({@code leaf}, {@code serve},
     * {@code load}), found on this JVM's class path (the CLI jar that runs the runner). Named, not
     * referenced: the CLI module depends on this one. {@value}
     */
    static final String CLI_MAIN = "io.doubleface.cli.DoubleFaceCli";

    /** JIT flag of open-loop generator JVMs (see {@link #load}): {@value}. */
    static final String OPEN_LOOP_JIT = "-XX:TieredStopAtLevel=1";


    final Settings settings;
    final Path dir;
    private final PrintWriter progress;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Proc> procs = new ArrayList<>();
    private Proc leaf;
    private String shardBase;
    /** {@code social}: the MongoDB shard list of {@code leaf social} ({@link #shardBase} is its Redis one). */
    private String socialMongo;
    private final Map<String, Mid> mids = new java.util.LinkedHashMap<>();
    /** Mid-tier key → the knobs it runs with now ({@link #knobsOf}); absent: the defaults. */
    private final Map<String, Map<String, String>> knobs = new java.util.HashMap<>();
    private Mid mid;
    private int loadRuns;

    private Topology(Settings s, Path dir, PrintWriter progress) {
        this.settings = s;
        this.dir = dir;
        this.progress = progress;
        this.external = s.external();
    }

    static Topology start(Settings s, Path dir, PrintWriter progress) throws IOException {
        Topology t = new Topology(s, dir, progress);
        try {
            if (s.external() != null) {
                ExternalTopology e = s.external();
                progress.printf("experiment: external topology: mid-tier %s, admin %s; nothing started, nothing of it "
                        + "pinned (configuration %s at start)%n", e.midTier(), e.admin(), e.activeAtStart());
                progress.flush();
                return t;
            }
            if (s.externalShards() != null) {
                t.shardBase = s.externalShards();
            } else {
                t.startLeaf();
            }
            t.mid = t.startMidTier(midKey(s.firstConfig(), s.shardOptions()), optionsOf(s.firstConfig(), s.shardOptions()),
                    s.firstConfig());
            return t;
        } catch (IOException | RuntimeException e) {
            t.close();
            throw e;
        }
    }

    /** The configuration part of {@code NAME[+KNOB=VALUE…][@OPTIONS]}. */
    static String configOf(String config) {
        int at = config.indexOf('@');
        String c = at < 0 ? config : config.substring(0, at);
        int plus = c.indexOf('+');
        return plus < 0 ? c : c.substring(0, plus);
    }

    /**
     * The knobs a configuration may set, {@code +NAME=VALUE}: the flush mode and I/O-thread pinning
     * (run-time knobs of one mid-tier), the mid-tier JVM's collector (a mid-tier process per value),
     * and a load-adapter policy's tune interval ({@code adaptive+tune=10ms}: {@code --tune-interval},
     * a mid-tier process per value).
     */
    static final List<String> KNOBS = List.of("flush", "pin", "gc", "tune");

    /**
     * Each knob's value when a configuration does not set it (the mid-tier's defaults; gc: the JVM's
     * choice; tune: the server's own default interval).
     */
    private static final Map<String, String> KNOB_DEFAULTS = Map.of("flush", "per-iteration", "pin", "off", "gc",
            "default", "tune", "default");

    /** {@link #KNOB_DEFAULTS} of the knobs set at run time ({@code PUT /admin/knobs}). */
    private static final Map<String, String> RUNTIME_DEFAULTS = Map.of("flush", "per-iteration", "pin", "off");

    /** The {@code +gc=} values and their JVM flags ({@code default}: none, the JVM picks). */
    static final Map<String, String> GC_FLAGS = Map.of("serial", "-XX:+UseSerialGC", "parallel", "-XX:+UseParallelGC",
            "g1", "-XX:+UseG1GC", "zgc", "-XX:+UseZGC");

    /**
     * The knobs of {@code NAME[+flush=POLICY][+pin=CPUS|off][@OPTIONS]}, every knob present (the
     * default where not set): {@code doubleface+flush=batch:64:20us} runs {@code doubleface} with
     * that downstream flush mode on the same mid-tier ({@code PUT /admin/knobs}).
     *
     * @throws IllegalArgumentException for an unknown knob, a repeated one or a bad value
     */
    static Map<String, String> knobsOf(String config) {
        int at = config.indexOf('@');
        String c = at < 0 ? config : config.substring(0, at);
        Map<String, String> out = new java.util.TreeMap<>(KNOB_DEFAULTS);
        java.util.Set<String> seen = new java.util.HashSet<>();
        String[] parts = c.split("\\+", -1);
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            String k = eq < 0 ? parts[i] : parts[i].substring(0, eq);
            if (eq < 0 || !KNOBS.contains(k) || eq == parts[i].length() - 1) {
                throw new IllegalArgumentException(config + ": +" + parts[i] + " (expected +flush=per-write|"
                        + "per-iteration|batch:N[:Tus], +pin=CPU_LIST|off, +gc=" + String.join("|", gcNames())
                        + " or, on a load-adapter policy, +tune=DURATION)");
            }
            if (!seen.add(k)) {
                throw new IllegalArgumentException(config + ": knob " + k + " given twice");
            }
            String v = parts[i].substring(eq + 1);
            if (k.equals("flush")) {
                io.doubleface.driver.FlushMode.parse(v);
            } else if (k.equals("gc")) {
                if (!GC_FLAGS.containsKey(v)) {
                    throw new IllegalArgumentException(config + ": +gc=" + v + " (expected one of " + gcNames() + ")");
                }
            } else if (k.equals("tune")) {
                if (!isAdapter(config)) {
                    throw new IllegalArgumentException(config + ": +tune= is the load adapter's tune interval; "
                            + parts[0] + " is a static configuration (it applies to adaptive, adaptive-window, fm)");
                }
                if (!v.matches("[1-9][0-9]*(us|ms|s)")) {
                    throw new IllegalArgumentException(config + ": +tune=" + v
                            + " (expected a duration such as 1ms, 10ms, 500us; the server accepts 100us to 1s)");
                }
            } else if (!v.equals("off")) {
                io.doubleface.internal.loop.CpuAffinity.parseList(v);
            }
            out.put(k, v);
        }
        return out;
    }

    private static List<String> gcNames() {
        return GC_FLAGS.keySet().stream().sorted().toList();
    }

    /**
     * Checks {@code NAME[+KNOB=VALUE…][@OPTIONS]}: a configuration or load-adapter policy name and
     * valid knobs.
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    static void check(String config) {
        String n = configOf(config);
        if (io.doubleface.tune.TuneStrategy.byLabel(n) == null) {
            io.doubleface.model.Configuration.parse(n);
        }
        knobsOf(config);
    }

    /** Whether {@code config} names a load-adapter policy (its own mid-tier, no run-time switch). */
    static boolean isAdapter(String config) {
        return io.doubleface.tune.TuneStrategy.byLabel(configOf(config)) != null;
    }

    private static String midKey(String config, String dfltOptions) {
        String options = optionsOf(config, dfltOptions);
        Map<String, String> k = knobsOf(config);
        String key = isAdapter(config) ? configOf(config) + "@" + options : options;
        // a collector and a tune interval are start options: a process of their own
        key = k.get("gc").equals("default") ? key : key + " gc=" + k.get("gc");
        return k.get("tune").equals("default") ? key : key + " tune=" + k.get("tune");
    }

    /** The shard-URI options of {@code NAME[@OPTIONS]}, else {@code dflt}. */
    static String optionsOf(String config, String dflt) {
        int at = config.indexOf('@');
        return at < 0 ? (dflt == null ? "" : dflt) : config.substring(at + 1);
    }

    static String scheme(String driver) {
        return switch (driver) {
            case "kv" -> "kv";
            case "redis" -> "redis";
            case "mongo" -> "mongodb";
            case "grpc" -> "grpc";
            default -> throw new IllegalArgumentException("--driver: " + driver + " (expected: kv, redis, mongo, grpc)");
        };
    }

    private List<String> java(List<String> jvm, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvm);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(CLI_MAIN);
        cmd.addAll(args);
        return cmd;
    }

    private void startLeaf() throws IOException {
        if (settings.service().isSocial()) {
            startSocialLeaf();
            return;
        }
        int base = freePortRange(settings.shards());
        boolean ycsb = settings.service().isYcsb();
        List<String> args = ycsb
                ? new ArrayList<>(List.of("leaf", settings.driver(), "--shards", Integer.toString(settings.shards()),
                        "--base-port", Integer.toString(base), "--records", Long.toString(settings.records())))
                : new ArrayList<>(List.of("leaf", settings.service().name(), "--leaves",
                        Integer.toString(settings.shards()), "--base-port", Integer.toString(base)));
        if (ycsb && settings.driver().equals("kv")) {
            args.add("--loops");
            args.add("1");
        }
        progress.printf("experiment: starting %s leaf (%d shards on 127.0.0.1:%d-%d, cpus %s)%n",
                ycsb ? settings.driver() : settings.service().name(),
                settings.shards(), base, base + settings.shards() - 1, cpus(settings.auxCpus()));
        leaf = Proc.start("leaf", settings.auxCpus(), java(settings.auxJvm(), args), dir.resolve("leaf.log"));
        procs.add(leaf);
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        for (int p = base; p < base + settings.shards(); p++) {
            while (!connects(p)) {
                if (!leaf.isAlive()) {
                    throw new IOException("the leaf exited before it listened:\n" + leaf.tail());
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("the leaf does not listen on port " + p + " after 90 s:\n" + leaf.tail());
                }
                sleep(100);
            }
        }
        shardBase = (ycsb ? scheme(settings.driver()) : "grpc") + "://127.0.0.1:" + base + "-"
                + (base + settings.shards() - 1);
    }

    /**
     * {@code leaf social}: {@code shards} Redis and as many MongoDB shards, {@code records} users; the
     * two shard lists from its ready file ({@link #shardBase} the Redis one, {@link #socialMongo} the other).
     */
    private void startSocialLeaf() throws IOException {
        int n = settings.shards();
        int redisBase = freePortRange(2 * n);
        Path ready = dir.resolve("leaf.ready.json");
        Files.deleteIfExists(ready);
        List<String> args = new ArrayList<>(List.of("leaf", "social", "--redis-shards", Integer.toString(n),
                "--mongo-shards", Integer.toString(n), "--redis-base-port", Integer.toString(redisBase),
                "--mongo-base-port", Integer.toString(redisBase + n), "--users", Long.toString(settings.records()),
                "--ready-file", ready.toString()));
        progress.printf("experiment: starting the social leaf (%d redis-server + %d MongoDB shards on 127.0.0.1:%d-%d, "
                + "%d users, cpus %s)%n", n, n, redisBase, redisBase + 2 * n - 1, settings.records(),
                cpus(settings.auxCpus()));
        leaf = Proc.start("leaf", settings.auxCpus(), java(settings.auxJvm(), args), dir.resolve("leaf.log"));
        procs.add(leaf);
        Map<String, Object> uris = awaitReadyFile(leaf, "the leaf", ready, Duration.ofSeconds(120));
        shardBase = (String) uris.get("redis");
        socialMongo = (String) uris.get("mongo");
    }

    /** Waits for a process's ready file and reads it. */
    private static Map<String, Object> awaitReadyFile(Proc p, String what, Path ready, Duration wait)
            throws IOException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (!Files.exists(ready)) {
            if (!p.isAlive()) {
                throw new IOException(what + " exited before it listened:\n" + p.tail());
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(what + " wrote no " + ready.getFileName() + " after " + wait.toSeconds() + " s:\n"
                        + p.tail());
            }
            sleep(50);
        }
        return MiniJson.object(Files.readString(ready, java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Starts the mid-tier of {@code NAME[+KNOB=VALUE…][@OPTIONS]} (its {@code +gc} a JVM flag) as {@code key}. */
    private Mid startMidTier(String key, String options, String fullConfig) throws IOException {
        String config = configOf(fullConfig);
        String uri = options.isEmpty() ? shardBase : shardBase + (shardBase.contains("?") ? "&" : "?") + options;
        List<String> args = settings.service().isYcsb()
                ? new ArrayList<>(List.of("serve", "ycsb", "--shards", uri, "--port", "0",
                        "--admin-port", "0", "--io-threads", Integer.toString(settings.ioThreads()), "--records",
                        Long.toString(settings.records()), "--deadline", settings.deadline().toMillis() + "ms",
                        "--reply-work-us", Integer.toString(settings.replyWorkMicros()), "--policy", settings.policy(),
                        "--config", config))
                : new ArrayList<>(List.of("serve", settings.service().name(), "--port", "0",
                        "--admin-port", "0", "--io-threads", Integer.toString(settings.ioThreads()),
                        "--deadline", settings.deadline().toMillis() + "ms", "--config", config));
        if (settings.service().isSocial()) {
            // each mid-tier its own server id in its post ids
            args.addAll(List.of("--redis", uri, "--mongo", socialMongo, "--users", Long.toString(settings.records()),
                    "--server-id", Integer.toString(mids.size())));
        } else if (!settings.service().isYcsb()) {
            args.addAll(List.of("--leaves", uri));
        }
        String log = mids.isEmpty() ? "mid-tier.log" : "mid-tier-" + (mids.size() + 1) + ".log";
        Path ready = dir.resolve(log.replace(".log", ".ready.json"));
        Files.deleteIfExists(ready);
        args.add("--ready-file");
        args.add(ready.toString());
        args.addAll(isAdapter(config) ? settings.adapterArgs() : settings.extraServeArgs());
        String tune = knobsOf(fullConfig).get("tune");
        if (!tune.equals("default")) {
            args.addAll(List.of("--tune-interval", tune));
            progress.printf("experiment: this mid-tier's adapter wakes every %s%n", tune);
        }
        progress.printf("experiment: starting the mid-tier (%d I/O loop%s, cpus %s) over %s%n", settings.ioThreads(),
                settings.ioThreads() == 1 ? "" : "s", cpus(settings.midCpus()), uri);
        List<String> jvm = settings.midJvm();
        String gc = knobsOf(fullConfig).get("gc");
        if (!gc.equals("default")) {
            jvm = new ArrayList<>(jvm);
            jvm.add(GC_FLAGS.get(gc));
            progress.printf("experiment: this mid-tier runs with %s%n", GC_FLAGS.get(gc));
        }
        Proc p = Proc.start("mid-tier", settings.midCpus(), java(jvm, args), dir.resolve(log));
        procs.add(p);
        // the ports from the ready file the mid-tier writes once listening (serve --ready-file)
        Map<String, Object> ports = awaitReadyFile(p, "the mid-tier", ready, Duration.ofSeconds(60));
        Mid started = new Mid(options, uri, p, ((Number) ports.get("port")).intValue(),
                ((Number) ports.get("admin_port")).intValue());
        mids.put(key, started);
        return started;
    }

    private static String cpus(String c) {
        return c == null ? "any (not pinned)" : c;
    }

    String target() {
        return external != null ? external.midTier().toString() : "http://127.0.0.1:" + mid.port();
    }

    /** The shard URI of every mid-tier started so far, in start order. */
    List<String> shardUris() {
        return mids.values().stream().map(Mid::shardUri).toList();
    }

    /** Whether the mid-tier is a running one given by address ({@link ExternalTopology}), not a process of this runner. */
    boolean isExternal() {
        return external != null;
    }

    /** The external topology, or {@code null}. */
    ExternalTopology external() {
        return external;
    }

    /**
     * Makes {@code NAME[@OPTIONS]} current: the mid-tier with those shard options (started now if
     * it is the first use) with configuration NAME active.
     */
    void switchTo(String config) throws IOException {
        if (external != null) {
            switchExternal(config);
            return;
        }
        String options = optionsOf(config, settings.shardOptions());
        String name = configOf(config);
        String key = midKey(config, settings.shardOptions());
        Mid m = mids.get(key);
        // Only the measured mid-tier may run: an idle one can still burn its core (a busy-poll
        // configuration, or an adapter that moved to one), so the others are stopped (SIGSTOP)
        // while it runs and continued (SIGCONT) when their turn comes.
        for (Mid other : mids.values()) {
            if (other != m) {
                signal(other, "STOP");
            }
        }
        if (m != null) {
            signal(m, "CONT");
        }
        mid = m != null ? m : startMidTier(key, options, config);
        if (!isAdapter(name)) { // else the adapter picks the configuration itself
            HttpResponse<String> r = send(HttpRequest.newBuilder(admin("/admin/config?name="
                    + java.net.URLEncoder.encode(name, java.nio.charset.StandardCharsets.UTF_8)))
                    .PUT(HttpRequest.BodyPublishers.noBody()));
            if (r.statusCode() != 200) {
                throw new IOException("switch to " + config + ": HTTP " + r.statusCode() + ": " + r.body().strip());
            }
        }
        // the run-time knobs only: a collector and a tune interval are the mid-tier process itself (its key)
        Map<String, String> want = new java.util.TreeMap<>(knobsOf(config));
        want.remove("gc");
        want.remove("tune");
        Map<String, String> have = knobs.getOrDefault(key, RUNTIME_DEFAULTS);
        if (!want.equals(have)) {
            String q = "flush-policy=" + enc(want.get("flush")) + "&pin-io-threads=" + enc(want.get("pin"));
            HttpResponse<String> r = send(HttpRequest.newBuilder(admin("/admin/knobs?" + q))
                    .PUT(HttpRequest.BodyPublishers.noBody()));
            if (r.statusCode() != 200) {
                throw new IOException("knobs of " + config + ": HTTP " + r.statusCode() + ": " + r.body().strip());
            }
            knobs.put(key, want);
            progress.printf("experiment: knobs of %s: flush-policy %s, pin-io-threads %s%n", config, want.get("flush"),
                    want.get("pin"));
            progress.flush();
        }
    }

    private static String enc(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Why {@code config} cannot run on an external mid-tier, or {@code null} if it can: a load-adapter
     * policy, {@code @OPTIONS} shard options and a {@code +gc=} collector each need a mid-tier process
     * of their own; {@code +flush=}/{@code +pin=} need {@code /admin/knobs} on the server.
     */
    static String externalRefusal(String config, boolean serverHasKnobs) {
        if (isAdapter(config)) {
            return config + ": a load-adapter policy runs in a mid-tier started with --config " + configOf(config)
                    + " (and its profile); a running mid-tier can only switch between static configurations";
        }
        if (config.indexOf('@') >= 0) {
            return config + ": @OPTIONS are shard-URI options, fixed when a mid-tier process opens its shards; "
                    + "the running mid-tier's are its own";
        }
        if (!knobsOf(config).get("gc").equals("default")) {
            return config + ": +gc= is the collector of a mid-tier JVM of its own; the running mid-tier's JVM "
                    + "is not restarted";
        }
        if (!serverHasKnobs && !explicitKnobs(config).isEmpty()) {
            return config + ": the mid-tier has no /admin/knobs, so +flush=/+pin= cannot be set on it";
        }
        return null;
    }

    /** The knobs {@code config} sets itself ({@code +flush=…}), without the defaults. */
    private static Map<String, String> explicitKnobs(String config) {
        Map<String, String> all = knobsOf(config);
        Map<String, String> out = new java.util.TreeMap<>();
        String c = config.indexOf('@') < 0 ? config : config.substring(0, config.indexOf('@'));
        for (String k : KNOBS) {
            if (c.contains("+" + k + "=")) {
                out.put(k, all.get(k));
            }
        }
        return out;
    }

    /**
     * {@link #switchTo} on an external mid-tier: {@code PUT /admin/config?name=NAME}, then the
     * run-time knobs the configuration sets — those it does not set are the server's own, as found
     * at the start.
     */
    private void switchExternal(String config) throws IOException {
        String refusal = externalRefusal(config, external.knobsAtStart() != null);
        if (refusal != null) {
            throw new IllegalArgumentException(refusal);
        }
        String name = configOf(config);
        HttpResponse<String> r = external.admin("PUT", "/admin/config?name=" + enc(name));
        if (r.statusCode() != 200) {
            throw new IOException("switch to " + config + " on " + external.admin() + ": HTTP " + r.statusCode() + ": "
                    + r.body().strip());
        }
        if (external.knobsAtStart() == null) {
            return;
        }
        Map<String, String> want = new java.util.TreeMap<>(external.knobsAtStart());
        want.putAll(explicitKnobs(config));
        putKnobs(config, want);
    }

    /** Sets the external mid-tier's knobs to {@code want} unless they are so already (as far as this runner knows). */
    private void putKnobs(String config, Map<String, String> want) throws IOException {
        Map<String, String> have = knobs.getOrDefault("external", external.knobsAtStart());
        if (want.equals(have)) {
            return;
        }
        HttpResponse<String> r = external.admin("PUT", "/admin/knobs?flush-policy=" + enc(want.get("flush"))
                + "&pin-io-threads=" + enc(want.get("pin")));
        if (r.statusCode() != 200) {
            throw new IOException("knobs of " + config + " on " + external.admin() + ": HTTP " + r.statusCode() + ": "
                    + r.body().strip());
        }
        knobs.put("external", new java.util.TreeMap<>(want));
        progress.printf("experiment: knobs of %s: flush-policy %s, pin-io-threads %s%n", config, want.get("flush"),
                want.get("pin"));
        progress.flush();
    }

    Map<String, Object> adminStats() throws IOException {
        HttpResponse<String> r = external != null ? external.admin("GET", "/admin/stats")
                : send(HttpRequest.newBuilder(admin("/admin/stats")).GET());
        if (r.statusCode() != 200) {
            throw new IOException("/admin/stats: HTTP " + r.statusCode());
        }
        return MiniJson.object(r.body());
    }

    MidTierSample sample() throws IOException {
        // an external mid-tier's threads are not in this machine's /proc: its own per-group counters then
        return external != null ? MidTierSample.ofServer(adminStats()) : MidTierSample.of(adminStats(), mid.proc().pid());
    }

    /**
     * Runs {@code doubleface load ARGS --target T --json --quiet --hlog FILE} pinned to the
     * auxiliary CPUs and returns its summary.
     *
     * @param timeout how long the run may take before it is killed
     */
    LoadRun load(String label, List<String> args, Duration timeout) throws IOException {
        return load(label, args, timeout, null);
    }

    /**
     * As {@link #load(String, List, Duration)}, and runs {@code atMeasureStart} when the generator's
     * warm-up ends ({@code load --measure-file}, polled every 10 ms): e.g. to sample the mid-tier's
     * counters over exactly the measured part. Not for wrk runs.
     */
    LoadRun load(String label, List<String> args, Duration timeout, IoRunnable atMeasureStart) throws IOException {
        if (!settings.service().isYcsb()) {
            args = serviceRequests(args);
        }
        if ("wrk".equals(settings.generator()) && args.contains("--users") && !args.contains("--mix")) {
            return loadWrk(label, args, timeout);
        }
        int n = ++loadRuns;
        String file = String.format(java.util.Locale.ROOT, "run-%04d", n);
        Path hlog = dir.resolve("intervals").resolve(file + ".hlog");
        java.nio.file.Files.createDirectories(hlog.getParent());
        List<String> a = new ArrayList<>(List.of("load", "--target", target(), "--json", "--quiet", "--hlog",
                hlog.toString()));
        Path measuring = dir.resolve("logs").resolve(file + ".measuring");
        if (atMeasureStart != null) {
            java.nio.file.Files.deleteIfExists(measuring);
            a.addAll(List.of("--measure-file", measuring.toString()));
        }
        a.addAll(args);
        List<String> jvm = new ArrayList<>(settings.auxJvm());
        if (args.contains("--rate") || args.contains("--schedule")) {
            // Open loop: the generator must keep its schedule from its first second. A fresh JVM
            // pinned to one core stalls 100-300 ms at a time while C2 compiles on that core
            // (measured: send-lag max 230-270 ms with the default JIT, 7-33 ms with C1 only), and
            // a late send is latency. C1 code is slower but far below this core's budget here.
            jvm.add(OPEN_LOOP_JIT);
        }
        Proc p = Proc.start("load", settings.auxCpus(), java(jvm, a),
                dir.resolve("logs").resolve(file + ".log"));
        Proc.Exit exit;
        try {
            if (atMeasureStart != null) {
                long until = System.nanoTime() + timeout.toNanos();
                while (p.isAlive() && !java.nio.file.Files.exists(measuring) && System.nanoTime() < until) {
                    sleep(10);
                }
                if (java.nio.file.Files.exists(measuring)) {
                    atMeasureStart.run();
                }
            }
            exit = p.await(timeout.toMillis());
        } finally {
            p.close();
        }
        if (mid != null && !mid.proc().isAlive()) {
            throw new IOException("the mid-tier died during " + label + ":\n" + mid.proc().tail());
        }
        String out = exit.stdout().strip();
        int brace = out.lastIndexOf("\n{");
        String json = brace >= 0 ? out.substring(brace + 1) : out;
        if (exit.status() != 0 || !json.startsWith("{")) {
            throw new IOException("load (" + label + ") exited with status " + exit.status() + ":\n" + p.tail());
        }
        return new LoadRun(file, hlog, MiniJson.object(json));
    }

    /** {@code args} with the YCSB {@code --url} replaced by the service's requests. */
    private List<String> serviceRequests(List<String> args) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i).equals("--url") && i + 1 < args.size()) {
                out.addAll(settings.service().loadArgs());
                i++;
            } else {
                out.add(args.get(i));
            }
        }
        return out;
    }

    private static final Pattern WRK_REQUESTS = Pattern.compile("(\\d+) requests in ([\\d.]+)(us|ms|s|m)");
    private static final Pattern WRK_RATE = Pattern.compile("Requests/sec:\\s+([\\d.]+)");
    private static final Pattern WRK_LATENCY = Pattern.compile(
            "^\\s+Latency\\s+\\S+\\s+\\S+\\s+([\\d.]+)(us|ms|s)", Pattern.MULTILINE);
    private static final Pattern WRK_PCT = Pattern.compile("^\\s+(50|75|90|99)%\\s+([\\d.]+)(us|ms|s)", Pattern.MULTILINE);
    private static final Pattern WRK_NON2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");
    private static final Pattern WRK_SOCKET = Pattern.compile(
            "Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

    /**
     * A closed-loop run with {@code wrk} instead of the Java generator: {@code wrk -t1 -cN} (one
     * thread, N connections, zero think time) pinned like the generator, a discarded run for the
     * warm-up, then the measured one with {@code --latency}. The key is left out of the URL: the
     * service picks a uniformly random one. wrk keeps no interval log; its percentiles are
     * closed-loop latency and follow docs/measuring.md#samples-per-percentile (p99 needs 10,000 requests).
     */
    private LoadRun loadWrk(String label, List<String> args, Duration timeout) throws IOException {
        int n = ++loadRuns;
        String file = String.format(java.util.Locale.ROOT, "run-%04d", n);
        int users = Integer.parseInt(arg(args, "--users"));
        String url = target() + arg(args, "--url").replace("&key={key}", "").replace("?key={key}&", "?")
                .replace("?key={key}", "");
        long warmupMs = millis(arg(args, "--warmup"));
        long durationMs = millis(arg(args, "--duration"));
        java.nio.file.Files.createDirectories(dir.resolve("logs"));
        if (warmupMs > 0) {
            wrk(users, (warmupMs + 999) / 1000, url, dir.resolve("logs").resolve(file + "-warmup.log"), timeout);
        }
        long secs = Math.max(1, (durationMs + 999) / 1000);
        String out = wrk(users, secs, url, dir.resolve("logs").resolve(file + ".log"), timeout);
        if (mid != null && !mid.proc().isAlive()) {
            throw new IOException("the mid-tier died during " + label + ":\n" + mid.proc().tail());
        }
        Matcher req = WRK_REQUESTS.matcher(out);
        Matcher rate = WRK_RATE.matcher(out);
        if (!req.find() || !rate.find()) {
            throw new IOException("wrk (" + label + ") printed no result:\n" + out);
        }
        long requests = Long.parseLong(req.group(1));
        long errors = 0;
        Matcher non2xx = WRK_NON2XX.matcher(out);
        if (non2xx.find()) {
            errors += Long.parseLong(non2xx.group(1));
        }
        Matcher sock = WRK_SOCKET.matcher(out);
        if (sock.find()) {
            for (int g = 1; g <= 4; g++) {
                errors += Long.parseLong(sock.group(g));
            }
        }
        Map<String, Object> summary = new java.util.LinkedHashMap<>();
        summary.put("mode", "closed");
        summary.put("generator", "wrk -t1 -c" + users + " -d" + secs + "s --latency --timeout 5s");
        summary.put("target", url);
        summary.put("users", (double) users);
        summary.put("requests", (double) (requests - Math.min(requests, errors)));
        summary.put("errors", (double) errors);
        summary.put("throughput_rps", Double.parseDouble(rate.group(1)));
        Map<String, Double> pct = new java.util.HashMap<>();
        Matcher pm = WRK_PCT.matcher(out);
        while (pm.find()) {
            pct.put(pm.group(1), toMillis(pm.group(2), pm.group(3)));
        }
        summary.put("p50_ms", requests >= 200 ? pct.get("50") : null);
        summary.put("p90_ms", requests >= 1000 ? pct.get("90") : null);
        summary.put("p99_ms", requests >= 10_000 ? pct.get("99") : null);
        summary.put("p999_ms", null);
        Matcher lat = WRK_LATENCY.matcher(out);
        summary.put("max_ms", lat.find() ? toMillis(lat.group(1), lat.group(2)) : null);
        summary.put("duration_s", (double) secs);
        summary.put("warmup_s", warmupMs / 1000.0);
        return new LoadRun(file, dir.resolve("intervals").resolve(file + ".hlog"), summary);
    }

    private String wrk(int users, long secs, String url, Path log, Duration timeout) throws IOException {
        Proc p = Proc.start("wrk", settings.auxCpus(), List.of("wrk", "-t1", "-c" + users, "-d" + secs + "s",
                "--latency", "--timeout", "5s", url), log);
        Proc.Exit exit;
        try {
            exit = p.await(timeout.toMillis());
        } finally {
            p.close();
        }
        if (exit.status() != 0) {
            throw new IOException("wrk exited with status " + exit.status() + ":\n" + p.tail());
        }
        return exit.stdout();
    }

    private static String arg(List<String> args, String name) {
        int i = args.indexOf(name);
        if (i < 0 || i + 1 >= args.size()) {
            throw new IllegalArgumentException("load arguments without " + name + ": " + args);
        }
        return args.get(i + 1);
    }

    private static long millis(String d) {
        if (d.endsWith("ms")) {
            return Long.parseLong(d.substring(0, d.length() - 2));
        }
        if (d.endsWith("s")) {
            return Long.parseLong(d.substring(0, d.length() - 1)) * 1000;
        }
        throw new IllegalArgumentException("duration " + d);
    }

    private static double toMillis(String v, String unit) {
        double x = Double.parseDouble(v);
        return switch (unit) {
            case "us" -> x / 1000;
            case "s" -> x * 1000;
            default -> x;
        };
    }

    /** Work that may fail with an {@link IOException}. */
    @FunctionalInterface
    interface IoRunnable {
        void run() throws IOException;
    }

    /** One load run's summary (the {@code --json} object) and interval log. */
    record LoadRun(String id, Path hlog, Map<String, Object> summary) {
        Double number(String key) {
            Object v = summary.get(key);
            return v instanceof Number x ? x.doubleValue() : null;
        }
    }

    private URI admin(String path) {
        return URI.create("http://127.0.0.1:" + mid.adminPort() + path);
    }

    private HttpResponse<String> send(HttpRequest.Builder b) throws IOException {
        try {
            return http.send(b.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private static boolean connects(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A run of {@code n} consecutive loopback ports that are free now. */
    static int freePortRange(int n) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(20_000, 30_000 - n);
            List<ServerSocket> held = new ArrayList<>();
            try {
                for (int p = base; p < base + n; p++) {
                    ServerSocket s = new ServerSocket();
                    held.add(s);
                    s.bind(new InetSocketAddress("127.0.0.1", p));
                }
                return base;
            } catch (IOException e) {
                // taken: try elsewhere
            } finally {
                for (ServerSocket s : held) {
                    s.close();
                }
            }
        }
        throw new IOException("no " + n + " consecutive free ports in 20000-30000");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Puts back the configuration and knobs the external mid-tier had at the start (best effort, said if not). */
    private void restoreExternal() {
        try {
            HttpResponse<String> r = external.admin("PUT", "/admin/config?name=" + enc(external.activeAtStart()));
            if (r.statusCode() != 200) {
                throw new IOException("HTTP " + r.statusCode() + ": " + r.body().strip());
            }
            if (external.knobsAtStart() != null) {
                putKnobs("the start", external.knobsAtStart());
            }
            progress.printf("experiment: the external mid-tier is back on %s%n", external.activeAtStart());
        } catch (IOException | RuntimeException e) {
            progress.printf("experiment: warning: could not put the external mid-tier back on %s: %s%n",
                    external.activeAtStart(), e.getMessage());
        }
        progress.flush();
    }

    private void signal(Mid m, String sig) throws IOException {
        if (mids.size() < 2 && sig.equals("STOP")) {
            return;
        }
        try {
            Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(m.proc().pid())).redirectErrorStream(true)
                    .start();
            p.getInputStream().readAllBytes();
            p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** Stops every process, the mid-tier first; an external mid-tier gets its configuration and knobs back. */
    @Override
    public void close() {
        if (external != null) {
            restoreExternal();
        }
        for (Mid m : mids.values()) {
            try {
                signal(m, "CONT"); // a stopped process would not see SIGTERM
            } catch (IOException e) {
                // closing anyway
            }
        }
        for (int i = procs.size() - 1; i >= 0; i--) {
            procs.get(i).close();
        }
        procs.clear();
    }
}
