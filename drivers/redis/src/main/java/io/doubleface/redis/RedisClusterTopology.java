package io.doubleface.redis;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slot map of a Redis Cluster backend and how it is kept current: read from the cluster at open
 * ({@code CLUSTER SHARDS}, or {@code CLUSTER SLOTS} on a Redis older than 7), then refreshed
 *
 * <ul>
 *   <li>periodically (every {@code refresh}, default {@value #DEFAULT_REFRESH_SECONDS} s);
 *   <li>when asked ({@link #requestRefresh}): after a {@code MOVED}, after a lost or refused
 *       connection to a node, when a slot has no owner, while a replica is still syncing (the
 *       cluster reports it {@code loading}; it is read from once a refresh finds it
 *       {@code online}) — but never more often than once per
 *       {@code refresh-floor} (default {@value #DEFAULT_FLOOR_MILLIS} ms): requests during the floor
 *       are coalesced into one refresh at its end, so a storm of redirects costs one refresh.
 * </ul>
 *
 * <p>Concurrency: the current map is one {@link AtomicReference} read by the loops on every send
 * (no lock). Refreshes run on one daemon thread of this topology, with a blocking socket and a
 * hand-written RESP2 reader (so a native-only driver still starts none of Lettuce's threads); a
 * refresh never runs on a loop. {@link #requestRefresh} is wait-free (a flag and an unpark).
 * {@link #moved} patches the current map with a compare-and-set loop.
 *
 * <p>Which node is asked: the masters and replicas of the current map, then the seeds, in that
 * order, until one answers; a refresh that reaches none keeps the current map and counts a failure.
 */
final class RedisClusterTopology implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisClusterTopology.class);

    /** Default period of the periodic refresh: {@value} s ({@code ?refresh=}). */
    static final long DEFAULT_REFRESH_SECONDS = 30;

    /** Default least time between two refreshes: {@value} ms ({@code ?refresh-floor=}). */
    static final long DEFAULT_FLOOR_MILLIS = 250;

    /** Largest array or bulk string the topology reader accepts: {@value}. */
    static final int MAX_RESP_SIZE = 1 << 24;

    private final List<InetSocketAddress> seeds;
    private final Duration timeout;
    private final long periodNanos;
    private final long floorNanos;
    private final AtomicReference<RedisClusterMap> map = new AtomicReference<>();
    private final AtomicBoolean requested = new AtomicBoolean();
    private final AtomicLong refreshes = new AtomicLong();
    private final AtomicLong changes = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong movedRedirects = new AtomicLong();
    private final AtomicLong askRedirects = new AtomicLong();
    private volatile long lastRefreshMillis;
    private volatile String lastError = "";
    private volatile boolean closed;
    private Thread refresher;

    private RedisClusterTopology(List<InetSocketAddress> seeds, Duration timeout, Duration period, Duration floor) {
        this.seeds = List.copyOf(seeds);
        this.timeout = timeout;
        this.periodNanos = period.toNanos();
        this.floorNanos = floor.toNanos();
    }

    /**
     * Reads the cluster's topology through the first seed that answers and starts the refresher.
     *
     * @param seeds nodes of the cluster, at least one
     * @param timeout connect and read timeout of each topology query
     * @param period periodic refresh ({@code > 0})
     * @param floor least time between two refreshes ({@code >= 0})
     * @throws IllegalStateException if no seed answers as a cluster node (each seed's failure is in the message)
     */
    static RedisClusterTopology open(List<InetSocketAddress> seeds, Duration timeout, Duration period, Duration floor) {
        RedisClusterTopology t = new RedisClusterTopology(seeds, timeout, period, floor);
        List<String> why = new ArrayList<>();
        RedisClusterMap first = t.fetch(seeds, 1, why);
        if (first == null) {
            throw new IllegalStateException("redis-cluster: no seed answered as a node of a healthy cluster: "
                    + String.join("; ", why));
        }
        t.map.set(first);
        t.lastRefreshMillis = System.currentTimeMillis();
        t.refreshes.incrementAndGet();
        if (first.pendingReplicas() > 0) {
            t.requested.set(true); // replicas still syncing: look again after the floor, not in 30 s
        }
        Thread th = new Thread(t::run, "doubleface-redis-cluster-topology");
        th.setDaemon(true);
        th.setUncaughtExceptionHandler((x, e) -> log.error("redis-cluster topology refresher died", e));
        t.refresher = th;
        th.start();
        return t;
    }

    /** {@return the current map; wait-free} */
    RedisClusterMap current() {
        return map.get();
    }

    /**
     * Asks for a refresh (coalesced; at most one per floor). Wait-free; any thread.
     *
     * @param reason for the debug log
     */
    void requestRefresh(String reason) {
        requests.incrementAndGet();
        if (requested.compareAndSet(false, true)) {
            log.debug("redis-cluster: topology refresh requested: {}", reason);
            Thread th = refresher;
            if (th != null) {
                LockSupport.unpark(th);
            }
        }
    }

    /** A {@code MOVED slot host:port}: the map is patched at once and a refresh requested. */
    void moved(int slot, InetSocketAddress to) {
        movedRedirects.incrementAndGet();
        RedisClusterMap m;
        RedisClusterMap patched;
        do {
            m = map.get();
            patched = m.moved(slot, to);
        } while (patched != m && !map.compareAndSet(m, patched));
        requestRefresh("MOVED " + slot + " " + to);
    }

    /** An {@code ASK}: counted only (the map stays as it is). */
    void asked() {
        askRedirects.incrementAndGet();
    }

    /** Refreshes now, on the calling thread (tests, and {@code open}); {@code true} if a node answered. */
    boolean refreshNow() {
        List<InetSocketAddress> ask = new ArrayList<>();
        RedisClusterMap m = map.get();
        Set<InetSocketAddress> order = new LinkedHashSet<>();
        if (m != null) {
            order.addAll(m.addresses());
        }
        order.addAll(seeds);
        ask.addAll(order);
        List<String> why = new ArrayList<>();
        RedisClusterMap fresh = fetch(ask, m == null ? 1 : m.version() + 1, why);
        refreshes.incrementAndGet();
        lastRefreshMillis = System.currentTimeMillis();
        if (fresh == null) {
            failures.incrementAndGet();
            lastError = String.join("; ", why);
            log.warn("redis-cluster: topology refresh failed, keeping slot map v{}: {}", m == null ? 0 : m.version(),
                    lastError);
            return false;
        }
        if (fresh.pendingReplicas() > 0) {
            requestRefresh(fresh.pendingReplicas() + " replicas still syncing");
        }
        // swap unless the routing is what we have (then keep the object: loops need not reconcile)
        while (true) {
            RedisClusterMap now = map.get();
            if (now != null && now.sameRouting(fresh)) {
                return true;
            }
            RedisClusterMap next = fresh.withVersion(now == null ? 1 : now.version() + 1);
            if (map.compareAndSet(now, next)) {
                changes.incrementAndGet();
                log.info("redis-cluster: slot map v{}: {} masters {}, {} slots served", next.version(),
                        next.masters().size(), next.masters(), next.servedSlots());
                return true;
            }
        }
    }

    private void run() {
        long next = System.nanoTime() + periodNanos;
        long last = System.nanoTime();
        while (!closed) {
            long now = System.nanoTime();
            boolean due = now - next >= 0;
            boolean asked = requested.get();
            if ((due || asked) && now - last >= floorNanos) {
                requested.set(false);
                try {
                    refreshNow();
                } catch (RuntimeException e) {
                    failures.incrementAndGet();
                    lastError = String.valueOf(e);
                    log.warn("redis-cluster: topology refresh failed", e);
                }
                last = System.nanoTime();
                next = last + periodNanos;
                continue;
            }
            long wait = asked ? floorNanos - (now - last) : next - now;
            LockSupport.parkNanos(this, Math.max(wait, TimeUnit.MILLISECONDS.toNanos(1)));
        }
    }

    /** Asks each of {@code nodes} in turn; the map of the first that answers, or {@code null} (reasons in {@code why}). */
    private RedisClusterMap fetch(List<InetSocketAddress> nodes, long version, List<String> why) {
        for (InetSocketAddress a : nodes) {
            try {
                return RedisClusterMap.of(version, query(a, timeout));
            } catch (IOException | RuntimeException e) {
                why.add(a.getHostString() + ":" + a.getPort() + ": " + e.getMessage());
            }
        }
        return null;
    }

    /**
     * The cluster's masters, their slot ranges and healthy replicas as node {@code a} sees them:
     * {@code CLUSTER SHARDS}, or {@code CLUSTER SLOTS} where that is unknown (Redis &lt; 7).
     */
    static List<RedisClusterMap.Shard> query(InetSocketAddress a, Duration timeout) throws IOException {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try (Socket s = new Socket()) {
            s.connect(a, millis);
            s.setSoTimeout(millis);
            s.setTcpNoDelay(true);
            OutputStream out = s.getOutputStream();
            InputStream in = new BufferedInputStream(s.getInputStream());
            out.write("*2\r\n$7\r\nCLUSTER\r\n$6\r\nSHARDS\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Object r = readResp(in, 0);
            if (r instanceof RespError e) {
                String msg = e.message().toLowerCase(Locale.ROOT);
                if (msg.contains("cluster support disabled")) {
                    throw new IllegalStateException("not a cluster node (" + e.message() + ")");
                }
                if (!msg.contains("unknown subcommand") && !msg.contains("unknown command")) {
                    throw new IllegalStateException("CLUSTER SHARDS: " + e.message());
                }
                out.write("*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                Object slots = readResp(in, 0);
                if (slots instanceof RespError e2) {
                    throw new IllegalStateException("CLUSTER SLOTS: " + e2.message());
                }
                return parseSlots(slots, a.getHostString());
            }
            return parseShards(r, a.getHostString());
        }
    }

    /**
     * Sends one command on a fresh connection and reads its reply ({@link #readResp}); for setting
     * up clusters ({@link RedisServers}) and tools, never on a request path.
     *
     * @param a the node
     * @param timeout connect and read timeout
     * @param args the command and its arguments
     * @return the reply, a {@link RespError} for an error reply
     * @throws IOException if the node cannot be reached or answers something that is not RESP2
     */
    static Object command(InetSocketAddress a, Duration timeout, String... args) throws IOException {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try (Socket s = new Socket()) {
            s.connect(a, millis);
            s.setSoTimeout(millis);
            StringBuilder b = new StringBuilder("*").append(args.length).append("\r\n");
            for (String arg : args) {
                byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
                b.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
            }
            OutputStream out = s.getOutputStream();
            out.write(b.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return readResp(new BufferedInputStream(s.getInputStream()), 0);
        }
    }

    /** {@code CLUSTER SHARDS}: a list of shards, each a flat map {@code slots → [s, e, …], nodes → [node maps]}. */
    static List<RedisClusterMap.Shard> parseShards(Object reply, String askedHost) {
        List<RedisClusterMap.Shard> out = new ArrayList<>();
        for (Object sh : list(reply, "CLUSTER SHARDS reply")) {
            List<Object> fields = list(sh, "shard");
            List<int[]> ranges = new ArrayList<>();
            InetSocketAddress master = null;
            String masterId = "";
            List<InetSocketAddress> replicas = new ArrayList<>();
            int pending = 0;
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                String k = str(fields.get(i));
                Object v = fields.get(i + 1);
                if (k.equals("slots")) {
                    List<Object> sl = list(v, "slots");
                    for (int j = 0; j + 1 < sl.size(); j += 2) {
                        ranges.add(new int[] {(int) num(sl.get(j)), (int) num(sl.get(j + 1))});
                    }
                } else if (k.equals("nodes")) {
                    for (Object n : list(v, "nodes")) {
                        List<Object> nf = list(n, "node");
                        String id = "";
                        String ip = "";
                        String endpoint = "";
                        String role = "";
                        String health = "online";
                        long port = -1;
                        for (int j = 0; j + 1 < nf.size(); j += 2) {
                            String nk = str(nf.get(j));
                            Object nv = nf.get(j + 1);
                            switch (nk) {
                                case "id" -> id = str(nv);
                                case "ip" -> ip = str(nv);
                                case "endpoint" -> endpoint = str(nv);
                                case "port" -> port = num(nv);
                                case "role" -> role = str(nv);
                                case "health" -> health = str(nv);
                                default -> { }
                            }
                        }
                        if (port <= 0) {
                            continue; // a TLS-only node: not reachable by this driver
                        }
                        String host = hostOf(endpoint.isEmpty() || endpoint.equals("?") ? ip : endpoint, askedHost);
                        InetSocketAddress addr = new InetSocketAddress(host, (int) port);
                        if (role.equals("master")) {
                            master = addr;
                            masterId = id;
                        } else if (health.equals("online")) {
                            replicas.add(addr);
                        } else if (health.equals("loading")) {
                            pending++; // syncing: not read from until a refresh finds it online
                        }
                    }
                }
            }
            if (master != null && !ranges.isEmpty()) {
                out.add(new RedisClusterMap.Shard(master, masterId, ranges, replicas, pending));
            }
        }
        return out;
    }

    /** {@code CLUSTER SLOTS}: {@code [start, end, [host, port, id, …] master, [host, port, id, …] replica…]} per range. */
    static List<RedisClusterMap.Shard> parseSlots(Object reply, String askedHost) {
        java.util.Map<InetSocketAddress, RedisClusterMap.Shard> byMaster = new java.util.LinkedHashMap<>();
        for (Object e : list(reply, "CLUSTER SLOTS reply")) {
            List<Object> f = list(e, "slot range");
            if (f.size() < 3) {
                throw new IllegalStateException("CLUSTER SLOTS entry of " + f.size() + " fields (expected: >= 3)");
            }
            int lo = (int) num(f.get(0));
            int hi = (int) num(f.get(1));
            List<Object> m = list(f.get(2), "master");
            InetSocketAddress master = new InetSocketAddress(hostOf(str(m.get(0)), askedHost), (int) num(m.get(1)));
            String id = m.size() > 2 ? str(m.get(2)) : "";
            RedisClusterMap.Shard sh = byMaster.computeIfAbsent(master,
                    k -> new RedisClusterMap.Shard(k, id, new ArrayList<>(), new ArrayList<>()));
            sh.ranges().add(new int[] {lo, hi});
            for (int i = 3; i < f.size(); i++) {
                List<Object> r = list(f.get(i), "replica");
                InetSocketAddress ra = new InetSocketAddress(hostOf(str(r.get(0)), askedHost), (int) num(r.get(1)));
                if (!sh.replicas().contains(ra)) {
                    sh.replicas().add(ra);
                }
            }
        }
        return new ArrayList<>(byMaster.values());
    }

    private static String hostOf(String announced, String askedHost) {
        return announced == null || announced.isEmpty() || announced.equals("?") ? askedHost : announced;
    }

    /** An error reply ({@code -ERR …}) read by {@link #readResp}. */
    record RespError(String message) {}

    /**
     * Reads one RESP2 value: a {@code String} (simple or bulk), {@code Long}, {@code List<Object>},
     * {@code null} or a {@link RespError}. Bounded: sizes up to {@value #MAX_RESP_SIZE}, nesting up to 8.
     */
    static Object readResp(InputStream in, int depth) throws IOException {
        if (depth > 8) {
            throw new IOException("RESP reply nested deeper than 8");
        }
        int type = in.read();
        if (type < 0) {
            throw new IOException("connection closed before the reply");
        }
        String line = readLine(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                return new RespError(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int n = size(line);
                if (n < 0) {
                    return null;
                }
                byte[] b = in.readNBytes(n);
                if (b.length != n || in.read() != '\r' || in.read() != '\n') {
                    throw new IOException("truncated bulk string");
                }
                return new String(b, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = size(line);
                if (n < 0) {
                    return null;
                }
                List<Object> l = new ArrayList<>(Math.min(n, 1024));
                for (int i = 0; i < n; i++) {
                    l.add(readResp(in, depth + 1));
                }
                return l;
            }
            default:
                throw new IOException("not a RESP2 reply (type byte " + type + ")");
        }
    }

    private static int size(String line) throws IOException {
        long n;
        try {
            n = Long.parseLong(line);
        } catch (NumberFormatException e) {
            throw new IOException("bad RESP length '" + line + "'");
        }
        if (n < -1 || n > MAX_RESP_SIZE) {
            throw new IOException("RESP length " + n + " (expected: -1.." + MAX_RESP_SIZE + ")");
        }
        return (int) n;
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("connection closed inside a reply line");
            }
            if (c == '\r') {
                if (in.read() != '\n') {
                    throw new IOException("CR not followed by LF");
                }
                return sb.toString();
            }
            if (sb.length() > 64 * 1024) {
                throw new IOException("RESP line longer than 64 KiB");
            }
            sb.append((char) c);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o, String what) {
        if (o instanceof List<?> l) {
            return (List<Object>) l;
        }
        throw new IllegalStateException(what + ": " + o + " (expected: an array)");
    }

    private static String str(Object o) {
        return o == null ? "" : o.toString();
    }

    private static long num(Object o) {
        if (o instanceof Long l) {
            return l;
        }
        try {
            return Long.parseLong(str(o));
        } catch (NumberFormatException e) {
            throw new IllegalStateException("'" + o + "' (expected: a number)");
        }
    }

    /** Counters for {@code /admin/stats}. */
    record Stats(long version, int masters, int replicas, int servedSlots, long refreshes, long changes, long failures,
            long refreshRequests, long movedRedirects, long askRedirects, long lastRefreshMillis, String lastError) {}

    /** {@return the counters now} */
    Stats stats() {
        RedisClusterMap m = map.get();
        int replicas = 0;
        for (int i = 0; i < m.masters().size(); i++) {
            replicas += m.replicasOf(i).size();
        }
        return new Stats(m.version(), m.masters().size(), replicas, m.servedSlots(), refreshes.get(), changes.get(),
                failures.get(), requests.get(), movedRedirects.get(), askRedirects.get(), lastRefreshMillis, lastError);
    }

    /** Stops the refresher. Idempotent. */
    @Override
    public void close() {
        closed = true;
        Thread th = refresher;
        if (th != null) {
            LockSupport.unpark(th);
        }
    }
}
