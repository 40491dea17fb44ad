package io.doubleface.services.ycsb;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.PipelinedLoopClient;
import io.doubleface.driver.spi.ShardAddresses;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDrivers;
import io.doubleface.driver.ShardException;
import io.doubleface.kv.KvRequest;
import io.doubleface.mongo.MongoCommand;
import io.doubleface.mongo.MongoDriver;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A driver of the YCSB record read over MongoDB shards that does not use the official driver on
 * the loops: {@code mongodb+loop://HOST:FIRST-LAST} (or {@code HOST:PORT,HOST:PORT,...}). Its loop
 * clients are the framework's {@link PipelinedLoopClient} speaking {@link OpMsgClientProtocol} — one
 * pipelined OP_MSG connection per shard on the loop, just the {@code find} of the records, no driver
 * threads, no checkout hop — written on the public driver
 * SPI ({@link ShardDriver}, {@link LoopClient}) as any user's own driver would be. Its blocking
 * client, for the thread models, is the official sync driver's ({@link MongoDriver} with
 * {@link MongoRecords}), translated to the same canonical replies.
 *
 * <p>Shards must be plain servers (no replica set, SRV, TLS or credentials); records live in
 * {@value MongoRecords#DATABASE}{@code .}{@value MongoRecords#COLLECTION}.
 *
 * <p>Threading: {@link #openOn}, {@link #openBlocking} and {@link #close} are thread-safe.
 */
public final class OpMsgDriver implements ShardDriver<KvRequest> {

    /** URI scheme: {@value}. */
    public static final String SCHEME = "mongodb+loop";

    /** Reconnect backoff after a failed connection attempt: {@value} ms. */
    static final long RECONNECT_BACKOFF_MILLIS = 50;

    /** Longest {@link #close()} waits for each loop client to close on its loop: {@value} ms. */
    static final long CLOSE_WAIT_MILLIS = 5_000;

    private final List<InetSocketAddress> shards;
    private final DriverSettings settings;
    private final long records;
    private final String description;
    private final OpMsgClientProtocol protocol;
    private final Set<PipelinedLoopClient<KvRequest>> loopClients = ConcurrentHashMap.newKeySet();
    private final Set<BlockingClient<?>> blockingClients = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * @param uri {@code mongodb+loop://HOST:FIRST-LAST} or {@code mongodb+loop://HOST:PORT,HOST:PORT,...}
     * @param settings timeouts and the outstanding-call bound
     * @param records records per shard: SCANs wrap at it
     * @throws IllegalArgumentException if the URI is not such a list
     */
    public OpMsgDriver(String uri, DriverSettings settings, long records) {
        Objects.requireNonNull(uri, "uri");
        if (uri.indexOf('?') >= 0 || uri.indexOf('/', SCHEME.length() + 3) >= 0) {
            throw new IllegalArgumentException("shard URI '" + uri + "': " + SCHEME
                    + ":// takes the short forms only (HOST:FIRST-LAST or HOST:PORT,...), no database or options");
        }
        this.shards = ShardAddresses.parse(SCHEME, uri);
        this.settings = Objects.requireNonNull(settings, "settings");
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        this.records = records;
        this.description = ShardAddresses.describe(SCHEME, shards);
        this.protocol = new OpMsgClientProtocol(records, MongoRecords.DATABASE);
    }

    @Override
    public int shardCount() {
        return shards.size();
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public LoopClient<KvRequest> openOn(EventLoop loop) {
        requireOpen();
        PipelinedLoopClient<KvRequest> c = new PipelinedLoopClient<>(loop, shards, protocol, settings,
                Duration.ofMillis(RECONNECT_BACKOFF_MILLIS), description, loopClients::remove);
        loopClients.add(c);
        if (closed) {
            loopClients.remove(c);
            c.close();
            throw new IllegalStateException(SCHEME + " driver " + description + " is closed");
        }
        return c;
    }

    @Override
    public BlockingClient<KvRequest> openBlocking() {
        requireOpen();
        List<String> hosts = new ArrayList<>();
        for (InetSocketAddress a : shards) {
            hosts.add(a.getHostString() + ":" + a.getPort());
        }
        MongoDriver official = MongoDriver.of("mongodb://" + String.join(",", hosts),
                MongoDriver.Options.DEFAULT.with(settings));
        Blocking c = new Blocking(new MongoRecords(official, records));
        blockingClients.add(c);
        if (closed) {
            c.close();
            throw new IllegalStateException(SCHEME + " driver " + description + " is closed");
        }
        return c;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException(SCHEME + " driver " + description + " is closed");
        }
    }

    /** The blocking face: the record read as a native {@code find} on the official sync driver. */
    private final class Blocking implements BlockingClient<KvRequest> {
        private final MongoRecords store;
        private final BlockingClient<MongoCommand<?>> client;

        Blocking(MongoRecords store) {
            this.store = store;
            this.client = store.driver().openBlocking();
        }

        @Override
        public void connect() throws ShardException {
            client.connect();
        }

        @Override
        public Object call(int shard, KvRequest request, long timeoutNanos) throws ShardException {
            Object docs = client.call(shard, store.command(shard, request), timeoutNanos);
            try {
                return store.canonical(request, docs);
            } catch (IllegalStateException e) {
                throw new ShardException(ShardException.Kind.SHARD_ERROR, shard, e.getMessage(), e);
            }
        }

        @Override
        public void callAll(int[] shardIds, List<KvRequest> requests, long timeoutNanos, Sink sink) {
            List<MongoCommand<?>> commands = new ArrayList<>(requests.size());
            for (int i = 0; i < requests.size(); i++) {
                commands.add(store.command(shardIds[i], requests.get(i)));
            }
            client.callAll(shardIds, commands, timeoutNanos, new Sink() {
                @Override
                public void onReply(int index, Object reply) {
                    ByteBuf canonical;
                    try {
                        canonical = store.canonical(requests.get(index), reply);
                    } catch (IllegalStateException e) {
                        sink.onFailure(index, new ShardException(ShardException.Kind.SHARD_ERROR, shardIds[index],
                                e.getMessage(), e));
                        return;
                    }
                    sink.onReply(index, canonical);
                }

                @Override
                public void onFailure(int index, ShardException cause) {
                    sink.onFailure(index, cause);
                }
            });
        }

        @Override
        public void close() {
            blockingClients.remove(this);
            client.close();
            store.driver().close();
        }
    }

    /** Closes every client this driver opened (loop clients on their loops). Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (BlockingClient<?> c : List.copyOf(blockingClients)) {
            c.close();
        }
        for (PipelinedLoopClient<KvRequest> c : List.copyOf(loopClients)) {
            ShardDrivers.closeOnLoop(c, Duration.ofMillis(CLOSE_WAIT_MILLIS));
        }
        loopClients.clear();
    }

    @Override
    public String toString() {
        return "OpMsgDriver[" + description + "]";
    }
}
