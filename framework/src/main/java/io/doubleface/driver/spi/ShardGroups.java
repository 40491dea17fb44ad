package io.doubleface.driver.spi;

import io.doubleface.internal.Json;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.dns.DefaultDnsQuestion;
import io.netty.handler.codec.dns.DefaultDnsRecordDecoder;
import io.netty.handler.codec.dns.DnsRawRecord;
import io.netty.handler.codec.dns.DnsRecord;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.resolver.dns.DnsNameResolver;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.resolver.dns.DnsServerAddressStreamProviders;
import io.netty.resolver.dns.NoopDnsCache;
import io.netty.resolver.dns.SingletonDnsServerAddressStreamProvider;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A driver's shards as <b>replica groups</b>: shard {@code i} is a group of one or more members
 * (addresses holding the same data), and the members may change while the driver runs. Where the
 * members come from, per shard list element:
 *
 * <table>
 *   <caption>shard list elements</caption>
 *   <tr><th>element</th><th>one shard whose members are</th></tr>
 *   <tr><td>{@code host:port}, {@code host:first-last}</td><td>that address (a range: one shard per port)</td></tr>
 *   <tr><td>{@code host:port|host:port|…}</td><td>those addresses (a static group)</td></tr>
 *   <tr><td>{@code dns:///name:port}</td><td>every A (else AAAA) record of {@code name}, at {@code port}
 *       — e.g. a Kubernetes headless Service</td></tr>
 *   <tr><td>{@code dns:///name:first-last}</td><td>one shard per port, each every A (else AAAA) record of
 *       {@code name} at that port — e.g. pods that each serve shards {@code first..last}</td></tr>
 *   <tr><td>{@code dns+srv:///_service._proto.name}</td><td>every SRV record's target and port</td></tr>
 * </table>
 *
 * <p>or the whole list from a file, {@code SCHEME://file:PATH}: a JSON document
 * {@code {"shards": [["host:port", "host:port"], ["host:port"]]}} (shard {@code i} = the {@code i}-th
 * array), read again when it changes (checked every second).
 *
 * <p>DNS names are resolved with Netty's asynchronous {@link DnsNameResolver} (no JDK blocking
 * resolver, no cache of its own) on one daemon event loop of this object, at open and then again
 * after the records' smallest TTL, bounded below by {@code dns-min-ttl} (default
 * {@value #DEFAULT_MIN_TTL_MILLIS} ms) and above by {@code dns-refresh} (default
 * {@value #DEFAULT_REFRESH_SECONDS} s), and whenever a client asks ({@link #refresh}: after a lost or
 * refused connection), no more often than once per {@code dns-min-ttl}. The name server is the
 * system's ({@code /etc/resolv.conf}) unless {@code dns-server=host:port} names one. A name that
 * does not resolve at open fails the open, with the name in the message; later, a failed resolution
 * keeps the members it had (and is counted), an answer with no record empties the group (its calls
 * fail {@code UNAVAILABLE} until members return).
 *
 * <p>The number of shards is fixed at open (a file whose shard count changes is refused, with a
 * warning, and the previous groups stay). Clients read {@link #current()} — one immutable snapshot in
 * an atomic reference, swapped when members change — and reconcile their connections when its
 * version moves: a member that left is drained (no new calls, its outstanding calls finish), a new
 * one is connected on first use.
 *
 * <p>Thread-safe: {@link #current()} and {@link #refresh} are wait-free.
 *
 * <p>Why one class of this length: the sources (fixed addresses, A/AAAA names, SRV records, a
 * watched file), the re-resolution schedule and the snapshot swap share one resolver loop and one
 * snapshot; most of the length is the URI grammar's documentation above.
 */
public final class ShardGroups implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ShardGroups.class);

    /** Default longest time between two resolutions of a DNS name: {@value} s ({@code dns-refresh}). */
    public static final long DEFAULT_REFRESH_SECONDS = 30;
    /** Default shortest time between two resolutions of a DNS name: {@value} ms ({@code dns-min-ttl}). */
    public static final long DEFAULT_MIN_TTL_MILLIS = 1000;
    /** How often a {@code file:} source is checked for changes: {@value} ms. */
    public static final long FILE_POLL_MILLIS = 1000;
    /** Longest the first resolution at open may take: {@value} s. */
    static final long OPEN_TIMEOUT_SECONDS = 10;

    /**
     * One version of the groups.
     *
     * @param version 1 at open, one more at each change of members
     * @param members shard {@code i}'s members at index {@code i} (an empty list: none right now)
     */
    public record Snapshot(long version, List<List<InetSocketAddress>> members) {}

    /** Where one shard's members come from. */
    private sealed interface Source permits Fixed, DnsA, DnsSrv {}

    private record Fixed(List<InetSocketAddress> members) implements Source {}

    private record DnsA(String name, int port) implements Source {}

    private record DnsSrv(String name) implements Source {}

    private final String scheme;
    private final String description;
    private final List<Source> sources; // null for a file source
    private final Path file;
    private final long refreshMillis;
    private final long minTtlMillis;
    private final InetSocketAddress dnsServer;
    private final AtomicReference<Snapshot> current = new AtomicReference<>();
    private final AtomicBoolean requested = new AtomicBoolean();
    private final AtomicLong resolutions = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong changes = new AtomicLong();
    private final AtomicLong ejections = new AtomicLong();
    private volatile String lastError = "";
    private volatile long lastResolvedMillis;
    private final boolean dynamic;
    private MultiThreadIoEventLoopGroup group; // the resolver's loop; null for static groups
    private DnsNameResolver resolver;
    private Thread refresher;
    private long fileModified;
    private long lastRunNanos;
    private volatile boolean closed;

    private ShardGroups(String scheme, String description, List<Source> sources, Path file, long refreshMillis,
            long minTtlMillis, InetSocketAddress dnsServer) {
        this.scheme = scheme;
        this.description = description;
        this.sources = sources;
        this.file = file;
        this.refreshMillis = refreshMillis;
        this.minTtlMillis = minTtlMillis;
        this.dnsServer = dnsServer;
        this.dynamic = file != null || sources.stream().anyMatch(s -> !(s instanceof Fixed));
    }

    /**
     * Fixed groups of one member each: shard {@code i} is {@code shards.get(i)}.
     *
     * @param scheme for {@link #describe()}, e.g. {@code kv}
     * @param shards the addresses, at least one
     * @return static groups (no thread, no resolution)
     */
    public static ShardGroups of(String scheme, List<InetSocketAddress> shards) {
        if (shards == null || shards.isEmpty()) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: at least one address)");
        }
        List<Source> sources = new ArrayList<>();
        List<List<InetSocketAddress>> members = new ArrayList<>();
        for (InetSocketAddress a : shards) {
            sources.add(new Fixed(List.of(a)));
            members.add(List.of(a));
        }
        ShardGroups g = new ShardGroups(scheme, ShardAddresses.describe(scheme, shards), sources, null, 0, 0, null);
        g.current.set(new Snapshot(1, List.copyOf(members)));
        return g;
    }

    /**
     * Whether {@code uri}'s shard list needs this class: it holds a group ({@code |}), a DNS name or a file.
     *
     * @param uri a shard URI, with or without options
     * @return {@code true} for {@code dns:///}, {@code dns+srv:///}, {@code file:} and {@code a|b} lists
     */
    public static boolean isGroupList(String uri) {
        int q = uri.indexOf('?');
        String base = q < 0 ? uri : uri.substring(0, q);
        return base.contains("|") || base.contains("dns:///") || base.contains("dns+srv:///") || base.contains("://file:");
    }

    /**
     * Reads a shard URI of groups with its options ({@code ?dns-refresh=…&dns-min-ttl=…&dns-server=…})
     * and resolves it once before returning, as {@link #parse(String, String, Map)}.
     *
     * @param scheme the scheme, e.g. {@code kv} (without {@code ://})
     * @param uri the list and its options, e.g. {@code kv://dns:///leaves.svc:7101?dns-refresh=10s}
     * @return the groups; the caller closes them
     * @throws IllegalArgumentException if the list is malformed or an option unknown (the known ones named)
     * @throws IllegalStateException if a name does not resolve or the file cannot be read
     */
    public static ShardGroups open(String scheme, String uri) {
        int q = uri.indexOf('?');
        Map<String, String> opts = new LinkedHashMap<>();
        if (q >= 0) {
            for (String kv : uri.substring(q + 1).split("&")) {
                int eq = kv.indexOf('=');
                String k = eq < 0 ? kv : kv.substring(0, eq);
                if (!k.equals("dns-refresh") && !k.equals("dns-min-ttl") && !k.equals("dns-server")) {
                    throw new IllegalArgumentException(scheme + " shard URI '" + uri + "': unknown option '" + k
                            + "' (known: dns-refresh, dns-min-ttl, dns-server)");
                }
                opts.put(k, eq < 0 ? "" : kv.substring(eq + 1));
            }
        }
        return parse(scheme, q < 0 ? uri : uri.substring(0, q), opts);
    }

    /**
     * Reads a shard list of groups and resolves it once (DNS names, the file) before returning.
     *
     * @param scheme the scheme, e.g. {@code kv} (without {@code ://})
     * @param list the list without options, e.g. {@code kv://dns:///leaves.shop.svc:7101,10.0.0.9:7101}
     * @param options {@code dns-refresh}, {@code dns-min-ttl} (durations: {@code 500ms}, {@code 30s},
     *     {@code 2m}) and {@code dns-server} ({@code host:port}); absent keys take the defaults
     * @return the groups; the caller closes them (stops the resolver's loop)
     * @throws IllegalArgumentException if the list or an option is malformed
     * @throws IllegalStateException if a name does not resolve, a shard has no member, or the file
     *     cannot be read (the name or path is in the message)
     */
    public static ShardGroups parse(String scheme, String list, Map<String, String> options) {
        String prefix = scheme + "://";
        if (list == null || !list.startsWith(prefix) || list.length() == prefix.length()) {
            throw new IllegalArgumentException(scheme + " shard list: '" + list + "' (expected: " + prefix
                    + "host:port[|host:port…],…, " + prefix + "dns:///name:port, " + prefix
                    + "dns+srv:///_service._proto.name or " + prefix + "file:PATH)");
        }
        long refresh = duration(options, "dns-refresh", TimeUnit.SECONDS.toMillis(DEFAULT_REFRESH_SECONDS));
        long minTtl = duration(options, "dns-min-ttl", DEFAULT_MIN_TTL_MILLIS);
        if (refresh < 1 || minTtl < 1) {
            throw new IllegalArgumentException(scheme + " shard list: dns-refresh and dns-min-ttl must be > 0");
        }
        InetSocketAddress server = null;
        String ds = options.get("dns-server");
        if (ds != null) {
            List<InetSocketAddress> one = ShardAddresses.parse("dns", "dns://" + ds);
            if (one.size() != 1) {
                throw new IllegalArgumentException("dns-server=" + ds + " (expected: one host:port)");
            }
            server = one.get(0);
        }
        String body = list.substring(prefix.length());
        ShardGroups g;
        if (body.startsWith("file:")) {
            g = new ShardGroups(scheme, list, null, Path.of(body.substring("file:".length())), refresh, minTtl, server);
        } else {
            List<Source> sources = new ArrayList<>();
            for (String element : body.split(",", -1)) {
                if (element.startsWith("dns:///")) {
                    String np = element.substring("dns:///".length());
                    int colon = np.lastIndexOf(':');
                    if (colon <= 0) {
                        throw new IllegalArgumentException(scheme + " shard list: '" + element
                                + "' has no port (expected: dns:///name:port)");
                    }
                    // a port range is one shard per port, as for host:first-last, each the name's addresses at it
                    for (InetSocketAddress p : ShardAddresses.parse("dns", "dns://h:" + np.substring(colon + 1))) {
                        sources.add(new DnsA(np.substring(0, colon), p.getPort()));
                    }
                } else if (element.startsWith("dns+srv:///")) {
                    String name = element.substring("dns+srv:///".length());
                    if (name.isEmpty() || name.contains(":")) {
                        throw new IllegalArgumentException(scheme + " shard list: '" + element
                                + "' (expected: dns+srv:///_service._proto.name, the ports come from the records)");
                    }
                    sources.add(new DnsSrv(name));
                } else if (element.contains("|")) {
                    List<InetSocketAddress> members = new ArrayList<>();
                    for (String m : element.split("\\|", -1)) {
                        List<InetSocketAddress> one = ShardAddresses.parse(scheme, prefix + m);
                        if (one.size() != 1) {
                            throw new IllegalArgumentException(scheme + " shard list: group member '" + m
                                    + "' is a port range (a member is one host:port)");
                        }
                        members.add(one.get(0));
                    }
                    sources.add(new Fixed(List.copyOf(members)));
                } else {
                    for (InetSocketAddress a : ShardAddresses.parse(scheme, prefix + element)) {
                        sources.add(new Fixed(List.of(a)));
                    }
                }
            }
            g = new ShardGroups(scheme, list, List.copyOf(sources), null, refresh, minTtl, server);
        }
        g.open();
        return g;
    }

    private static long duration(Map<String, String> options, String key, long dflt) {
        String v = options.get(key);
        if (v == null) {
            return dflt;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,9})(ms|s|m)").matcher(v);
        if (!m.matches()) {
            throw new IllegalArgumentException(key + "=" + v + " (expected: a duration such as 500ms, 30s or 2m)");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> n;
            case "s" -> TimeUnit.SECONDS.toMillis(n);
            default -> TimeUnit.MINUTES.toMillis(n);
        };
    }

    private void open() {
        if (!dynamic) {
            List<List<InetSocketAddress>> members = new ArrayList<>();
            for (Source s : sources) {
                members.add(((Fixed) s).members());
            }
            current.set(new Snapshot(1, List.copyOf(members)));
            return;
        }
        try {
            if (sources != null) {
                group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("doubleface-dns", true),
                        NioIoHandler.newFactory());
                EventLoop loop = group.next();
                DnsNameResolverBuilder b = new DnsNameResolverBuilder(loop)
                        .datagramChannelType(NioDatagramChannel.class)
                        .resolveCache(NoopDnsCache.INSTANCE)
                        .queryTimeoutMillis(Math.max(1000, Math.min(5000, minTtlMillis * 2)))
                        .nameServerProvider(dnsServer != null ? new SingletonDnsServerAddressStreamProvider(dnsServer)
                                : DnsServerAddressStreamProviders.platformDefault());
                resolver = b.build();
            }
            List<String> why = new ArrayList<>();
            List<List<InetSocketAddress>> first = resolveAll(why);
            if (first == null) {
                throw new IllegalStateException(scheme + " shard list '" + description + "': " + String.join("; ", why));
            }
            for (int i = 0; i < first.size(); i++) {
                if (first.get(i).isEmpty()) {
                    throw new IllegalStateException(scheme + " shard list '" + description + "': shard " + i + " ("
                            + sourceName(i) + ") has no member");
                }
            }
            current.set(new Snapshot(1, first));
            lastResolvedMillis = System.currentTimeMillis();
            lastRunNanos = System.nanoTime();
            Thread th = new Thread(this::run, "doubleface-discovery-" + scheme);
            th.setDaemon(true);
            th.setUncaughtExceptionHandler((x, e) -> log.error("{} shard discovery died", scheme, e));
            refresher = th;
            th.start();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The smallest TTL of the last answers, for the next resolution; set while resolving. */
    private long minTtlSeen = Long.MAX_VALUE;

    private long nextDelayMillis() {
        long ttl = minTtlSeen == Long.MAX_VALUE ? refreshMillis : TimeUnit.SECONDS.toMillis(minTtlSeen);
        return Math.max(minTtlMillis, Math.min(refreshMillis, ttl));
    }

    /** The refresher thread: waits until a resolution is due, asked for, or the file changed. */
    private void run() {
        while (!closed) {
            long wait;
            try {
                wait = tick();
            } catch (RuntimeException e) {
                failures.incrementAndGet();
                lastError = String.valueOf(e);
                log.warn("{} shard list '{}': resolution failed", scheme, description, e);
                wait = minTtlMillis;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(Math.max(1, wait)));
        }
    }

    /** A resolution when due or asked for (not more often than the floor), a file check; returns the wait until the next. */
    private long tick() {
        long now = System.nanoTime();
        long sinceMillis = TimeUnit.NANOSECONDS.toMillis(now - lastRunNanos);
        boolean fileChanged = file != null && fileChanged();
        boolean due = sinceMillis >= nextDelayMillis();
        boolean asked = requested.get() && sinceMillis >= minTtlMillis;
        if (fileChanged || due || asked) {
            requested.set(false);
            lastRunNanos = now;
            List<String> why = new ArrayList<>();
            List<List<InetSocketAddress>> fresh = resolveAll(why);
            lastResolvedMillis = System.currentTimeMillis();
            if (fresh == null) {
                failures.incrementAndGet();
                lastError = String.join("; ", why);
                log.warn("{} shard list '{}': resolution failed, keeping the members: {}", scheme, description, lastError);
            } else {
                Snapshot s = current.get();
                if (!s.members().equals(fresh)) {
                    current.set(new Snapshot(s.version() + 1, fresh));
                    changes.incrementAndGet();
                    log.info("{} shard list '{}': members v{}: {}", scheme, description, s.version() + 1, fresh);
                }
            }
        }
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastRunNanos);
        long wait = requested.get() ? minTtlMillis - elapsed : nextDelayMillis() - elapsed;
        if (file != null) {
            wait = Math.min(wait, FILE_POLL_MILLIS);
        }
        return Math.max(1, wait);
    }

    private boolean fileChanged() {
        try {
            long m = Files.getLastModifiedTime(file).toMillis();
            return m != fileModified;
        } catch (IOException e) {
            return false;
        }
    }

    /** Every shard's members now, or {@code null} (reasons in {@code why}). On the opening or the refresher thread. */
    private List<List<InetSocketAddress>> resolveAll(List<String> why) {
        resolutions.incrementAndGet();
        if (file != null) {
            return readFile(why);
        }
        minTtlSeen = Long.MAX_VALUE;
        List<List<InetSocketAddress>> out = new ArrayList<>();
        boolean ok = true;
        for (Source s : sources) {
            try {
                out.add(switch (s) {
                    case Fixed f -> f.members();
                    case DnsA a -> resolveA(a);
                    case DnsSrv v -> resolveSrv(v);
                });
            } catch (Exception e) {
                ok = false;
                why.add(sourceName(out.size()) + ": " + rootMessage(e));
                Snapshot prev = current.get();
                out.add(prev == null ? List.of() : prev.members().get(out.size()));
            }
        }
        return ok ? List.copyOf(out) : null;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }

    /** One query, sent by the resolver on its loop; the calling (refresher) thread waits for the answer. */
    private List<DnsRecord> query(String name, DnsRecordType type) throws Exception {
        io.netty.util.concurrent.Future<List<DnsRecord>> f = resolver.resolveAll(new DefaultDnsQuestion(name, type));
        if (!f.await(OPEN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            f.cancel(false);
            throw new IllegalStateException(name + " (" + type.name() + "): no answer within " + OPEN_TIMEOUT_SECONDS + " s");
        }
        if (!f.isSuccess()) {
            throw new IllegalStateException(name + " (" + type.name() + "): " + rootMessage(f.cause()), f.cause());
        }
        return f.getNow();
    }

    /** The A records of the name, else its AAAA records; fails only if both queries fail. */
    private List<InetSocketAddress> resolveA(DnsA a) throws Exception {
        List<InetSocketAddress> out = new ArrayList<>();
        Exception first = null;
        for (DnsRecordType type : new DnsRecordType[] {DnsRecordType.A, DnsRecordType.AAAA}) {
            List<DnsRecord> rs;
            try {
                rs = query(a.name(), type);
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                }
                continue;
            }
            first = null; // the name answered
            try {
                for (DnsRecord r : rs) {
                    if (r instanceof DnsRawRecord raw && (raw.type() == DnsRecordType.A || raw.type() == DnsRecordType.AAAA)) {
                        ByteBuf c = raw.content();
                        byte[] ip = new byte[c.readableBytes()];
                        c.getBytes(c.readerIndex(), ip);
                        out.add(new InetSocketAddress(InetAddress.getByAddress(a.name(), ip), a.port()));
                        minTtlSeen = Math.min(minTtlSeen, r.timeToLive());
                    }
                }
            } finally {
                rs.forEach(io.netty.util.ReferenceCountUtil::release);
            }
            if (!out.isEmpty()) {
                break;
            }
        }
        if (out.isEmpty() && first != null) {
            throw first;
        }
        return sorted(out);
    }

    private List<InetSocketAddress> resolveSrv(DnsSrv v) throws Exception {
        List<DnsRecord> rs = query(v.name(), DnsRecordType.SRV);
        List<String[]> targets = new ArrayList<>();
        try {
            for (DnsRecord r : rs) {
                if (r instanceof DnsRawRecord raw && raw.type() == DnsRecordType.SRV) {
                    ByteBuf c = raw.content().duplicate();
                    c.skipBytes(4); // priority, weight
                    int port = c.readUnsignedShort();
                    String target = DefaultDnsRecordDecoder.decodeName(c);
                    targets.add(new String[] {target, Integer.toString(port)});
                    minTtlSeen = Math.min(minTtlSeen, r.timeToLive());
                }
            }
        } finally {
            rs.forEach(io.netty.util.ReferenceCountUtil::release);
        }
        List<InetSocketAddress> out = new ArrayList<>();
        for (String[] t : targets) {
            String host = t[0].endsWith(".") ? t[0].substring(0, t[0].length() - 1) : t[0];
            int port = Integer.parseInt(t[1]);
            if (io.netty.util.NetUtil.isValidIpV4Address(host) || io.netty.util.NetUtil.isValidIpV6Address(host)) {
                out.add(new InetSocketAddress(InetAddress.getByName(host), port));
            } else {
                out.addAll(resolveA(new DnsA(host, port)));
            }
        }
        return sorted(out);
    }

    private static List<InetSocketAddress> sorted(List<InetSocketAddress> in) {
        Set<InetSocketAddress> seen = new LinkedHashSet<>(in);
        List<InetSocketAddress> out = new ArrayList<>(seen);
        out.sort((x, y) -> {
            int c = x.getAddress().getHostAddress().compareTo(y.getAddress().getHostAddress());
            return c != 0 ? c : Integer.compare(x.getPort(), y.getPort());
        });
        return List.copyOf(out);
    }

    private List<List<InetSocketAddress>> readFile(List<String> why) {
        try {
            fileModified = Files.getLastModifiedTime(file).toMillis();
            Object doc = Json.parse(Files.readString(file));
            if (!(doc instanceof Map<?, ?> m) || !(m.get("shards") instanceof List<?> shards) || shards.isEmpty()) {
                why.add(file + ": expected {\"shards\": [[\"host:port\", …], …]}");
                return null;
            }
            List<List<InetSocketAddress>> out = new ArrayList<>();
            for (Object g : shards) {
                if (!(g instanceof List<?> members)) {
                    why.add(file + ": shard " + out.size() + " is not an array of \"host:port\"");
                    return null;
                }
                List<InetSocketAddress> ms = new ArrayList<>();
                for (Object member : members) {
                    List<InetSocketAddress> one = ShardAddresses.parse(scheme, scheme + "://" + member);
                    if (one.size() != 1) {
                        why.add(file + ": member '" + member + "' is a port range");
                        return null;
                    }
                    ms.add(one.get(0));
                }
                out.add(List.copyOf(ms));
            }
            Snapshot prev = current.get();
            if (prev != null && prev.members().size() != out.size()) {
                why.add(file + ": " + out.size() + " shards (expected: " + prev.members().size()
                        + ", the count at open; restart to change it)");
                return null;
            }
            return List.copyOf(out);
        } catch (IOException | RuntimeException e) {
            why.add(file + ": " + e.getMessage());
            return null;
        }
    }

    private String sourceName(int shard) {
        if (file != null) {
            return "file:" + file;
        }
        return switch (sources.get(shard)) {
            case Fixed f -> f.members().toString();
            case DnsA a -> "dns:///" + a.name() + ":" + a.port();
            case DnsSrv v -> "dns+srv:///" + v.name();
        };
    }

    /** {@return the current groups; wait-free} */
    public Snapshot current() {
        return current.get();
    }

    /** {@return the number of shards (groups), fixed at open} */
    public int shardCount() {
        return current.get().members().size();
    }

    /** {@return whether members may change (a DNS name or a file); {@code false} for fixed addresses} */
    public boolean dynamic() {
        return dynamic;
    }

    /**
     * Asks for a resolution soon (after a lost or refused connection), coalesced, at most one per
     * {@code dns-min-ttl}. Wait-free; any thread. Nothing happens for fixed groups.
     *
     * @param reason for the debug log
     */
    public void refresh(String reason) {
        if (dynamic && requested.compareAndSet(false, true)) {
            log.debug("{} shard list '{}': resolution requested: {}", scheme, description, reason);
            Thread th = refresher;
            if (th != null) {
                java.util.concurrent.locks.LockSupport.unpark(th);
            }
        }
    }

    /**
     * Counts a member set aside by a client after failing calls in a row (for {@link #topology()}).
     *
     * @param member the member
     * @param why the last failure, for the log
     */
    public void memberEjected(InetSocketAddress member, String why) {
        ejections.incrementAndGet();
        log.info("{} shard list '{}': member {} set aside for {} ms after {} failed calls in a row (last: {})",
                scheme, description, member, PipelinedLoopClient.EJECT_MILLIS, PipelinedLoopClient.EJECT_AFTER_FAILURES,
                why);
    }

    /** {@return the list as given, e.g. {@code kv://dns:///leaves.svc:7101}} */
    public String describe() {
        return description;
    }

    /** {@return the groups now, for {@code ShardDriver#topology()}: version, counters and the members of each shard} */
    public Map<String, Object> topology() {
        Snapshot s = current.get();
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("members_version", s.version());
        t.put("resolutions", resolutions.get());
        t.put("member_changes", changes.get());
        t.put("resolution_failures", failures.get());
        t.put("member_ejections", ejections.get());
        t.put("last_resolution_epoch_ms", lastResolvedMillis);
        if (!lastError.isEmpty()) {
            t.put("last_resolution_error", lastError);
        }
        List<Object> groups = new ArrayList<>();
        for (int i = 0; i < s.members().size(); i++) {
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("source", sourceName(i));
            List<Object> ms = new ArrayList<>();
            for (InetSocketAddress a : s.members().get(i)) {
                ms.add(a.getAddress() == null ? a.getHostString() + ":" + a.getPort()
                        : io.netty.util.NetUtil.toSocketAddressString(a));
            }
            g.put("members", ms);
            groups.add(g);
        }
        t.put("shards", groups);
        return t;
    }

    /** Stops the resolver. Idempotent. */
    @Override
    public void close() {
        closed = true;
        Thread th = refresher;
        if (th != null) {
            java.util.concurrent.locks.LockSupport.unpark(th);
        }
        if (resolver != null) {
            resolver.close();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Override
    public String toString() {
        return "ShardGroups[" + description + ", v" + (current.get() == null ? 0 : current.get().version()) + "]";
    }
}
