package io.doubleface.services.ycsb;

import io.doubleface.driver.DriverSettings;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import io.doubleface.redis.RedisDriver;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * The records in Redis shards ({@code redis://}, {@code redis-cluster://}), read with native
 * commands ({@link Redis#bytes()}) through a {@link RedisDriver}.
 *
 * <p>Record {@code k} is stored twice in every shard:
 *
 * <ul>
 *   <li>{@code user:k} — a hash with fields {@code field0 .. field9}, each holding the 100 bytes
 *       {@link Records#value(long, int)}. A READ of one field is {@code HGET user:k fieldF}; a READ
 *       of the whole record is {@code HMGET user:k field0 .. field9} (field order fixed by the
 *       command, never by {@code HGETALL}'s hash order);
 *   <li>{@code rec:k} — a string holding the record in its canonical encoding
 *       ({@link Records#writeRecord}: {@code key:i64 nfields:u8 (index:u8 value:100B)*10}, 1019
 *       bytes). A SCAN of {@code count} records from {@code key} is one
 *       {@code MGET rec:k0 rec:k1 ...} of the wrapped keys: one round trip, no server-side script
 *       (so nothing to re-register after a restart).
 * </ul>
 *
 * <p>On a Redis Cluster ({@code redis-cluster://}) the records are stored once, under the same
 * natural names, wherever Redis places them; the service routes each read by its key
 * ({@link #routedByKey()}), and a SCAN's {@code MGET}, whose keys span slots, is split per slot by
 * the driver and put back together in key order. Immutable and thread-safe.
 */
public final class RedisRecords implements RecordStore<RedisCommand<?>> {

    /** Bytes of a record string ({@code rec:k}): {@value}. */
    public static final int RECORD_BYTES = 8 + 1 + Records.FIELD_COUNT * (1 + Records.FIELD_SIZE);

    /** Records per pipelined batch of {@link #load} (per shard): {@value}. */
    static final int LOAD_BATCH = 256;

    /** Longest one batch of {@link #load} may take: {@value} s. */
    static final long LOAD_BATCH_TIMEOUT_SECONDS = 30;

    private static final Redis<byte[], byte[]> REDIS = Redis.bytes();
    private static final byte[][] FIELD_NAMES = new byte[Records.FIELD_COUNT][];

    static {
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            FIELD_NAMES[f] = ("field" + f).getBytes(StandardCharsets.US_ASCII);
        }
    }

    private final RedisDriver driver;
    private final long records;
    private static final byte[] NO_PREFIX = {};

    /**
     * @param driver the shards, not {@code null}
     * @param records records per shard ({@code --records}), {@code > 0}: SCANs wrap at it
     */
    public RedisRecords(RedisDriver driver, long records) {
        this.driver = Objects.requireNonNull(driver, "driver");
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        this.records = records;
    }

    /** {@return whether reads are routed by key: over a Redis Cluster} */
    @Override
    public boolean routedByKey() {
        return driver.isCluster();
    }

    @Override
    public RedisDriver driver() {
        return driver;
    }

    @Override
    public RedisCommand<?> command(int shard, KvRequest r) {
        byte[] tag = NO_PREFIX;
        if (r.op() == KvRequest.Op.SCAN) {
            byte[][] keys = new byte[r.count()][];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = key(tag, "rec:", Records.keyAt(r, i, records));
            }
            return REDIS.mget(keys);
        } else if (r.field() == KvRequest.ALL_FIELDS) {
            return REDIS.hmget(key(tag, "user:", r.key()), FIELD_NAMES);
        } else {
            return REDIS.hget(key(tag, "user:", r.key()), FIELD_NAMES[r.field()]);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public ByteBuf canonical(KvRequest r, Object reply) {
        // pooled: the caller releases it right after the JSON fragment is written
        ByteBuf out = ByteBufAllocator.DEFAULT.buffer(Records.replySize(r));
        try {
            if (r.op() == KvRequest.Op.SCAN) {
                encodeScan(r, (List<byte[]>) reply, out);
            } else if (r.field() == KvRequest.ALL_FIELDS) {
                encodeRecord(r, (List<byte[]>) reply, out);
            } else {
                checkValue(r.key(), r.field(), (byte[]) reply);
                out.writeShort(1).writeLong(r.key()).writeByte(1).writeByte(r.field()).writeBytes((byte[]) reply);
            }
            return out;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
    }

    private static void encodeRecord(KvRequest r, List<byte[]> values, ByteBuf out) {
        if (values == null || values.size() != Records.FIELD_COUNT) {
            throw new IllegalStateException("HMGET of key " + r.key() + " gave " + (values == null ? 0 : values.size())
                    + " values (expected: " + Records.FIELD_COUNT + ")");
        }
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            checkValue(r.key(), f, values.get(f));
        }
        out.writeShort(1).writeLong(r.key()).writeByte(Records.FIELD_COUNT);
        for (int f = 0; f < Records.FIELD_COUNT; f++) {
            out.writeByte(f).writeBytes(values.get(f));
        }
    }

    private void encodeScan(KvRequest r, List<byte[]> values, ByteBuf out) {
        if (values == null || values.size() != r.count()) {
            throw new IllegalStateException("MGET from key " + r.key() + " gave " + (values == null ? 0 : values.size())
                    + " records (expected: " + r.count() + ")");
        }
        for (int i = 0; i < r.count(); i++) {
            long k = Records.keyAt(r, i, records);
            byte[] v = values.get(i);
            if (v == null) {
                throw new IllegalStateException("record " + k + " not found (were the records loaded? "
                        + "doubleface load-data)");
            }
            if (v.length != RECORD_BYTES || readLong(v) != k || v[8] != Records.FIELD_COUNT) {
                throw new IllegalStateException("record " + k + " is malformed (" + v.length + " bytes, expected "
                        + RECORD_BYTES + ")");
            }
        }
        out.writeShort(r.count());
        for (int i = 0; i < r.count(); i++) {
            byte[] v = values.get(i);
            if (r.field() == KvRequest.ALL_FIELDS) {
                out.writeBytes(v);
            } else {
                out.writeBytes(v, 0, 8).writeByte(1).writeBytes(v, 9 + r.field() * (1 + Records.FIELD_SIZE),
                        1 + Records.FIELD_SIZE);
            }
        }
    }

    private static void checkValue(long key, int field, byte[] value) {
        if (value == null) {
            throw new IllegalStateException("key " + key + " field " + field + " not found (were the records loaded? "
                    + "doubleface load-data)");
        }
        if (value.length != Records.FIELD_SIZE) {
            throw new IllegalStateException("key " + key + " field " + field + " has " + value.length
                    + " bytes (expected: " + Records.FIELD_SIZE + ")");
        }
    }

    private static long readLong(byte[] b) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[i] & 0xFF);
        }
        return v;
    }

    /** {@code tag + kind + k} as ASCII bytes. */
    static byte[] key(byte[] tag, String kind, long k) {
        byte[] tail = (kind + k).getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[tag.length + tail.length];
        System.arraycopy(tag, 0, out, 0, tag.length);
        System.arraycopy(tail, 0, out, tag.length, tail.length);
        return out;
    }

    /**
     * The record string ({@code rec:k} value) of {@code k}: its canonical encoding.
     *
     * @param k the record key
     * @return a new array of {@value #RECORD_BYTES} bytes
     */
    public static byte[] recordBytes(long k) {
        ByteBuf b = Unpooled.wrappedBuffer(new byte[RECORD_BYTES]).clear();
        Records.writeRecord(k, b);
        return b.array();
    }

    /**
     * Writes records {@code 0..records-1} into every shard of {@code uri} (standalone or cluster,
     * as {@link RedisDriver#open} reads it): the hash {@code user:k} and the string {@code rec:k},
     * pipelined: {@value #LOAD_BATCH} records per shard per round, every shard in parallel, one
     * flush per connection per round.
     *
     * @param uri the shards
     * @param records records per shard, {@code > 0}
     * @param progress receives the records written so far over all shards, a few times a second
     * @throws IllegalStateException if a shard cannot be reached or refuses the writes
     */
    public static void load(String uri, long records, LongConsumer progress) {
        List<InetSocketAddress> shards;
        List<String> tags = new ArrayList<>();
        try (RedisDriver d = RedisDriver.of(uri, DriverSettings.DEFAULT)) {
            if (d.isCluster()) {
                loadCluster(d.shards(), records, progress);
                return;
            }
            shards = d.shards();
            for (int s = 0; s < shards.size(); s++) {
                tags.add("");
            }
        }
        load(shards, tags, records, progress);
    }

    /**
     * Writes records {@code 0..records-1} once into a Redis Cluster, under their natural names,
     * where Redis places them: Lettuce's cluster client, pipelined ({@value #LOAD_BATCH} records in
     * flight per round).
     */
    private static void loadCluster(List<InetSocketAddress> seeds, long records, LongConsumer progress) {
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        List<RedisURI> uris = new ArrayList<>();
        for (InetSocketAddress a : seeds) {
            uris.add(RedisURI.builder().withHost(a.getHostString()).withPort(a.getPort())
                    .withTimeout(Duration.ofSeconds(LOAD_BATCH_TIMEOUT_SECONDS)).build());
        }
        io.lettuce.core.cluster.RedisClusterClient client = io.lettuce.core.cluster.RedisClusterClient.create(uris);
        try (io.lettuce.core.cluster.api.StatefulRedisClusterConnection<byte[], byte[]> c =
                client.connect(ByteArrayCodec.INSTANCE)) {
            // auto-flush stays on: the cluster connection opens its node connections lazily, and a
            // command queued on one made after a batch's flushCommands() would wait for the next flush
            long lastReport = System.nanoTime();
            for (long from = 0; from < records; from += LOAD_BATCH) {
                long to = Math.min(records, from + LOAD_BATCH);
                List<RedisFuture<?>> futures = new ArrayList<>();
                for (long k = from; k < to; k++) {
                    Map<byte[], byte[]> fields = new LinkedHashMap<>();
                    for (int f = 0; f < Records.FIELD_COUNT; f++) {
                        fields.put(FIELD_NAMES[f], Records.value(k, f));
                    }
                    futures.add(c.async().hset(key(NO_PREFIX, "user:", k), fields));
                    futures.add(c.async().set(key(NO_PREFIX, "rec:", k), recordBytes(k)));
                }
                awaitBatch(futures);
                long now = System.nanoTime();
                if (to == records || now - lastReport > TimeUnit.MILLISECONDS.toNanos(250)) {
                    lastReport = now;
                    progress.accept(to);
                }
            }
        } catch (io.lettuce.core.RedisException e) {
            throw new IllegalStateException("redis cluster load failed: " + e.getMessage(), e);
        } finally {
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    private static void awaitBatch(List<RedisFuture<?>> futures) {
        if (!LettuceFutures.awaitAll(LOAD_BATCH_TIMEOUT_SECONDS, TimeUnit.SECONDS, futures.toArray(new RedisFuture<?>[0]))) {
            throw new IllegalStateException("redis load: a batch took longer than " + LOAD_BATCH_TIMEOUT_SECONDS + " s");
        }
        for (RedisFuture<?> f : futures) {
            if (f.getError() != null) {
                throw new IllegalStateException("redis load: a write was refused: " + f.getError());
            }
        }
    }

    /**
     * Writes records {@code 0..records-1} into each of {@code shards} (standalone, no key tag).
     *
     * @param shards the {@code redis-server} addresses
     * @param records records per shard, {@code > 0}
     * @throws IllegalStateException if a shard cannot be reached or refuses the writes
     */
    public static void load(List<InetSocketAddress> shards, long records) {
        List<String> tags = new ArrayList<>();
        shards.forEach(s -> tags.add(""));
        load(shards, tags, records, n -> { });
    }

    private static void load(List<InetSocketAddress> shards, List<String> tags, long records, LongConsumer progress) {
        if (records < 1) {
            throw new IllegalArgumentException("records: " + records + " (expected: > 0)");
        }
        RedisClient client = RedisClient.create();
        List<StatefulRedisConnection<byte[], byte[]>> conns = new ArrayList<>();
        try {
            for (InetSocketAddress a : shards) {
                RedisURI u = RedisURI.builder().withHost(a.getHostString()).withPort(a.getPort())
                        .withTimeout(Duration.ofSeconds(LOAD_BATCH_TIMEOUT_SECONDS)).build();
                StatefulRedisConnection<byte[], byte[]> c;
                try {
                    c = client.connect(ByteArrayCodec.INSTANCE, u);
                } catch (RuntimeException e) {
                    throw new IllegalStateException("redis shard " + a.getHostString() + ":" + a.getPort()
                            + " cannot be reached: " + e.getMessage(), e);
                }
                c.setAutoFlushCommands(false);
                conns.add(c);
            }
            long lastReport = System.nanoTime();
            for (long from = 0; from < records; from += LOAD_BATCH) {
                long to = Math.min(records, from + LOAD_BATCH);
                List<RedisFuture<?>> futures = new ArrayList<>();
                for (int s = 0; s < conns.size(); s++) {
                    RedisAsyncCommands<byte[], byte[]> cmds = conns.get(s).async();
                    byte[] tag = tags.get(s).getBytes(StandardCharsets.US_ASCII);
                    for (long k = from; k < to; k++) {
                        Map<byte[], byte[]> fields = new LinkedHashMap<>();
                        for (int f = 0; f < Records.FIELD_COUNT; f++) {
                            fields.put(FIELD_NAMES[f], Records.value(k, f));
                        }
                        futures.add(cmds.hset(key(tag, "user:", k), fields));
                        futures.add(cmds.set(key(tag, "rec:", k), recordBytes(k)));
                    }
                    conns.get(s).flushCommands();
                }
                awaitBatch(futures);
                long now = System.nanoTime();
                if (to == records || now - lastReport > TimeUnit.MILLISECONDS.toNanos(250)) {
                    lastReport = now;
                    progress.accept(to * conns.size());
                }
            }
        } catch (io.lettuce.core.RedisException e) {
            throw new IllegalStateException("redis load failed: " + e.getMessage(), e);
        } finally {
            for (StatefulRedisConnection<byte[], byte[]> c : conns) {
                c.close();
            }
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
