package io.doubleface.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Real {@code redis-server} processes on loopback ports, one per shard, for tests, the demo and
 * {@code doubleface leaf redis}.
 *
 * <p>The binary is, in order: the system property {@value #BINARY_PROPERTY}, the environment
 * variable {@value #BINARY_ENV}, {@code redis-server} on {@code PATH}, else the binary shipped in
 * the {@code com.github.codemonstur:embedded-redis} jar (Redis 6.2, Linux and macOS); if none
 * fits, {@link #start} fails with a message saying how to install one (nothing is skipped
 * silently). Set {@value #BINARY_PROPERTY}{@code =embedded} to force the embedded one.
 *
 * <p>Each server runs with {@code --bind <host> --save "" --appendonly no} (no persistence: data
 * lives as long as the process), its working directory and log in a private temporary directory.
 *
 * <p>No orphans: {@link #close} (also run by a JVM shutdown hook, so Ctrl-C/SIGTERM are covered)
 * kills every server and waits for it. Against a JVM killed with SIGKILL, a watchdog
 * {@code sh} process reads its stdin, a pipe only this JVM writes to; when the JVM dies the kernel
 * closes the pipe, the watchdog reads end-of-file at once, {@code kill -9}s the pids written in
 * the directory's {@code *.pid} files and removes the directory. Limit: if the
 * watchdog itself is SIGKILLed together with the JVM (e.g. {@code kill -9} of the whole process
 * group), the servers survive; their pids are in the {@code *.pid} files under
 * {@code java.io.tmpdir/doubleface-redis-*}.
 *
 * <p>Threading: thread-safe (methods are synchronized).
 */
public final class RedisServers implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisServers.class);

    /** System property naming the {@code redis-server} binary: {@value}. */
    public static final String BINARY_PROPERTY = "doubleface.redis.server";
    /** Environment variable naming the {@code redis-server} binary: {@value}. */
    public static final String BINARY_ENV = "DOUBLEFACE_REDIS_SERVER";

    /** Longest a server may take to accept connections: {@value} ms. */
    static final long START_TIMEOUT_MILLIS = 10_000;

    private final Path binary;
    private final String host;
    private final boolean cluster;
    /** For a cluster: how many of the servers (the first ones) were made masters; the rest are replicas. */
    private int masters;
    private final Path dir;
    private final List<InetSocketAddress> addresses = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();
    private final Process watchdog;
    private final Thread hook;
    private boolean closed;

    private RedisServers(Path binary, String host, Path dir, Process watchdog, boolean cluster) {
        this.binary = binary;
        this.host = host;
        this.cluster = cluster;
        this.dir = dir;
        this.watchdog = watchdog;
        this.hook = new Thread(this::close, "redis-servers-shutdown");
    }

    /**
     * Starts {@code shards} servers on {@code host}, shard {@code i} on {@code basePort + i}
     * ({@code basePort} 0: free ports chosen by the OS), and waits until each accepts connections.
     *
     * @param shards the number of servers, {@code > 0}
     * @param basePort the port of shard 0, the others following it ({@code basePort + shards - 1 <= 65535});
     *     0 for free ports chosen by the OS (read them with {@link #addresses()})
     * @param host the address the servers bind to and are reached on, e.g. {@code 127.0.0.1}
     * @return the running servers; the caller closes them
     * @throws IllegalArgumentException if {@code shards} or {@code basePort} is out of range
     * @throws IllegalStateException if no binary is found or a server does not start (its log tail
     *     is in the message)
     */
    public static RedisServers start(int shards, int basePort, String host) {
        return start(findBinary(), shards, basePort, host, false);
    }

    /**
     * Starts {@code nodes} servers as a Redis Cluster ({@code --cluster-enabled yes}): the slots
     * are split evenly (node {@code i} serves the {@code i}-th range), the nodes meet, and this
     * returns once every node reports {@code cluster_state:ok}. No replicas.
     *
     * @param nodes the number of master nodes, {@code > 0}
     * @param basePort the port of node 0, the others following it; 0 for free ports chosen by the OS
     * @param host the address the nodes bind to and are reached on, e.g. {@code 127.0.0.1}
     * @return the running cluster; the caller closes it. {@link #uri()} gives its {@code redis-cluster://} seed
     * @throws IllegalArgumentException if {@code nodes} or {@code basePort} is out of range
     * @throws IllegalStateException if no binary is found, a node does not start, or the cluster does not
     *     form within 30 s (the servers are closed again)
     */
    public static RedisServers startCluster(int nodes, int basePort, String host) {
        return startCluster(nodes, 0, basePort, host);
    }

    /** Longest {@link #startCluster} waits for the cluster to form: {@value} ms. */
    static final long FORM_TIMEOUT_MILLIS = 30_000;

    /**
     * Starts a Redis Cluster of {@code masters} masters with {@code replicas} replicas each: server
     * {@code i < masters} is master {@code i} and serves the {@code i}-th of {@code masters} even slot
     * ranges ({@code CLUSTER ADDSLOTS}); the replicas of master {@code m} are the servers
     * {@code masters + m * replicas ..}, attached with {@code CLUSTER REPLICATE}. Every node meets the
     * first; this returns once every node reports {@code cluster_state:ok} and knows every other
     * node, and every replica is attached. Nodes run with {@code cluster-node-timeout}
     * {@value #CLUSTER_NODE_TIMEOUT_MILLIS} ms (a dead master's replica is promoted within a few
     * seconds) and {@code cluster-require-full-coverage no} (a dead master's slots fail, the others
     * keep serving).
     *
     * @param masters the number of masters, {@code > 0}
     * @param replicas replicas per master, {@code >= 0}
     * @param basePort the port of server 0, the others following it; 0 for free ports chosen by the OS
     * @param host the address the nodes bind to and are reached on, e.g. {@code 127.0.0.1}
     * @return the running cluster; the caller closes it. {@link #uri()} gives its {@code redis-cluster://} seeds
     * @throws IllegalArgumentException if a count or {@code basePort} is out of range
     * @throws IllegalStateException if no binary is found, a node does not start, or the cluster does not
     *     form within {@value #FORM_TIMEOUT_MILLIS} ms (the servers are closed again)
     */
    public static RedisServers startCluster(int masters, int replicas, int basePort, String host) {
        if (masters < 1 || replicas < 0 || masters * (1L + replicas) > 1000) {
            throw new IllegalArgumentException("masters: " + masters + ", replicas: " + replicas
                    + " (expected: masters > 0, replicas >= 0, at most 1000 servers)");
        }
        RedisServers s = start(findBinary(), masters * (1 + replicas), basePort, host, true);
        try {
            s.masters = masters;
            s.form(masters, replicas);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** {@code nodes} cluster-enabled servers on free ports that form no cluster and serve no slot (tests). */
    static RedisServers startClusterNodesOnly(int nodes, String host) {
        RedisServers s = start(findBinary(), nodes, 0, host, true);
        s.masters = nodes;
        return s;
    }

    /** {@code cluster-node-timeout} of the cluster nodes started here: {@value} ms. */
    static final long CLUSTER_NODE_TIMEOUT_MILLIS = 1_000;

    private void form(int masters, int replicas) {
        java.time.Duration t = java.time.Duration.ofSeconds(10);
        List<InetSocketAddress> nodes = addresses();
        try {
            for (int i = 0; i < masters; i++) {
                int lo = (int) ((long) io.doubleface.api.ShardRouting.REDIS_SLOTS * i / masters);
                int hi = (int) ((long) io.doubleface.api.ShardRouting.REDIS_SLOTS * (i + 1) / masters) - 1;
                List<String> cmd = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
                for (int slot = lo; slot <= hi; slot++) {
                    cmd.add(Integer.toString(slot));
                }
                expectOk(nodes.get(i), RedisClusterTopology.command(nodes.get(i), t, cmd.toArray(new String[0])));
            }
            InetSocketAddress first = nodes.get(0);
            for (int i = 1; i < nodes.size(); i++) {
                expectOk(nodes.get(i), RedisClusterTopology.command(nodes.get(i), t, "CLUSTER", "MEET",
                        first.getAddress().getHostAddress(), Integer.toString(first.getPort())));
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FORM_TIMEOUT_MILLIS);
            for (InetSocketAddress a : nodes) { // everyone knows everyone before replicas attach
                awaitCluster(a, deadline, "to know all " + nodes.size() + " nodes",
                        n -> n.lines().filter(l -> !l.isBlank() && !l.contains("handshake")).count() == nodes.size());
            }
            for (int m = 0; m < masters; m++) {
                String id = myId(nodes.get(m), t);
                for (int r = 0; r < replicas; r++) {
                    InetSocketAddress ra = nodes.get(masters + m * replicas + r);
                    expectOk(ra, RedisClusterTopology.command(ra, t, "CLUSTER", "REPLICATE", id));
                }
            }
            for (InetSocketAddress a : nodes) {
                awaitCluster(a, deadline, "to see " + masters * replicas + " replicas attached and every slot served",
                        n -> n.lines().filter(l -> l.contains(" slave ") || l.contains(",slave ")).count()
                                == (long) masters * replicas);
                awaitOk(a, deadline);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot form the redis cluster: " + e.getMessage(), e);
        }
    }

    private static void expectOk(InetSocketAddress a, Object reply) {
        if (!"OK".equals(reply)) {
            throw new IllegalStateException("redis node " + a + " answered " + reply + " (expected: OK)");
        }
    }

    private static String myId(InetSocketAddress a, java.time.Duration t) throws IOException {
        Object nodes = RedisClusterTopology.command(a, t, "CLUSTER", "NODES");
        for (String line : String.valueOf(nodes).split("\n")) {
            if (line.contains("myself")) {
                return line.substring(0, line.indexOf(' '));
            }
        }
        throw new IllegalStateException("redis node " + a + ": CLUSTER NODES has no 'myself' line");
    }

    private static void awaitCluster(InetSocketAddress a, long deadline, String what,
            java.util.function.Predicate<String> done) throws IOException {
        while (true) {
            Object nodes = RedisClusterTopology.command(a, java.time.Duration.ofSeconds(5), "CLUSTER", "NODES");
            if (nodes instanceof String n && done.test(n)) {
                return;
            }
            pauseUntil(deadline, "redis node " + a + " did not come " + what + " within " + FORM_TIMEOUT_MILLIS
                    + " ms: " + nodes);
        }
    }

    private static void awaitOk(InetSocketAddress a, long deadline) throws IOException {
        while (true) {
            Object info = RedisClusterTopology.command(a, java.time.Duration.ofSeconds(5), "CLUSTER", "INFO");
            if (String.valueOf(info).contains("cluster_state:ok")) {
                return;
            }
            pauseUntil(deadline, "redis cluster not ok within " + FORM_TIMEOUT_MILLIS + " ms at " + a + ": "
                    + String.valueOf(info).lines().findFirst().orElse(""));
        }
    }

    private static void pauseUntil(long deadline, String failure) {
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException(failure);
        }
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while forming the cluster", e);
        }
    }

    /**
     * Waits until the cluster, as node {@code via} sees it, is {@code ok} and the slot of
     * {@code slot} is served by a node other than {@code notBy}: after a master was killed, until a
     * replica has been promoted in its place.
     *
     * @param via a live node
     * @param slot a slot the dead master served
     * @param notBy the dead master
     * @param timeoutMillis how long to wait
     * @return the new owner's address
     * @throws IllegalStateException if that does not happen in time
     */
    public static InetSocketAddress awaitFailover(InetSocketAddress via, int slot, InetSocketAddress notBy,
            long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            try {
                for (RedisClusterMap.Shard sh : RedisClusterTopology.query(via, java.time.Duration.ofSeconds(2))) {
                    for (int[] r : sh.ranges()) {
                        if (slot >= r[0] && slot <= r[1] && !sh.master().equals(notBy)) {
                            return sh.master();
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not yet
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no replica took over slot " + slot + " from " + notBy + " within "
                        + timeoutMillis + " ms");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** {@return for a cluster, the number of servers started as masters (the first ones); else the server count} */
    public synchronized int masters() {
        return cluster ? masters : addresses.size();
    }

    /** {@link #start(int, int, String)} with a given binary. */
    static RedisServers start(Path binary, int shards, int basePort, String host) {
        return start(binary, shards, basePort, host, false);
    }

    private static RedisServers start(Path binary, int shards, int basePort, String host, boolean cluster) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: > 0)");
        }
        if (basePort < 0 || basePort + shards - 1 > 65535) {
            throw new IllegalArgumentException("base port " + basePort + " with " + shards + " shards (expected: ports "
                    + "in 1..65535, or 0 for any free ports)");
        }
        Path dir;
        Process watchdog;
        try {
            dir = Files.createTempDirectory("doubleface-redis-");
            // stdin is a pipe whose only writer is this JVM: EOF means the JVM is gone (even a
            // zombie nobody reaps, which "kill -0 pid" would still find alive)
            watchdog = new ProcessBuilder("sh", "-c", "while read -r _; do :; done; for f in \"$0\"/*.pid; do "
                    + "[ -f \"$f\" ] && kill -9 $(cat \"$f\") 2>/dev/null; done; rm -rf \"$0\"", dir.toString())
                    .redirectInput(ProcessBuilder.Redirect.PIPE)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare redis-server directory: " + e.getMessage(), e);
        }
        RedisServers s = new RedisServers(binary, host, dir, watchdog, cluster);
        Runtime.getRuntime().addShutdownHook(s.hook);
        try {
            int[] ports = basePort == 0 ? freePorts(host, shards) : null;
            for (int i = 0; i < shards; i++) {
                int port = basePort == 0 ? ports[i] : basePort + i;
                s.addresses.add(new InetSocketAddress(host, port));
                s.processes.add(null);
                s.launch(i);
            }
            for (int i = 0; i < shards; i++) {
                for (int attempt = 1; ; attempt++) {
                    try {
                        s.awaitReady(i);
                        break;
                    } catch (IllegalStateException e) {
                        // a free port chosen by us may be taken by someone else before redis binds it
                        if (basePort != 0 || attempt == 3 || s.processes.get(i).isAlive()) {
                            throw e;
                        }
                        s.addresses.set(i, new InetSocketAddress(host, freePorts(host, 1)[0]));
                        s.launch(i);
                    }
                }
            }
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /**
     * {@link #start(int, int, String)} on 127.0.0.1.
     *
     * @param shards the number of servers, {@code > 0}
     * @param basePort the port of shard 0, the others following it; 0 for free ports chosen by the OS
     * @return the running servers; the caller closes them
     * @throws IllegalArgumentException if {@code shards} or {@code basePort} is out of range
     * @throws IllegalStateException if no binary is found or a server does not start
     */
    public static RedisServers start(int shards, int basePort) {
        return start(shards, basePort, "127.0.0.1");
    }

    /**
     * The {@code redis-server} binary: {@value #BINARY_PROPERTY}, {@value #BINARY_ENV},
     * {@code redis-server} on {@code PATH}, else the one shipped in the {@code embedded-redis}
     * artifact for this OS/CPU ({@link #embeddedBinary()}).
     *
     * @return the path of an executable {@code redis-server}
     * @throws IllegalStateException saying how to get one if none is found
     */
    public static Path findBinary() {
        String named = System.getProperty(BINARY_PROPERTY, System.getenv(BINARY_ENV));
        if ("embedded".equals(named)) {
            return embeddedBinary();
        }
        if (named != null && !named.isBlank()) {
            Path p = Path.of(named);
            if (Files.isExecutable(p)) {
                return p;
            }
            throw new IllegalStateException("redis-server binary " + p + " (from " + BINARY_PROPERTY + "/" + BINARY_ENV
                    + ") is not an executable file");
        }
        Path onPath = onPath();
        if (onPath != null) {
            return onPath;
        }
        try {
            return embeddedBinary();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("no redis-server found: not on PATH, not named by -D" + BINARY_PROPERTY
                    + " / $" + BINARY_ENV + ", and " + e.getMessage() + ". Install one (Debian/Ubuntu: apt-get install "
                    + "redis-server; macOS: brew install redis) or point " + BINARY_ENV + " at a redis-server binary", e);
        }
    }

    /** {@code redis-server} on {@code PATH}, or {@code null}. */
    static Path onPath() {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(java.io.File.pathSeparator)) {
                if (!d.isEmpty() && Files.isExecutable(Path.of(d, "redis-server"))) {
                    return Path.of(d, "redis-server");
                }
            }
        }
        return null;
    }

    /**
     * The {@code redis-server} shipped in the {@code embedded-redis} jar for this OS and CPU
     * (Linux x86-64/arm64/x86, macOS x86-64/arm64), copied once to
     * {@code java.io.tmpdir/doubleface-redis-bin/} and made executable.
     *
     * @return the path of the extracted, executable binary (reused if already extracted)
     * @throws IllegalStateException if there is none for this platform or it cannot be extracted
     */
    public static Path embeddedBinary() {
        String resource = embeddedResource(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
        if (resource == null) {
            throw new IllegalStateException("the embedded-redis artifact has no redis-server for "
                    + System.getProperty("os.name") + "/" + System.getProperty("os.arch"));
        }
        try (InputStream in = RedisServers.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("the embedded-redis artifact (resource " + resource
                        + ") is not on the class path");
            }
            byte[] bytes = in.readAllBytes();
            Path dir = Path.of(System.getProperty("java.io.tmpdir"), "doubleface-redis-bin");
            Files.createDirectories(dir);
            Path target = dir.resolve(resource);
            if (Files.isExecutable(target) && Files.size(target) == bytes.length) {
                return target;
            }
            Path tmp = Files.createTempFile(dir, resource, ".part");
            Files.write(tmp, bytes);
            if (!tmp.toFile().setExecutable(true, false)) {
                throw new IllegalStateException("cannot make " + tmp + " executable");
            }
            Files.move(tmp, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return target;
        } catch (IOException e) {
            throw new IllegalStateException("cannot extract the embedded redis-server: " + e.getMessage(), e);
        }
    }

    static String embeddedResource(String os, String arch) {
        String o = os.toLowerCase(java.util.Locale.ROOT);
        String a = arch.toLowerCase(java.util.Locale.ROOT);
        boolean x64 = a.equals("amd64") || a.equals("x86_64");
        boolean arm64 = a.equals("aarch64") || a.equals("arm64");
        if (o.contains("linux")) {
            return x64 ? "redis-server-6.2.6-v5-linux-amd64" : arm64 ? "redis-server-6.2.7-linux-arm64"
                    : a.equals("x86") || a.equals("i386") ? "redis-server-6.2.7-linux-386" : null;
        }
        if (o.contains("mac")) {
            return x64 ? "redis-server-6.2.6-v5-darwin-amd64" : arm64 ? "redis-server-6.2.6-v5-darwin-arm64" : null;
        }
        return null;
    }

    /** {@code n} distinct free ports (all held open together while chosen). */
    private static int[] freePorts(String host, int n) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket ss = new ServerSocket();
                held.add(ss);
                ss.setReuseAddress(true);
                ss.bind(new InetSocketAddress(host, 0));
                ports[i] = ss.getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new IllegalStateException("no free port on " + host + ": " + e.getMessage(), e);
        } finally {
            for (ServerSocket ss : held) {
                try {
                    ss.close();
                } catch (IOException e) {
                    // nothing to do
                }
            }
        }
    }

    private void launch(int i) {
        int port = addresses.get(i).getPort();
        Path log = dir.resolve("redis-" + port + ".log");
        try {
            List<String> cmd = new ArrayList<>(List.of(binary.toString(), "--port", Integer.toString(port), "--bind", host,
                    "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no",
                    "--dir", dir.toString(), "--dbfilename", "dump-" + port + ".rdb", "--loglevel", "warning"));
            if (cluster) {
                Files.deleteIfExists(dir.resolve("nodes-" + port + ".conf"));
                cmd.addAll(List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes-" + port + ".conf",
                        "--cluster-node-timeout", Long.toString(CLUSTER_NODE_TIMEOUT_MILLIS),
                        "--cluster-require-full-coverage", "no"));
            }
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            processes.set(i, p);
            Files.writeString(dir.resolve("redis-" + port + ".pid"), Long.toString(p.pid()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + binary + " on port " + port + ": " + e.getMessage(), e);
        }
    }

    private void awaitReady(int i) {
        InetSocketAddress a = addresses.get(i);
        Process p = processes.get(i);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (true) {
            if (!p.isAlive()) {
                throw new IllegalStateException("redis-server on port " + a.getPort() + " exited with status "
                        + p.exitValue() + ": " + logTail(a.getPort()));
            }
            if (ping(a)) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("redis-server on port " + a.getPort() + " did not accept connections within "
                        + START_TIMEOUT_MILLIS + " ms: " + logTail(a.getPort()));
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting redis-server", e);
            }
        }
    }

    private static boolean ping(InetSocketAddress a) {
        try (Socket s = new Socket()) {
            s.connect(a, 200);
            s.setSoTimeout(500);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] b = new byte[7];
            int n = in.readNBytes(b, 0, 7);
            return n == 7 && new String(b, StandardCharsets.US_ASCII).equals("+PONG\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    private String logTail(int port) {
        try {
            String s = Files.readString(dir.resolve("redis-" + port + ".log"));
            s = s.strip();
            return s.length() > 800 ? "..." + s.substring(s.length() - 800) : s;
        } catch (IOException e) {
            return "(no log)";
        }
    }

    /** {@return the shard addresses, shard i at index i (a copy)} */
    public synchronized List<InetSocketAddress> addresses() {
        return List.copyOf(addresses);
    }

    /**
     * The shard list as a {@code redis://} URI; for a cluster, {@code redis-cluster://} with the
     * first node as the seed.
     *
     * @return the URI, for {@link RedisDriver#of(String)} or
     *     {@link RedisDriver#of(String, io.doubleface.driver.DriverSettings)}
     */
    public synchronized String uri() {
        if (cluster) {
            StringBuilder b = new StringBuilder(RedisDriver.CLUSTER_SCHEME).append("://");
            for (int i = 0; i < Math.max(1, masters); i++) {
                InetSocketAddress a = addresses.get(i);
                b.append(i == 0 ? "" : ",").append(a.getHostString()).append(':').append(a.getPort());
            }
            return b.toString();
        }
        return io.doubleface.driver.spi.ShardAddresses.describe("redis", addresses);
    }

    /** {@return the binary the servers run} */
    public Path binary() {
        return binary;
    }

    /** {@return the line {@code doubleface leaf redis} prints once every server accepts connections} */
    public synchronized String listeningMessage() {
        return "redis leaf: " + addresses.size() + " redis-server processes (" + binary + ")"
                + (cluster ? " as one cluster" : "") + " listening on " + (cluster
                        ? io.doubleface.driver.spi.ShardAddresses.describe("redis", addresses) + " (" + uri() + ")" : uri());
    }

    /**
     * The process id of shard {@code i}'s server.
     *
     * @param i the shard, {@code 0 .. addresses().size()-1}
     * @return the pid of its current process (a new one after {@link #restart})
     * @throws IndexOutOfBoundsException if there is no shard {@code i}
     */
    public synchronized long pid(int i) {
        return processes.get(i).pid();
    }

    /**
     * Kills shard {@code i}'s server with SIGKILL ({@code kill -9}) and waits until it is gone (at most
     * 10 s). Its data is lost; {@link #restart} starts it again, empty.
     *
     * @param i the shard, {@code 0 .. addresses().size()-1}
     * @throws IndexOutOfBoundsException if there is no shard {@code i}
     */
    public synchronized void kill(int i) {
        Process p = processes.get(i);
        p.destroyForcibly();
        waitFor(p);
        deletePidFile(i);
    }

    /**
     * Sends SIGSTOP to shard {@code i}'s server: it keeps its connections but stops answering.
     *
     * @param i the shard, {@code 0 .. addresses().size()-1}
     * @throws IndexOutOfBoundsException if there is no shard {@code i}
     * @throws IllegalStateException if {@code kill -STOP} fails
     */
    public synchronized void pause(int i) {
        signal(i, "STOP");
    }

    /**
     * Sends SIGCONT to shard {@code i}'s server, undoing {@link #pause}: it answers what queued meanwhile.
     *
     * @param i the shard, {@code 0 .. addresses().size()-1}
     * @throws IndexOutOfBoundsException if there is no shard {@code i}
     * @throws IllegalStateException if {@code kill -CONT} fails
     */
    public synchronized void resume(int i) {
        signal(i, "CONT");
    }

    private void signal(int i, String sig) {
        try {
            Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(processes.get(i).pid()))
                    .redirectErrorStream(true).start();
            if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
                throw new IllegalStateException("kill -" + sig + " " + processes.get(i).pid() + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException("kill -" + sig + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * Starts shard {@code i}'s server again on the same port (after {@link #kill}), empty: load the
     * dataset again.
     *
     * @param i the shard, {@code 0 .. addresses().size()-1}
     * @throws IndexOutOfBoundsException if there is no shard {@code i}
     * @throws IllegalStateException if the server is still running or does not start again
     */
    public synchronized void restart(int i) {
        Process p = processes.get(i);
        if (p.isAlive()) {
            throw new IllegalStateException("redis-server of shard " + i + " is still running");
        }
        launch(i);
        awaitReady(i);
    }

    private static void waitFor(Process p) {
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                log.warn("redis-server {} did not exit within 10 s", p.pid());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void deletePidFile(int i) {
        try {
            Files.deleteIfExists(dir.resolve("redis-" + addresses.get(i).getPort() + ".pid"));
        } catch (IOException e) {
            // the watchdog would kill -9 a pid that is gone: harmless
        }
    }

    /** Stops every server (SIGKILL, which also ends a paused one: nothing to persist), waits, cleans up. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < processes.size(); i++) {
            Process p = processes.get(i);
            if (p != null && p.isAlive()) {
                p.destroyForcibly(); // SIGKILL works on a SIGSTOPped process too
                waitFor(p);
            }
            if (p != null) {
                deletePidFile(i);
            }
        }
        watchdog.destroyForcibly();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // left in the temp directory
        }
        if (Thread.currentThread() != hook) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down already
            }
        }
    }

    @Override
    public String toString() {
        return "RedisServers[" + uri() + "]";
    }
}
