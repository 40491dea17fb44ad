package io.doubleface.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.connection.NettyTransportSettings;
import com.mongodb.connection.TransportSettings;
import com.mongodb.event.CommandListener;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.DriverClients;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.UriOptions;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ShardAddresses;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.spi.DriverLoops;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandle;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.File;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MongoDB driver: shards are MongoDB deployments (a {@code mongod}, a replica set, a
 * {@code mongos}, or an embedded {@link MongoLeafServer} shard), one per shard id. It runs native
 * commands ({@link MongoCommand}, built with {@link Mongo}) on the shard's database: the
 * connection string's, else {@value #DEFAULT_DATABASE}, unless a command names another
 * ({@link MongoCommand#inDatabase}).
 *
 * <ul>
 *   <li>{@link #openOn(EventLoop)}: a {@link LoopClient} with, per shard, one reactive-streams
 *       {@code MongoClient} whose I/O runs on the given loop ({@link Transport#NETTY}:
 *       {@code TransportSettings.nettyBuilder().eventLoopGroup(loop)}) or on the JDK's
 *       asynchronous channels ({@link Transport#AIO}, {@link Transport#AIO_FIXED}). Completions the
 *       driver delivers on other threads are hopped onto the loop and counted
 *       ({@link MongoLoopClient#stats()}).
 *   <li>{@link #openBlocking()}: a {@link BlockingClient} over {@code mongodb-driver-sync}, one
 *       pooled {@code MongoClient} per shard.
 * </ul>
 *
 * <p>Why one {@code MongoClient} per shard and loop rather than one per loop: a {@code MongoClient}
 * talks to one deployment, and each shard is its own deployment (independent servers holding the
 * same key space, as in the paper's setup), so a loop needs K of them for K shards.
 *
 * <p>Shard lists ({@link #parse}):
 * <pre>
 *   mongodb://HOST:FIRST-LAST[/DB][?OPTIONS]       one shard per port (a direct connection each)
 *   mongodb://HOST:PORT,HOST:PORT,...[?OPTIONS]    one shard per address
 *   mongodb://HOSTS/[DB][?URIOPTIONS] ; mongodb://HOSTS/[DB][?URIOPTIONS] ; ...
 *                                                  full connection strings, one per shard, separated by ';'
 * </pre>
 * A '/' after the hosts makes the full form: {@code mongodb://a:1,b:2} is two shards,
 * {@code mongodb://a:1,b:2/?replicaSet=rs0} one shard (a replica set); a full string of several hosts
 * without {@code replicaSet} is refused unless it says
 * {@code df.one-shard=true} (mongos routers). Driver options
 * ({@link Options}) go in the query of the short form ({@code ?transport=aio&poolSize=16}) or,
 * prefixed {@code df.}, in the query of any full connection string ({@code ?df.transport=aio}).
 *
 * <p>TLS: a full connection string's own {@code tls=true}, or {@code ?tls=true} on a short-form
 * list (every shard). The shards' certificates are verified against the JVM's trust store, or
 * against the CA certificate(s) of a PEM file given as {@code ?cacert=PEM} (short form) or
 * {@code ?df.cacert=PEM} (full form): the Java driver reads no {@code tlsCAFile}. Every transport
 * speaks it: Netty on the loop, the JDK's TLS channels for AIO, and the blocking client.
 *
 * <p>Threading: the factories, {@link #openOn}, {@link #openBlocking}, {@link #stats} and
 * {@link #close} are thread-safe. The driver closes every client it opened in {@link #close()};
 * it never shuts down an event loop it was given.
 */
public final class MongoDriver implements ShardDriver<MongoCommand<?>> {

    private static final Logger log = LoggerFactory.getLogger(MongoDriver.class);

    /** URI scheme: {@value}. */
    public static final String SCHEME = "mongodb";

    /** Shard-list option: TLS to every shard of a short-form list ({@code ?tls=true}): {@value}. */
    static final String TLS = "tls";

    /**
     * Shard-list option: a PEM file of the CA certificate(s) TLS shards are verified against
     * ({@code ?cacert=ca.pem}, or {@code ?df.cacert=ca.pem} in a full connection string): {@value}.
     */
    static final String CACERT = "cacert";
    /**
     * {@code df.one-shard=true}: a full connection string naming several hosts without {@code replicaSet}
     * (mongos routers) is meant as one shard. Without it, such a string is refused: it is most often a
     * list of shards with a database appended, which the MongoDB driver would take as one deployment.
     */
    static final String ONE_SHARD = "one-shard";

    /** Database of commands when the shard's connection string names none: {@value}. */
    public static final String DEFAULT_DATABASE = "test";

    /** Longest {@link #close()} waits for each loop client to fail its calls on its loop: {@value} ms. */
    static final long CLOSE_WAIT_MILLIS = 10_000;

    /** Longest {@link #close()} waits for the {@code MongoClient}s to close before interrupting their closer: {@value} ms. */
    static final long CLOSER_WAIT_MILLIS = 3_000;

    /** How a {@link LoopClient}'s {@code MongoClient}s do their I/O. */
    public enum Transport {
        /** Netty, on the loop the client is opened on (the integrated design). URI value {@code netty}. */
        NETTY,
        /**
         * The driver's default transport: JDK {@code AsynchronousSocketChannel}s on the JVM's default
         * channel group (an on-demand thread pool) — the paper's AIOBackend. URI value {@code aio}.
         */
        AIO,
        /** JDK asynchronous channels on a fixed pool of {@link Options#aioThreads} threads per loop client. URI value {@code aio-fixed}. */
        AIO_FIXED;

    }

    /**
     * Driver options. Immutable; start from {@link #DEFAULT}.
     *
     * @param transport I/O of the loop clients (URI {@code transport=netty|aio|aio-fixed})
     * @param aioThreads threads of {@link Transport#AIO_FIXED} per loop client (URI {@code aioThreads})
     * @param poolSize most connections per shard per client (URI {@code poolSize}); MongoDB runs
     *     one operation per connection at a time, so this bounds a client's concurrency per shard
     * @param heartbeat server monitor period (URI {@code heartbeatMS}): how soon a shard that came
     *     back is used again, and a shard that went away is failed fast
     * @param csot whether loop clients bound calls with the driver's client-side operation timeout
     *     ({@code timeoutMS}; URI {@code csot=true}) rather than with {@code socketTimeoutMS} and
     *     {@code maxWaitTimeMS} (default): a CSOT timeout on the driver's Netty transport can drop
     *     buffers the driver owns (docs/mongo.md). The blocking client always uses CSOT.
     * @param connectTimeout connection and server-selection timeout
     * @param callTimeout time limit of every call
     * @param maxOutstanding most calls outstanding per shard per loop client; beyond, OVERLOADED
     */
    public record Options(Transport transport, int aioThreads, int poolSize, Duration heartbeat, boolean csot,
            Duration connectTimeout, Duration callTimeout, int maxOutstanding) {

        /** Default {@link #poolSize}: {@value}. */
        public static final int DEFAULT_POOL_SIZE = 100;
        /** Default {@link #aioThreads}: {@value}. */
        public static final int DEFAULT_AIO_THREADS = 2;
        /** Default {@link #heartbeat}: {@value} ms (the MongoDB default is 10 s). */
        public static final long DEFAULT_HEARTBEAT_MILLIS = 1_000;
        /** Shortest heartbeat allowed (the driver's minimum): {@value} ms. */
        public static final long MIN_HEARTBEAT_MILLIS = 500;

        /** The defaults: Netty, the {@link DriverSettings#DEFAULT} timeouts and bounds. */
        public static final Options DEFAULT = new Options(Transport.NETTY, DEFAULT_AIO_THREADS, DEFAULT_POOL_SIZE,
                Duration.ofMillis(DEFAULT_HEARTBEAT_MILLIS), false, DriverSettings.DEFAULT.connectTimeout(),
                DriverSettings.DEFAULT.callTimeout(), DriverSettings.DEFAULT.maxOutstanding());

        /**
         * Checks the options.
         *
         * @throws NullPointerException if {@code transport}, {@code heartbeat} or a timeout is {@code null}
         * @throws IllegalArgumentException if {@code aioThreads} or {@code poolSize} is {@code < 1}, the
         *     heartbeat is under {@value #MIN_HEARTBEAT_MILLIS} ms, or the timeouts, bound or key space are
         *     out of the ranges of {@link DriverSettings}
         */
        public Options {
            Objects.requireNonNull(transport, "transport");
            if (aioThreads < 1) {
                throw new IllegalArgumentException("aioThreads: " + aioThreads + " (expected: > 0)");
            }
            if (poolSize < 1) {
                throw new IllegalArgumentException("poolSize: " + poolSize + " (expected: > 0)");
            }
            Objects.requireNonNull(heartbeat, "heartbeat");
            if (heartbeat.toMillis() < MIN_HEARTBEAT_MILLIS) {
                throw new IllegalArgumentException("heartbeat: " + heartbeat + " (expected: >= " + MIN_HEARTBEAT_MILLIS + " ms)");
            }
            // validates the rest
            new DriverSettings(connectTimeout, callTimeout, maxOutstanding);
        }

        /**
         * These options with the timeouts and bound of {@code s}.
         *
         * @param s the store-neutral settings: connect and call timeout, most outstanding calls
         * @return new options; transport, threads, pool size, heartbeat and CSOT are kept
         */
        public Options with(DriverSettings s) {
            return copy(b -> {
                b.connectTimeout = s.connectTimeout();
                b.callTimeout = s.callTimeout();
                b.maxOutstanding = s.maxOutstanding();
            });
        }

        /**
         * These options with client-side operation timeouts on or off for loop clients (URI {@code csot}).
         *
         * @param on {@code true} to bound calls with the driver's {@code timeoutMS} (see {@link #csot})
         * @return new options
         */
        public Options withCsot(boolean on) {
            return copy(b -> b.csot = on);
        }

        /**
         * These options with another transport of the loop clients (URI {@code transport}).
         *
         * @param t the transport, not {@code null}
         * @return new options
         */
        public Options withTransport(Transport t) {
            return copy(b -> b.transport = t);
        }

        /**
         * These options with another thread count of {@link Transport#AIO_FIXED} (URI {@code aioThreads}).
         *
         * @param n threads per loop client, {@code > 0}
         * @return new options
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Options withAioThreads(int n) {
            return copy(b -> b.aioThreads = n);
        }

        /**
         * These options with another connection pool size (URI {@code poolSize}).
         *
         * @param n most connections per shard per client, {@code > 0}
         * @return new options
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Options withPoolSize(int n) {
            return copy(b -> b.poolSize = n);
        }

        /**
         * These options with another server monitor period (URI {@code heartbeatMS}).
         *
         * @param d the period, at least {@value #MIN_HEARTBEAT_MILLIS} ms
         * @return new options
         * @throws IllegalArgumentException if {@code d} is under {@value #MIN_HEARTBEAT_MILLIS} ms
         */
        public Options withHeartbeat(Duration d) {
            return copy(b -> b.heartbeat = d);
        }

        /**
         * These options with another call timeout.
         *
         * @param d the time limit of every call, {@code > 0}
         * @return new options
         * @throws IllegalArgumentException if {@code d} is not positive
         */
        public Options withCallTimeout(Duration d) {
            return copy(b -> b.callTimeout = d);
        }

        /**
         * These options with another connect (and server-selection) timeout.
         *
         * @param d the timeout, {@code > 0}
         * @return new options
         * @throws IllegalArgumentException if {@code d} is not positive
         */
        public Options withConnectTimeout(Duration d) {
            return copy(b -> b.connectTimeout = d);
        }

        /**
         * These options with another bound of outstanding calls.
         *
         * @param n most calls outstanding per shard per loop client, {@code > 0}
         * @return new options
         * @throws IllegalArgumentException if {@code n < 1}
         */
        public Options withMaxOutstanding(int n) {
            return copy(b -> b.maxOutstanding = n);
        }

        /** {@return the store-neutral part of these options: timeouts and the outstanding-call bound} */
        public DriverSettings settings() {
            return new DriverSettings(connectTimeout, callTimeout, maxOutstanding);
        }

        /** These options with the changes {@code change} makes to a mutable copy of them, checked again. */
        private Options copy(java.util.function.Consumer<Copy> change) {
            Copy c = new Copy(this);
            change.accept(c);
            return new Options(c.transport, c.aioThreads, c.poolSize, c.heartbeat, c.csot, c.connectTimeout,
                    c.callTimeout, c.maxOutstanding);
        }

        /** The components of an {@link Options} as fields, for {@link #copy} to change one or a few. */
        private static final class Copy {
            Transport transport;
            int aioThreads;
            int poolSize;
            Duration heartbeat;
            boolean csot;
            Duration connectTimeout;
            Duration callTimeout;
            int maxOutstanding;

            Copy(Options o) {
                transport = o.transport;
                aioThreads = o.aioThreads;
                poolSize = o.poolSize;
                heartbeat = o.heartbeat;
                csot = o.csot;
                connectTimeout = o.connectTimeout;
                callTimeout = o.callTimeout;
                maxOutstanding = o.maxOutstanding;
            }
        }

        /** Applies driver options given as URI parameters ({@code transport}, {@code aioThreads}, {@code poolSize}, {@code heartbeatMS}). */
        Options withParameters(Map<String, String> p) {
            Options o = this;
            for (Map.Entry<String, String> e : p.entrySet()) {
                String v = e.getValue();
                if (e.getKey().equals(TLS) || e.getKey().equals(CACERT)) {
                    continue; // connection settings, not Options: see parse and the constructor
                }
                o = switch (e.getKey()) {
                    case "transport" -> o.withTransport(UriOptions.choice(e.getKey(), v.toLowerCase(Locale.ROOT), Transport.class));
                    case "aioThreads" -> o.withAioThreads(intParam(e.getKey(), v));
                    case "poolSize" -> o.withPoolSize(intParam(e.getKey(), v));
                    case "heartbeatMS" -> o.withHeartbeat(Duration.ofMillis(intParam(e.getKey(), v)));
                    case "csot" -> o.withCsot(switch (v) {
                        case "true" -> true;
                        case "false" -> false;
                        default -> throw new IllegalArgumentException("csot: '" + v + "' (expected: true or false)");
                    });
                    default -> throw new IllegalArgumentException("mongodb driver option '" + e.getKey()
                            + "' (expected: transport, aioThreads, poolSize, heartbeatMS, csot, tls or cacert)");
                };
            }
            return o;
        }

        private static int intParam(String name, String v) {
            try {
                return Integer.parseInt(v);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + ": '" + v + "' (expected: an integer)");
            }
        }
    }

    /**
     * A parsed shard list: one connection string per shard, and the driver options in the URI.
     *
     * @param shards the connection strings, shard {@code i} at index {@code i}; at least one
     * @param options the driver options ({@link Options}) found in the URI, by URI name without the
     *     {@code df.} prefix (e.g. {@code transport -> aio}); already checked
     */
    public record ShardList(List<ConnectionString> shards, Map<String, String> options) {}

    private final List<ConnectionString> shards;
    private final List<String> addresses;
    private final Options options;
    /** The CA certificate(s) shards are verified against over TLS instead of the JVM's trust store; null: the JVM's. */
    private final File caCert;
    private volatile SslContext nettyTls;
    private volatile SSLContext jdkTls;
    private final String description;
    /** The driver's open/closed state and its clients; a client's {@code close()} forgets itself here. */
    final DriverClients clients;
    private final DriverClients.Registry<LoopClient<?>> loopClients;
    private final DriverClients.Registry<MongoBlockingClient> blockingClients;
    /** Closes the {@code MongoClient}s of loop clients closed on their own loop (closing blocks). */
    private final ExecutorService closer;

    /**
     * A driver of {@code shards} (connection string i is shard i).
     *
     * @param shards the connection strings, at least one; copied
     * @param options the driver options, not {@code null}
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     * @throws NullPointerException if {@code options} is {@code null}
     * @deprecated use {@link #of(List, Options)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public MongoDriver(List<ConnectionString> shards, Options options) {
        this(options, shards, null);
    }

    /**
     * A driver of {@code shards} whose TLS connections verify the shards against {@code caCert}.
     *
     * @param shards the connection strings, at least one; copied
     * @param options the driver options, not {@code null}
     * @param caCert a PEM file of the CA certificate(s) to trust; {@code null}: the JVM's trust store
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty, or {@code caCert}
     *     is not a readable file
     * @throws NullPointerException if {@code options} is {@code null}
     * @deprecated use {@link #of(List, Options, File)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public MongoDriver(List<ConnectionString> shards, Options options, File caCert) {
        this(options, shards, caCert);
    }

    /** The one constructor (its parameters in another order than the deprecated public ones'). */
    private MongoDriver(Options options, List<ConnectionString> shards, File caCert) {
        if (caCert != null && !caCert.canRead()) {
            throw new IllegalArgumentException("caCert: " + caCert + " is not a readable file");
        }
        this.caCert = caCert;
        if (shards == null || shards.isEmpty()) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: at least one connection string)");
        }
        this.shards = List.copyOf(shards);
        this.options = Objects.requireNonNull(options, "options");
        List<String> a = new ArrayList<>();
        for (ConnectionString cs : this.shards) {
            a.add(String.join(",", cs.getHosts()));
        }
        this.addresses = List.copyOf(a);
        this.description = describe(this.shards) + (options.transport() == Transport.NETTY ? ""
                : " (" + UriOptions.label(options.transport()) + ")");
        this.clients = new DriverClients("mongodb driver " + description);
        this.loopClients = clients.registry();
        this.blockingClients = clients.registry();
        this.closer = Executors.newSingleThreadExecutor(DriverLoops.platformThreads("mongo-close"));
    }

    /**
     * A driver of {@code shards} (connection string i is shard i). Connects nothing yet: clients
     * connect when they are opened.
     *
     * @param shards the connection strings, at least one; copied
     * @param options the driver options, not {@code null}
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty
     * @throws NullPointerException if {@code options} is {@code null}
     */
    public static MongoDriver of(List<ConnectionString> shards, Options options) {
        return new MongoDriver(options, shards, null);
    }

    /**
     * A driver of {@code shards} whose TLS connections (a connection string with {@code tls=true})
     * verify the shards against the CA certificate(s) in {@code caCert} instead of the JVM's trust
     * store (the Java driver reads no {@code tlsCAFile}). Connects nothing yet.
     *
     * @param shards the connection strings, at least one; copied
     * @param options the driver options, not {@code null}
     * @param caCert a PEM file of the CA certificate(s) to trust; {@code null}: the JVM's trust store
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code shards} is {@code null} or empty, or {@code caCert}
     *     is not a readable file
     * @throws NullPointerException if {@code options} is {@code null}
     */
    public static MongoDriver of(List<ConnectionString> shards, Options options, File caCert) {
        return new MongoDriver(options, shards, caCert);
    }

    /**
     * The MongoDB shards of {@code uri} as a backend of native commands ({@link Mongo}), with the
     * default options: {@code builder.backend("posts", MongoDriver.of("mongodb://127.0.0.1:7301-7304/app"))}.
     * The URI forms and options are those of {@link #parse}; the database in the URI is the one
     * commands use unless they name another ({@link MongoCommand#inDatabase}).
     *
     * @param uri the shard list, in one of the forms of {@link #parse}
     * @return the driver of {@link MongoCommand}s; the caller (or the server, see
     *     {@code FanoutServer.Builder#backend}) closes it
     * @throws IllegalArgumentException if {@code uri} is malformed
     */
    public static MongoDriver of(String uri) {
        return of(uri, Options.DEFAULT);
    }

    /**
     * A driver of the shard list {@code uri} ({@link #parse}); options in the URI override {@code options}.
     *
     * @param uri the shard list, in one of the forms of the class comment
     * @param options the options the URI's options apply to, e.g. {@link Options#DEFAULT}, not {@code null}
     * @return the driver; the caller closes it
     * @throws IllegalArgumentException if {@code uri} is malformed or has an unknown or bad option
     */
    public static MongoDriver of(String uri, Options options) {
        ShardList l = parse(uri);
        String ca = l.options().get(CACERT);
        return of(l.shards(), options.withParameters(l.options()), ca == null ? null : new File(ca));
    }

    /**
     * {@link #of(String, Options)}.
     *
     * @param uri the shard list
     * @param options the options the URI's options apply to
     * @return the driver; the caller closes it
     * @deprecated use {@link #of(String, Options)}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static MongoDriver open(String uri, Options options) {
        return of(uri, options);
    }

    /**
     * Reads a shard list (see the class comment for the forms).
     *
     * @param uri the shard list
     * @return the connection strings and the driver options found in the URI
     * @throws IllegalArgumentException if {@code uri} is none of them
     */
    public static ShardList parse(String uri) {
        if (uri == null || !(uri.startsWith("mongodb://") || uri.startsWith("mongodb+srv://"))) {
            throw bad(uri, "expected mongodb://...");
        }
        String trimmed = uri.strip();
        // a port range before the '/' is the short form with a database: mongodb://HOST:FIRST-LAST/DB
        int slash = authorityEnd(trimmed);
        boolean rangeWithDb = slash >= 0 && trimmed.indexOf(';') < 0
                && trimmed.chars().noneMatch(Character::isWhitespace) && !trimmed.startsWith("mongodb+srv://")
                && PORT_RANGE.matcher(trimmed.substring(0, slash)).find();
        boolean full = !rangeWithDb && (trimmed.indexOf(';') >= 0 || trimmed.chars().anyMatch(Character::isWhitespace)
                || slash >= 0 || trimmed.startsWith("mongodb+srv://"));
        Map<String, String> opts = new LinkedHashMap<>();
        List<ConnectionString> out = new ArrayList<>();
        if (!full) {
            String db = "";
            if (rangeWithDb) {
                int q = trimmed.indexOf('?', slash);
                db = trimmed.substring(slash + 1, q < 0 ? trimmed.length() : q);
                if (!db.isEmpty() && !DB_NAME.matcher(db).matches()) {
                    throw bad(uri, "database '" + db + "' (expected: letters, digits, '_' or '-')");
                }
                trimmed = trimmed.substring(0, slash) + (q < 0 ? "" : trimmed.substring(q));
            }
            UriOptions given = UriOptions.parseWith(trimmed, d -> bad(uri, d));
            String list = given.base();
            for (Map.Entry<String, String> e : given.entries()) {
                String k = e.getKey();
                opts.put(k.startsWith("df.") ? k.substring(3) : k, e.getValue());
            }
            for (InetSocketAddress a : ShardAddresses.parse(SCHEME, list)) {
                String host = a.getHostString();
                if (host.indexOf(':') >= 0) {
                    host = "[" + (a.getAddress() != null ? io.netty.util.NetUtil.toAddressString(a.getAddress()) : host) + "]";
                }
                out.add(new ConnectionString("mongodb://" + host + ":" + a.getPort() + "/" + db + "?directConnection=true"
                        + ("true".equals(opts.get(TLS)) ? "&tls=true" : "")));
            }
        } else {
            for (String part : trimmed.split("[;\\s]+")) {
                if (part.isEmpty()) {
                    continue;
                }
                if (!(part.startsWith("mongodb://") || part.startsWith("mongodb+srv://")) || authorityEnd(part) < 0) {
                    throw bad(uri, "'" + part + "' is not a full connection string mongodb://HOSTS/[DB][?OPTIONS]");
                }
                UriOptions given = UriOptions.parseWith(part, d -> bad(uri, d));
                StringBuilder kept = new StringBuilder(given.base());
                String sep = "?";
                for (Map.Entry<String, String> e : given.entries()) {
                    if (e.getKey().startsWith("df.")) {
                        opts.put(e.getKey().substring(3), e.getValue());
                    } else { // the connection string's own option
                        kept.append(sep).append(e.getKey()).append('=').append(e.getValue());
                        sep = "&";
                    }
                }
                try {
                    out.add(new ConnectionString(kept.toString()));
                } catch (IllegalArgumentException e) {
                    throw bad(uri, "'" + part + "': " + e.getMessage());
                }
            }
            if (out.isEmpty()) {
                throw bad(uri, "no connection string");
            }
            String oneShard = opts.remove(ONE_SHARD);
            if (oneShard != null && !oneShard.equals("true")) {
                throw bad(uri, "df." + ONE_SHARD + ": '" + oneShard + "' (expected: true)");
            }
            for (ConnectionString cs : out) {
                // several hosts in one string are one shard: a replica set or mongos routers. Said
                // without replicaSet, it is most often a list of shards with a database appended.
                if (cs.getHosts().size() > 1 && cs.getRequiredReplicaSetName() == null && oneShard == null) {
                    String db = cs.getDatabase() == null ? "DB" : cs.getDatabase();
                    throw bad(uri, "'mongodb://" + String.join(",", cs.getHosts()) + "/…' names " + cs.getHosts().size()
                            + " hosts in one connection string, which is one shard. For one shard per host, separate them: "
                            + "mongodb://" + cs.getHosts().get(0) + "/" + db + ";mongodb://" + cs.getHosts().get(1) + "/" + db
                            + (cs.getHosts().size() > 2 ? ";…" : "") + ". For one replica set, add replicaSet=NAME; for "
                            + "mongos routers of one sharded cluster, add df." + ONE_SHARD + "=true");
                }
            }
        }
        String tls = opts.get(TLS);
        if (tls != null && !full && !tls.equals("true") && !tls.equals("false")) {
            throw bad(uri, "tls: '" + tls + "' (expected: true or false)");
        }
        if (tls != null && full) {
            throw bad(uri, "df.tls: in a full connection string, use its own tls=true");
        }
        String ca = opts.get(CACERT);
        if (ca != null && !new File(ca).canRead()) {
            throw bad(uri, "cacert: " + ca + " is not a readable file");
        }
        try {
            Options.DEFAULT.withParameters(opts); // fail fast on a bad option
        } catch (IllegalArgumentException e) {
            throw bad(uri, e.getMessage());
        }
        return new ShardList(List.copyOf(out), Map.copyOf(opts));
    }

    /** A port range in a shard list's authority, e.g. {@code :7301-7304}. */
    private static final java.util.regex.Pattern PORT_RANGE = java.util.regex.Pattern.compile(":\\d+-\\d+");

    /** A database name the short form accepts. */
    private static final java.util.regex.Pattern DB_NAME = java.util.regex.Pattern.compile("[A-Za-z0-9_-]{1,63}");

    /** Index of the '/' that ends the hosts of a connection string, or -1 if there is none. */
    private static int authorityEnd(String s) {
        int start = s.indexOf("://") + 3;
        int q = s.indexOf('?', start);
        int slash = s.indexOf('/', start);
        return slash >= 0 && (q < 0 || slash < q) ? slash : -1;
    }

    private static IllegalArgumentException bad(String uri, String detail) {
        return new IllegalArgumentException("mongodb shard list: '" + uri + "' (expected: mongodb://HOST:FIRST-LAST, "
                + "mongodb://HOST:PORT,HOST:PORT,... or full connection strings separated by ';'): " + detail);
    }

    /** A short description: the compact form when every shard is a direct connection, else the hosts. */
    static String describe(List<ConnectionString> shards) {
        List<InetSocketAddress> direct = new ArrayList<>();
        for (ConnectionString cs : shards) {
            if (!Boolean.TRUE.equals(cs.isDirectConnection()) || cs.getHosts().size() != 1) {
                direct = null;
                break;
            }
            String h = cs.getHosts().get(0);
            int colon = h.lastIndexOf(':');
            String host = h.substring(0, colon);
            if (host.startsWith("[")) {
                host = host.substring(1, host.length() - 1);
            }
            direct.add(InetSocketAddress.createUnresolved(host, Integer.parseInt(h.substring(colon + 1))));
        }
        if (direct != null) {
            return ShardAddresses.describe(SCHEME, direct);
        }
        List<String> parts = new ArrayList<>();
        for (ConnectionString cs : shards) {
            parts.add("mongodb://" + String.join(",", cs.getHosts()) + "/");
        }
        return String.join(";", parts);
    }

    @Override
    public int shardCount() {
        return shards.size();
    }

    @Override
    public String describe() {
        return description;
    }

    /**
     * The connection string of shard {@code shard} (driver options removed), e.g. to read the
     * database it names ({@code getDatabase()}, {@code null} if none).
     *
     * @param shard the shard, {@code 0 .. shardCount()-1}
     * @return the connection string
     * @throws IndexOutOfBoundsException if there is no such shard
     */
    public ConnectionString shard(int shard) {
        return shards.get(shard);
    }

    /** {@return the options the driver was opened with, those of its URI applied} */
    public Options options() {
        return options;
    }

    /** The hosts of shard {@code shard}, for messages. */
    String address(int shard) {
        return addresses.get(shard);
    }

    /** The database of shard {@code shard}: the connection string's, else {@value #DEFAULT_DATABASE}. */
    String database(int shard) {
        String db = shards.get(shard).getDatabase();
        return db == null || db.isEmpty() ? DEFAULT_DATABASE : db;
    }

    /**
     * The settings of one shard's {@code MongoClient}: our bounds first, then the shard's
     * connection string (its options win), then {@code transport}.
     */
    MongoClientSettings settings(int shard, TransportSettings transport, CommandListener commandListener, int poolSize,
            boolean csot) {
        long connectMs = options.connectTimeout().toMillis();
        long callMs = options.callTimeout().toMillis();
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyToClusterSettings(c -> c.serverSelectionTimeout(connectMs, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(s -> {
                    s.connectTimeout((int) Math.min(Integer.MAX_VALUE, connectMs), TimeUnit.MILLISECONDS);
                    if (!csot) {
                        s.readTimeout((int) Math.min(Integer.MAX_VALUE, callMs), TimeUnit.MILLISECONDS);
                    }
                })
                // no server listener: with one, the driver starts a cluster-event-publisher thread per
                // client; the clients read the cluster description instead (MongoErrors.downCause)
                .applyToServerSettings(s -> s.heartbeatFrequency(options.heartbeat().toMillis(), TimeUnit.MILLISECONDS)
                        .minHeartbeatFrequency(Options.MIN_HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS))
                .applyToConnectionPoolSettings(p -> p.maxSize(poolSize).minSize(0).maxWaitTime(callMs, TimeUnit.MILLISECONDS)
                        // no pool maintenance (minSize 0, no idle limit): saves one MaintenanceTimer thread per pool
                        .maintenanceInitialDelay(Long.MAX_VALUE, TimeUnit.MILLISECONDS))
                // a retried read would turn a dead shard into a timeout (CSOT retries until timeoutMS)
                .retryReads(false)
                .retryWrites(false)
                .applyConnectionString(shards.get(shard));
        if (csot) {
            b.timeout(callMs, TimeUnit.MILLISECONDS);
        }
        if (commandListener != null) {
            b.addCommandListener(commandListener);
        }
        if (caCert != null && !(transport instanceof NettyTransportSettings)) {
            // the JDK's TLS: the sync driver's sockets, and TLS channels for AIO (the Netty stream has its own, nettyOn)
            b.applyToSslSettings(ssl -> ssl.context(jdkTls()));
        }
        if (transport != null) {
            b.transportSettings(transport);
        }
        return b.build();
    }

    /** Netty transport settings for a client whose I/O runs on {@code loop}. */
    TransportSettings nettyOn(EventLoop loop) {
        var b = TransportSettings.nettyBuilder().eventLoopGroup(loop).socketChannelClass(ShardDrivers.socketChannelClass(loop))
                .allocator(DriverBufferAllocator.INSTANCE);
        if (caCert != null) {
            b.sslContext(nettyTls());
        }
        return b.build();
    }

    private SslContext nettyTls() {
        SslContext c = nettyTls;
        if (c == null) {
            try {
                // the driver's Netty stream needs a JDK-provider client context (it asks it for an SSLEngine with ALPN off)
                c = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                        .trustManager(caCert).build();
            } catch (SSLException | IllegalArgumentException e) {
                throw new IllegalArgumentException("cacert " + caCert + ": " + e.getMessage(), e);
            }
            nettyTls = c;
        }
        return c;
    }

    private SSLContext jdkTls() {
        SSLContext c = jdkTls;
        if (c == null) {
            c = ((JdkSslContext) nettyTls()).context();
            jdkTls = c;
        }
        return c;
    }

    /**
     * Opens a client on {@code loop}. With {@link Transport#NETTY} the loop must be an epoll or NIO
     * {@link IoEventLoop} (e.g. of a {@link io.doubleface.internal.loop.LoopGroup}).
     */
    @Override
    public LoopClient<MongoCommand<?>> openOn(EventLoop loop) {
        Objects.requireNonNull(loop, "loop");
        clients.requireOpen();
        if (options.transport() == Transport.NETTY) {
            ShardDrivers.socketChannelClass(loop); // fail fast on a loop Netty cannot use
        }
        return ShardDrivers.narrow(loopClients.add(new MongoLoopClient(this, loop), MongoLoopClient::close));
    }

    @Override
    public BlockingClient<MongoCommand<?>> openBlocking() {
        clients.requireOpen();
        return ShardDrivers.narrow(blockingClients.add(new MongoBlockingClient(this), MongoBlockingClient::close));
    }

    /**
     * Counters of every open loop client: completions delivered on the loop vs hopped onto it,
     * commands sent from the loop vs from driver threads, and the names of the driver threads seen
     * (digits replaced by {@code N}). For {@code /admin/stats}.
     *
     * @return a snapshot per open loop client (a new list)
     */
    public List<MongoLoopClient.Stats> stats() {
        List<MongoLoopClient.Stats> out = new ArrayList<>();
        for (LoopClient<?> c : loopClients.snapshot()) {
            if (c instanceof MongoLoopClient m) {
                out.add(m.stats());
            }
        }
        return out;
    }

    /** Runs {@code closeClients} off the loop (closing a MongoClient blocks). */
    void closeLater(Runnable closeClients) {
        try {
            closer.execute(closeClients);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            closeClients.run();
        }
    }

    /**
     * Closes every client this driver opened: blocking clients at once, loop clients on their loops
     * (failing their calls with CLOSED), then waits up to {@value #CLOSE_WAIT_MILLIS} ms for their
     * {@code MongoClient}s to close. Idempotent.
     */
    @Override
    public void close() {
        if (!clients.close()) {
            return;
        }
        blockingClients.closeAll(MongoBlockingClient::close);
        loopClients.closeAll(c -> {
            if (!ShardDrivers.closeOnLoop(c, Duration.ofMillis(CLOSE_WAIT_MILLIS)) && c.loop().isShuttingDown()) {
                c.close(); // the loop is gone: close the client's own side from here
            }
        });
        closer.shutdown();
        try {
            if (!closer.awaitTermination(CLOSER_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                // A MongoClient's close may wait forever on its loop: it ends server sessions with a
                // blocking command, and with Netty that command's I/O needs the client's loop, which a
                // model may already have shut down. The interrupt ends that wait; the close goes on.
                log.warn("mongodb driver {}: clients did not close within {} ms; interrupting", description,
                        CLOSER_WAIT_MILLIS);
                closer.shutdownNow();
                if (!closer.awaitTermination(CLOSER_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                    log.warn("mongodb driver {}: clients still not closed; giving up", description);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "MongoDriver[" + description + "]";
    }
}
