package io.doubleface.services.ycsb;

import io.doubleface.driver.spi.LeafServer;
import io.doubleface.driver.Transport;
import com.google.protobuf.UnsafeByteOperations;
import io.doubleface.driver.spi.LeafServerBuilder;
import io.doubleface.driver.spi.ShardAddresses;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.doubleface.services.ycsb.kv.v1.KvServiceGrpc;
import io.doubleface.services.ycsb.kv.v1.ReadRequest;
import io.doubleface.services.ycsb.kv.v1.Reply;
import io.doubleface.services.ycsb.kv.v1.ScanRequest;
import io.doubleface.driver.spi.DriverLoops;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOption;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gRPC KV leaf: one process (or embedded object) hosting many shards of the
 * {@code doubleface.kv.v1.KvService}, one listening port per shard ({@code basePort ..
 * basePort+shards-1}), every shard a grpc-java {@link Server} built with {@link NettyServerBuilder}
 * on one shared {@link DriverLoops} named {@value #LOOP_GROUP_NAME} (boss and worker group alike,
 * {@code directExecutor}: a call is answered on the loop that read it, no thread hop).
 *
 * <p>Every shard serves the whole deterministic key space {@code 0 .. records-1} of
 * {@link Records}; each reply's {@code payload} is exactly {@link Records#writeReply}'s canonical
 * bytes, so a mid-tier merges byte-identical replies from gRPC leaves as from KV leaves. A bad
 * request (key out of range, bad field or count) is answered with {@code INVALID_ARGUMENT}.
 *
 * <pre>{@code
 * try (GrpcLeafServer leaf = GrpcLeafServer.builder().shards(20).basePort(7401).records(1000).start()) {
 *     leaf.printListening(System.out);   // listening on 127.0.0.1:7401-7420 (20 shards, 1000 records)
 * }
 * }</pre>
 *
 * <p>Threading: {@link Builder#start}, {@link #close} and the accessors are thread-safe ({@code close}
 * not from the leaf's own loops). The leaf owns its loop group and shuts it down in {@link #close()}.
 */
public final class GrpcLeafServer extends LeafServer {

    private static final Logger log = LoggerFactory.getLogger(GrpcLeafServer.class);

    /** Name of the leaf's loop group (and prefix of its thread names): {@value}. */
    public static final String LOOP_GROUP_NAME = "grpc-leaf";

    /** Default host to bind: {@value}. */
    public static final String DEFAULT_HOST = LeafServerBuilder.DEFAULT_HOST;

    /** Default number of event loops: {@value}. */
    public static final int DEFAULT_LOOPS = 1;

    /** Most shards one leaf hosts: {@value}. */
    public static final int MAX_SHARDS = 4096;

    /** Most records per shard: {@value}. */
    public static final int MAX_RECORDS = 10_000_000;

    /** Longest {@link #close()} waits for each shard's server to terminate: {@value} ms. */
    static final long CLOSE_WAIT_MILLIS = 5_000;

    private final int records;
    private final DriverLoops loops;
    private final List<Server> servers;
    private volatile boolean closed;

    private GrpcLeafServer(Builder b) {
        super(b);
        this.records = b.records;
        this.loops = DriverLoops.open(LOOP_GROUP_NAME, b.loops, b.transport);
        this.servers = new ArrayList<>(b.shards());
        try {
            for (int shard = 0; shard < b.shards(); shard++) {
                int port = b.basePort() == 0 ? 0 : b.basePort() + shard;
                Server s = bind(shard, port);
                servers.add(s);
                bound(shard, s.getPort());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private Server bind(int shard, int port) {
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress(host(), port))
                .bossEventLoopGroup(loops.group())
                .workerEventLoopGroup(loops.group())
                .channelType(loops.serverChannelClass())
                .withOption(ChannelOption.SO_REUSEADDR, true)
                .withChildOption(ChannelOption.TCP_NODELAY, true)
                .directExecutor()
                .addService(new Shard(records))
                .build();
        try {
            return s.start();
        } catch (IOException e) {
            s.shutdownNow();
            throw new IllegalStateException("grpc shard " + shard + ": cannot listen on " + host() + ":" + port + ": "
                    + e.getMessage(), e);
        }
    }

    /** One shard: answers from {@link Records} on the loop that read the call. Stateless. */
    static final class Shard extends KvServiceGrpc.KvServiceImplBase {
        private final long records;

        Shard(long records) {
            this.records = records;
        }

        @Override
        public void read(ReadRequest req, StreamObserver<Reply> out) {
            if (req.getKey() < 0 || req.getKey() >= records) {
                out.onError(Status.INVALID_ARGUMENT.withDescription("key: " + req.getKey() + " (expected: 0.."
                        + (records - 1) + ")").asRuntimeException());
                return;
            }
            if (req.getField() < KvRequest.ALL_FIELDS || req.getField() >= Records.FIELD_COUNT) {
                out.onError(Status.INVALID_ARGUMENT.withDescription("field: " + req.getField() + " (expected: -1.."
                        + (Records.FIELD_COUNT - 1) + ")").asRuntimeException());
                return;
            }
            answer(new KvRequest(KvRequest.Op.READ, req.getKey(), req.getField(), 1), out);
        }

        @Override
        public void scan(ScanRequest req, StreamObserver<Reply> out) {
            if (req.getKey() < 0 || req.getKey() >= records) {
                out.onError(Status.INVALID_ARGUMENT.withDescription("key: " + req.getKey() + " (expected: 0.."
                        + (records - 1) + ")").asRuntimeException());
                return;
            }
            if (req.getCount() < 1 || req.getCount() > KvRequest.MAX_SCAN) {
                out.onError(Status.INVALID_ARGUMENT.withDescription("count: " + req.getCount() + " (expected: 1.."
                        + KvRequest.MAX_SCAN + ")").asRuntimeException());
                return;
            }
            if (req.getField() < KvRequest.ALL_FIELDS || req.getField() >= Records.FIELD_COUNT) {
                out.onError(Status.INVALID_ARGUMENT.withDescription("field: " + req.getField() + " (expected: -1.."
                        + (Records.FIELD_COUNT - 1) + ")").asRuntimeException());
                return;
            }
            answer(new KvRequest(KvRequest.Op.SCAN, req.getKey(), req.getField(), req.getCount()), out);
        }

        private void answer(KvRequest request, StreamObserver<Reply> out) {
            // The canonical bytes, written straight into the array the reply message wraps (no copy).
            byte[] payload = new byte[Records.replySize(request)];
            ByteBuf buf = Unpooled.wrappedBuffer(payload).writerIndex(0);
            Records.writeReply(request, records, buf);
            out.onNext(Reply.newBuilder().setPayload(UnsafeByteOperations.unsafeWrap(payload, 0, buf.writerIndex()))
                    .build());
            out.onCompleted();
        }
    }

    /**
     * A builder with the defaults (host {@value #DEFAULT_HOST}, {@value #DEFAULT_LOOPS} loop, AUTO transport).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the records per shard} */
    public int records() {
        return records;
    }

    /** {@return the loops serving every shard} */
    public DriverLoops loopGroup() {
        return loops;
    }

    /** {@return the shard list, e.g. {@code grpc://127.0.0.1:7401-7420}} */
    public String uri() {
        return ShardAddresses.describe("grpc", addresses());
    }

    /** {@return e.g. {@code listening on 127.0.0.1:7401-7420 (20 shards, 1000 records)}} */
    public String listeningMessage() {
        return "listening on " + uri().substring((GrpcDriver.SCHEME + "://").length()) + " (" + shardsLabel()
                + ", " + records + " records)";
    }

    /**
     * Prints {@link #listeningMessage()} as one line.
     *
     * @param out where to print
     */
    public void printListening(PrintStream out) {
        out.println(listeningMessage());
    }

    /** Stops listening, ends every call and connection, and shuts the loops down. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Server s : servers) {
            s.shutdownNow();
        }
        for (Server s : servers) {
            try {
                if (!s.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                    log.warn("grpc leaf shard on port {} did not stop within {} ms", s.getPort(), CLOSE_WAIT_MILLIS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        loops.close();
        log.debug("grpc leaf on {} stopped", host());
    }

    @Override
    public String toString() {
        return "GrpcLeafServer[" + listeningMessage() + "]";
    }

    /** Configures and starts a {@link GrpcLeafServer}. Not thread-safe. */
    public static final class Builder extends LeafServerBuilder<Builder> {
        private int records = 1000;
        private int loops = DEFAULT_LOOPS;
        private Transport transport = Transport.AUTO;

        private Builder() {
            super(MAX_SHARDS);
        }

        /**
         * Sets the records per shard.
         *
         * @param records records per shard (keys {@code 0 .. records-1}); default 1000
         * @return this builder
         */
        public Builder records(int records) {
            if (records < 1 || records > MAX_RECORDS) {
                throw new IllegalArgumentException("records: " + records + " (expected: 1.." + MAX_RECORDS + ")");
            }
            this.records = records;
            return this;
        }

        /**
         * Sets the number of event loops.
         *
         * @param loops event loops serving all shards; default {@value #DEFAULT_LOOPS}
         * @return this builder
         */
        public Builder loops(int loops) {
            if (loops < 1) {
                throw new IllegalArgumentException("loops: " + loops + " (expected: > 0)");
            }
            this.loops = loops;
            return this;
        }

        /**
         * Sets the transport of the loops.
         *
         * @param transport transport of the loops; default AUTO (epoll if available)
         * @return this builder
         */
        public Builder transport(Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /**
         * Binds every shard.
         *
         * @return the running leaf
         */
        public GrpcLeafServer start() {
            checkPortRange();
            return new GrpcLeafServer(this);
        }
    }
}
