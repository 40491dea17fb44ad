package io.doubleface.services.ycsb;

import io.doubleface.driver.spi.Resilience;
import io.doubleface.driver.spi.ResilientDriver;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.api.Backend;
import io.doubleface.driver.Command;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The YCSB fanout service (the DoubleFaceAD benchmark's mid-tier): a query for key N with fanout K
 * reads K shards — call i reads record {@code (N+i) % records} from shard {@code (N+i) % shards} —
 * turns each binary reply into a JSON fragment ({@code onReply}) and concatenates them in call
 * order ({@code merge}). Since record contents are a function of (key, field), the response to a
 * query is byte-identical whatever store and threading model served it.
 *
 * <p>Written on the public API only, as any user's service: one backend ({@code "records"}) on
 * the store the records live in, each read said in that store's language ({@link RecordStore}),
 * one reply handler shared by every call, fail-fast.
 *
 * <p>Optional synthetic CPU work per reply ({@code replyWorkNanos}), like the paper's handlers.
 *
 * <p>Stateless and thread-safe.
 */
public final class YcsbService implements FanoutService<YcsbQuery, byte[], YcsbService.Result> {

    /**
     * Most reads of one query over a store that routes by key (a Redis Cluster, where a query's
     * reads are keys, not shards): {@value}.
     */
    public static final int ROUTED_MAX_FANOUT = 100;

    /** Records per {@code large} scan: {@value} (× ~1 kB = 20 kB per shard). */
    public static final int DEFAULT_SCAN_RECORDS = 20;

    private final Backend<?> shards;
    private final RecordStore<?> store;
    private final long records;
    private final int scanRecords;
    private final long replyWorkNanos;
    /** onReply of every call: one constant, so planning allocates nothing for it. */
    private final ReplyHandler<YcsbQuery, Object, byte[]> toJson;

    /**
     * Adds the YCSB workload to a server: a backend {@code "records"} over {@code store}'s driver
     * (closed by the server), {@code GET /query} ({@link YcsbBinding}) and, if {@code grpc} is set,
     * the gRPC method {@link YcsbGrpcBinding} (the caller sets the gRPC port).
     *
     * @param <C> the store's command type
     * @param builder the server being built
     * @param store where the records live
     * @param records the key space of the shards ({@code --records})
     * @param scanRecords records per {@code large} scan
     * @param replyWorkNanos CPU time to burn per reply in {@code onReply} (0 = none)
     * @param grpc whether to add the gRPC method
     * @return the service
     */
    public static <C extends Command<?>> YcsbService install(FanoutServer.Builder builder, RecordStore<C> store,
            long records, int scanRecords, long replyWorkNanos, boolean grpc) {
        return install(builder, store, records, scanRecords, replyWorkNanos, grpc, null);
    }

    /**
     * Adds the YCSB workload as {@link #install(FanoutServer.Builder, RecordStore, long, int, long, boolean)},
     * its backend's driver wrapped in a {@link ResilientDriver} with {@code resilience} unless that is
     * {@code null}.
     *
     * @param <C> the store's command type
     * @param builder the server being built
     * @param store where the records live
     * @param records the key space of the shards ({@code --records})
     * @param scanRecords records per {@code large} scan
     * @param replyWorkNanos CPU time to burn per reply in {@code onReply} (0 = none)
     * @param grpc whether to add the gRPC method
     * @param resilience circuit breaking, retries and hedging of the record reads, or {@code null}
     * @return the service
     */
    public static <C extends Command<?>> YcsbService install(FanoutServer.Builder builder, RecordStore<C> store,
            long records, int scanRecords, long replyWorkNanos, boolean grpc,
            Resilience<? super C> resilience) {
        ShardDriver<C> driver = resilience == null ? store.driver() : ResilientDriver.wrap(store.driver(), resilience);
        Backend<C> b = builder.backend("records", driver);
        YcsbService service = new YcsbService(b, store, records, scanRecords, replyWorkNanos);
        int fanoutLimit = store.routedByKey() ? Math.max(b.shardCount(), ROUTED_MAX_FANOUT) : b.shardCount();
        builder.get("/query", service, new YcsbBinding(fanoutLimit, records));
        if (grpc) {
            builder.grpcMethod(service, new YcsbGrpcBinding(fanoutLimit, records));
        }
        return service;
    }

    /**
     * @param <C> the store's command type
     * @param shards the backend holding the records (over {@code store.driver()})
     * @param store how the records are read from it
     * @param records the key space of the shards ({@code --records})
     * @param scanRecords records per {@code large} scan
     * @param replyWorkNanos CPU time to burn per reply in {@code onReply} (0 = none)
     */
    public <C extends Command<?>> YcsbService(Backend<C> shards, RecordStore<C> store, long records, int scanRecords,
            long replyWorkNanos) {
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        if (scanRecords < 1 || scanRecords > KvRequest.MAX_SCAN) {
            throw new IllegalArgumentException("scanRecords: " + scanRecords + " (expected: 1.."
                    + KvRequest.MAX_SCAN + ")");
        }
        if (replyWorkNanos < 0) {
            throw new IllegalArgumentException("replyWorkNanos: " + replyWorkNanos + " (expected: >= 0)");
        }
        this.shards = shards;
        this.store = store;
        this.records = records;
        this.scanRecords = scanRecords;
        this.replyWorkNanos = replyWorkNanos;
        if (store.repliesAreCanonical()) {
            this.toJson = (q, call, reply) -> process((ByteBuf) reply);
        } else {
            this.toJson = (q, call, reply) -> {
                ByteBuf canonical = store.canonical(command(q, call), reply);
                try {
                    return process(canonical);
                } finally {
                    canonical.release();
                }
            };
        }
    }

    public long records() {
        return records;
    }

    /** The merged response: the query and one JSON fragment per call, in call order. */
    public record Result(YcsbQuery query, List<byte[]> parts) {}

    /** The number of shards of the backend. */
    public int shardCount() {
        return shards.shardCount();
    }

    @Override
    public void plan(YcsbQuery q, FanoutPlan<YcsbQuery, byte[]> plan) {
        for (int i = 0; i < q.fanout(); i++) {
            int shard = shard(q, i);
            call(plan, shards, store, shard, command(q, i));
        }
    }

    /** One call: the store's command for {@code read}, its reply to {@link #toJson}. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void call(FanoutPlan<YcsbQuery, byte[]> plan, Backend backend, RecordStore store, int shard,
            KvRequest read) {
        if (store.routedByKey()) {
            plan.call(backend, (Command) store.command(shard, read), (ReplyHandler) toJson);
        } else {
            plan.call(backend, shard, (Command) store.command(shard, read), (ReplyHandler) toJson);
        }
    }

    /** The shard of call {@code i} of {@code q}. */
    int shard(YcsbQuery q, int i) {
        return (int) ((q.key() + i) % shards.shardCount());
    }

    /** The command of call {@code i} of {@code q}. */
    KvRequest command(YcsbQuery q, int i) {
        return command(q, i, records, scanRecords);
    }

    /** The command of call {@code i} of {@code q} over {@code records} records per shard. */
    static KvRequest command(YcsbQuery q, int i, long records, int scanRecords) {
        return q.size().request((q.key() + i) % records, scanRecords);
    }

    /** Records per {@code large} scan. */
    public int scanRecords() {
        return scanRecords;
    }

    /** The per-reply work: the synthetic CPU work, if any, and the JSON fragment. */
    byte[] process(ByteBuf reply) {
        if (replyWorkNanos > 0) {
            burn(replyWorkNanos);
        }
        return toJson(reply);
    }

    @Override
    public Result merge(YcsbQuery q, Replies<byte[]> replies, FanoutPlan<YcsbQuery, byte[]> next) {
        return new Result(q, replies.values());
    }

    /**
     * Canonical reply → {@code [{"key":k,"f0":"…",…},…]}. Field values are alphanumeric, so no
     * escaping is needed.
     */
    static byte[] toJson(ByteBuf reply) {
        int idx = reply.readerIndex();
        int count = reply.getUnsignedShort(idx);
        idx += 2;
        StringBuilder head = new StringBuilder(24);
        // exact size first, then one copy
        int size = 2; // [ ]
        int scan = idx;
        for (int r = 0; r < count; r++) {
            long key = reply.getLong(scan);
            int nf = reply.getUnsignedByte(scan + 8);
            size += (r > 0 ? 1 : 0) + 8 + Long.toString(key).length(); // {"key":k}
            size += nf * (7 + Records.FIELD_SIZE + 1); // ,"fN":"…"
            scan += 9 + nf * (1 + Records.FIELD_SIZE);
        }
        byte[] out = new byte[size];
        int o = 0;
        out[o++] = '[';
        for (int r = 0; r < count; r++) {
            if (r > 0) {
                out[o++] = ',';
            }
            long key = reply.getLong(idx);
            int nf = reply.getUnsignedByte(idx + 8);
            idx += 9;
            head.setLength(0);
            head.append("{\"key\":").append(key);
            o = ascii(head, out, o);
            for (int f = 0; f < nf; f++) {
                int field = reply.getUnsignedByte(idx);
                out[o++] = ',';
                out[o++] = '"';
                out[o++] = 'f';
                out[o++] = (byte) ('0' + field);
                out[o++] = '"';
                out[o++] = ':';
                out[o++] = '"';
                reply.getBytes(idx + 1, out, o, Records.FIELD_SIZE);
                o += Records.FIELD_SIZE;
                out[o++] = '"';
                idx += 1 + Records.FIELD_SIZE;
            }
            out[o++] = '}';
        }
        out[o++] = ']';
        if (o != out.length) {
            throw new IllegalStateException("malformed shard reply: " + o + " != " + out.length);
        }
        return out;
    }

    private static int ascii(CharSequence s, byte[] out, int o) {
        for (int i = 0; i < s.length(); i++) {
            out[o++] = (byte) s.charAt(i);
        }
        return o;
    }

    /** Spins for {@code nanos} of wall time on the calling thread (synthetic per-reply work). */
    static void burn(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
