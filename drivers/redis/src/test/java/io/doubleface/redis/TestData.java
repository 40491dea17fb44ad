package io.doubleface.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * The test dataset of the Redis driver tests, written with a plain Lettuce connection (not the
 * driver under test). On shard {@code s}, with a key prefix {@code t} ({@code ""} unless a test says):
 * <ul>
 *   <li>{@code t k:<i>} → {@link #value value(s, i)}, {@value #VALUE_BYTES} bytes, for
 *       {@code i < }{@value #KEYS};
 *   <li>{@code t rec:<r>}, a hash of fields {@code f0 .. f9} → {@link #fieldValue fieldValue(s, r, f)},
 *       for {@code r < }{@value #RECS}.
 * </ul>
 * Values depend on the shard, so a reply from the wrong shard does not pass, and hold every byte
 * value (including {@code \r\n}), so replies are checked for byte identity.
 */
final class TestData {

    static final int KEYS = 1000;
    static final int RECS = 10;
    static final int FIELDS = 10;
    static final int VALUE_BYTES = 100;

    static final Redis<byte[], byte[]> B = Redis.bytes();

    private TestData() {}

    static byte[] key(String tag, int i) {
        return ascii(tag + "k:" + i);
    }

    static byte[] rec(String tag, int r) {
        return ascii(tag + "rec:" + r);
    }

    static byte[] field(int f) {
        return ascii("f" + f);
    }

    /** The value of {@code k:<i>} on shard {@code shard}. */
    static byte[] value(int shard, int i) {
        return fill("s" + shard + ":k:" + i + ":", 31 * i + 7 * shard);
    }

    /** The value of field {@code f<f>} of hash {@code rec:<r>} on shard {@code shard}. */
    static byte[] fieldValue(int shard, int r, int f) {
        return fill("s" + shard + ":rec:" + r + ":f" + f + ":", 101 * r + 11 * f + 7 * shard + 1);
    }

    private static byte[] fill(String head, int seed) {
        byte[] b = new byte[VALUE_BYTES];
        byte[] h = ascii(head);
        System.arraycopy(h, 0, b, 0, h.length);
        for (int j = h.length; j < b.length; j++) {
            b[j] = (byte) (seed * 7 + j * 13); // every byte value, \r and \n included
        }
        return b;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** Bytes as a string of the same length (ISO-8859-1), so that equal strings mean equal bytes. */
    static String str(byte[] b) {
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    /**
     * A reply in a form {@code assertEquals} compares by content: {@code byte[]} as {@link #str},
     * lists element by element, anything else ({@code null}, {@code String}, {@code Long}) as is.
     */
    static Object canon(Object reply) {
        if (reply instanceof byte[] b) {
            return str(b);
        }
        if (reply instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            for (Object o : l) {
                out.add(canon(o));
            }
            return out;
        }
        return reply;
    }

    /** Loads the dataset on every shard of standalone {@code servers}, or on the shards {@code only}. */
    static void load(RedisServers servers, int... only) {
        if (servers.uri().startsWith(RedisDriver.CLUSTER_SCHEME + ":")) {
            throw new IllegalArgumentException("a cluster places keys itself: RedisClusterTest loads its own data");
        }
        List<InetSocketAddress> shards = servers.addresses();
        load(shards, Collections.nCopies(shards.size(), ""), only);
    }

    private static void load(List<InetSocketAddress> shards, List<String> tags, int[] only) {
        int[] which = only.length == 0 ? IntStream.range(0, shards.size()).toArray() : only;
        RedisClient client = RedisClient.create();
        try {
            for (int s : which) {
                InetSocketAddress a = shards.get(s);
                String tag = tags.get(s);
                try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE, RedisURI.builder()
                        .withHost(a.getHostString()).withPort(a.getPort()).withTimeout(Duration.ofSeconds(20)).build())) {
                    Map<byte[], byte[]> kv = new LinkedHashMap<>();
                    for (int i = 0; i < KEYS; i++) {
                        kv.put(key(tag, i), value(s, i));
                    }
                    String ok = c.sync().mset(kv);
                    if (!"OK".equals(ok)) {
                        throw new IllegalStateException("MSET on shard " + s + ": " + ok);
                    }
                    for (int r = 0; r < RECS; r++) {
                        Map<byte[], byte[]> fields = new LinkedHashMap<>();
                        for (int f = 0; f < FIELDS; f++) {
                            fields.put(field(f), fieldValue(s, r, f));
                        }
                        c.sync().hset(rec(tag, r), fields);
                    }
                    if (c.sync().dbsize() < KEYS + RECS) {
                        throw new IllegalStateException("shard " + s + " holds " + c.sync().dbsize() + " keys after loading");
                    }
                }
            }
        } finally {
            client.shutdown(0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * One command of the test mix: built for a shard's key tag, with the reply it must get on shard
     * {@code s} (in {@link #canon} form).
     */
    record Probe(String name, Function<String, RedisCommand<?>> command, BiFunction<String, Integer, Object> expected) {

        RedisCommand<?> command(String tag) {
            return command.apply(tag);
        }

        Object expected(String tag, int shard) {
            return expected.apply(tag, shard);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** {@code GET k:<i>}: the value, or {@code null} for {@code i >= KEYS}. */
    static Probe get(int i) {
        return new Probe("GET k:" + i, t -> B.get(key(t, i)), (t, s) -> i < KEYS ? str(value(s, i)) : null);
    }

    /** {@code HGET rec:<r> f<f>}. */
    static Probe hget(int r, int f) {
        return new Probe("HGET rec:" + r + " f" + f, t -> B.hget(rec(t, r), field(f)), (t, s) -> str(fieldValue(s, r, f)));
    }

    /** {@code HMGET rec:<r> f0 .. f9}: the whole record. */
    static Probe hmget(int r) {
        byte[][] fs = IntStream.range(0, FIELDS).mapToObj(TestData::field).toArray(byte[][]::new);
        return new Probe("HMGET rec:" + r, t -> B.hmget(rec(t, r), fs), (t, s) -> IntStream.range(0, FIELDS)
                .mapToObj(f -> str(fieldValue(s, r, f))).toList());
    }

    /** {@code MGET} of {@code count} keys from {@code k:<from>}, wrapping at {@link #KEYS}. */
    static Probe mget(int from, int count) {
        int[] idx = IntStream.range(0, count).map(j -> (from + j) % KEYS).toArray();
        return mgetOf("MGET " + count + " keys from k:" + from, idx);
    }

    /** {@code MGET} of the keys {@code k:<idx>} (an index {@code >= KEYS} has no value). */
    static Probe mgetOf(int... idx) {
        return mgetOf("MGET k:" + java.util.Arrays.toString(idx), idx);
    }

    private static Probe mgetOf(String name, int[] idx) {
        return new Probe(name, t -> B.mget(IntStream.of(idx).mapToObj(i -> key(t, i)).toArray(byte[][]::new)),
                (t, s) -> IntStream.of(idx).mapToObj(i -> i < KEYS ? str(value(s, i)) : null).toList());
    }

    /** The mix the identity tests send to every shard. */
    static final List<Probe> PROBES = List.of(
            get(0),
            get(42),
            get(KEYS - 1),
            get(KEYS + 1),                 // a missing key: a null reply, not an error
            hget(3, 9),
            hmget(7),                      // a whole record
            mget(95, 10),
            mget(0, KEYS),                 // every key: a ~100 kB reply
            mget(3, 10 * KEYS),            // wraps ten times: a ~1 MB reply
            mgetOf(5, KEYS + 5, 6));       // a missing key among present ones
}
