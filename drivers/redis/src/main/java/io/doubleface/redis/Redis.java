package io.doubleface.redis;


import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.output.BooleanOutput;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.DoubleOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.KeyListOutput;
import io.lettuce.core.output.MapOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueListOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.output.ValueSetOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandKeyword;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Builds {@link RedisCommand}s with one codec: {@link #utf8()} for {@code String} keys and values,
 * {@link #bytes()} for {@code byte[]}, {@link #of(RedisCodec)} for your own. Typed helpers cover the
 * common commands; {@link #raw} sends any other with the Lettuce output you pick.
 *
 * <pre>{@code
 * static final Redis<String, String> REDIS = Redis.utf8();
 * plan.call(cache, shard, REDIS.smembers("followers:" + user), (q, call, ids) -> ids);       // Set<String>
 * plan.call(cache, shard, REDIS.lpush("timeline:" + user, postId), (q, call, n) -> n);       // Long
 * plan.call(cache, shard, REDIS.raw(CommandType.PFCOUNT, IntegerOutput::new, a -> a.addKey("hll")), …);
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 *
 * @param <K> key type
 * @param <V> value type
 */
public final class Redis<K, V> {

    private static final Redis<String, String> UTF8 = new Redis<>(ExactUtf8Codec.INSTANCE);
    private static final Redis<byte[], byte[]> BYTES = new Redis<>(ByteArrayCodec.INSTANCE);

    private final RedisCodec<K, V> codec;

    private Redis(RedisCodec<K, V> codec) {
        this.codec = Objects.requireNonNull(codec, "codec");
    }

    /** {@return the builder of commands whose keys and values are UTF-8 strings (a shared instance)} */
    public static Redis<String, String> utf8() {
        return UTF8;
    }

    /**
     * {@return the builder of commands whose keys and values are byte arrays (no copy beyond Lettuce's
     * decoding; a shared instance)}
     */
    public static Redis<byte[], byte[]> bytes() {
        return BYTES;
    }

    /**
     * Keys and values through {@code codec} (it must be thread-safe).
     *
     * @param <K> key type
     * @param <V> value type
     * @param codec encodes keys and values and decodes replies, not {@code null}; used from every loop
     *     at once
     * @return a new builder of commands with {@code codec}
     * @throws NullPointerException if {@code codec} is {@code null}
     */
    public static <K, V> Redis<K, V> of(RedisCodec<K, V> codec) {
        return new Redis<>(codec);
    }

    /**
     * Any command: {@code type} (a {@link CommandType} or your own {@link ProtocolKeyword}), the
     * arguments written by {@code args}, and the reply read by the Lettuce output {@code output}
     * makes (e.g. {@code IntegerOutput::new}, {@code ValueListOutput::new}).
     *
     * @param <T> the reply type: what the output's {@code get()} returns
     * @param type the command keyword, not {@code null}
     * @param output makes a fresh Lettuce output for each send from this builder's codec, not {@code null}
     * @param args writes the command's arguments, not {@code null}; called again for every send (and by
     *     {@code toString}), possibly on several loops at once, so it must only add arguments
     * @return the command
     * @throws NullPointerException if an argument is {@code null}
     */
    public <T> RedisCommand<T> raw(ProtocolKeyword type, Function<RedisCodec<K, V>, CommandOutput<K, V, T>> output,
            Consumer<CommandArgs<K, V>> args) {
        return new RedisCommand<>(type, codec, args, output);
    }

    /**
     * {@code GET key}: the value, or {@code null}.
     *
     * @param key the key of a string value
     * @return the command; replies the value, or {@code null} if the key does not exist
     */
    public RedisCommand<V> get(K key) {
        return keyOnly(CommandType.GET, key, ValueOutput::new, false);
    }

    /**
     * {@code GET key}: the value as a {@link ByteBuf}, or {@code null} — for values handed on
     * without a copy. On a {@code connection=native} backend the buffer is a retained slice of the
     * bytes received from the shard (no copy at all); on a Lettuce connection it wraps a copy.
     *
     * <p>The reply is reference-counted: the framework releases it after the
     * {@link io.doubleface.api.ReplyHandler} returns, unless the handler returns it
     * ({@code (q, call, value) -> value}); then it is released when the round's merge returns, and a
     * response that keeps the bytes retains them:
     *
     * <pre>{@code
     * plan.call(redis, shard, REDIS.getBuffer(key), (q, call, value) -> value);
     * // merge: the values, uncopied, as the response body (a composite of retained slices)
     * CompositeByteBuf body = Unpooled.compositeBuffer(replies.size());
     * for (ByteBuf v : replies.values()) {
     *     body.addComponent(true, v.retain());
     * }
     * return body; // the HttpBinding's encode returns it as it is
     * }</pre>
     *
     * @param key the key of a string value
     * @return the command; replies the value, or {@code null} if the key does not exist
     */
    public RedisCommand<ByteBuf> getBuffer(K key) {
        return keyOnly(CommandType.GET, key, BufferOutput::new, true);
    }

    /**
     * A command of one key and no other argument, its RESP built once here: {@code *2}, the keyword,
     * the key as the codec encodes it. The native client then writes it with one copy instead of
     * encoding the arguments on the loop at every send; Lettuce connections use {@code args}.
     */
    private <T> RedisCommand<T> keyOnly(CommandType type, K key, Function<RedisCodec<K, V>, CommandOutput<K, V, T>> output,
            boolean bulkSlice) {
        Objects.requireNonNull(key, "key");
        byte[] kw = type.getBytes();
        byte[] kb = null;
        ByteBuffer k = null;
        int n;
        if (key instanceof byte[] raw && codec == BYTES.codec) {
            kb = raw;
            n = raw.length;
        } else {
            k = codec.encodeKey(key);
            n = k.remaining();
        }
        byte[] resp = new byte[4 + 1 + digits(kw.length) + 2 + kw.length + 2 + 1 + digits(n) + 2 + n + 2];
        int at = put(resp, 0, STAR_2);
        resp[at++] = '$';
        at = putDecimal(resp, at, kw.length);
        at = put(resp, at, CRLF);
        at = put(resp, at, kw);
        at = put(resp, at, CRLF);
        resp[at++] = '$';
        at = putDecimal(resp, at, n);
        at = put(resp, at, CRLF);
        if (kb != null) {
            System.arraycopy(kb, 0, resp, at, n);
        } else {
            k.get(k.position(), resp, at, n);
        }
        put(resp, at + n, CRLF);
        return new RedisCommand<>(type, codec, a -> a.addKey(key), output, bulkSlice, resp, at, n);
    }

    private static int digits(int v) {
        int d = 1;
        while (v >= 10) {
            v /= 10;
            d++;
        }
        return d;
    }

    private static int putDecimal(byte[] to, int at, int v) {
        int end = at + digits(v);
        for (int i = end - 1; i >= at; i--) {
            to[i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        return end;
    }

    private static final byte[] STAR_2 = {'*', '2', '\r', '\n'};
    private static final byte[] CRLF = {'\r', '\n'};

    private static int put(byte[] to, int at, byte[] bytes) {
        System.arraycopy(bytes, 0, to, at, bytes.length);
        return at + bytes.length;
    }

    /** A bulk string as a heap buffer (Lettuce connections; the native client slices instead). */
    private static final class BufferOutput<K, W> extends CommandOutput<K, W, ByteBuf> {
        BufferOutput(RedisCodec<K, W> codec) {
            super(codec, null);
        }

        @Override
        public void set(ByteBuffer bytes) {
            if (bytes == null) {
                output = null;
                return;
            }
            byte[] copy = new byte[bytes.remaining()];
            bytes.get(copy);
            output = Unpooled.wrappedBuffer(copy);
        }
    }

    /**
     * {@code MGET key…}: a value per key, {@code null} where the key has no value.
     *
     * @param keys the keys, at least one (Redis refuses {@code MGET} without keys); none {@code null}
     * @return the command; replies a value (or {@code null}) per key, in the order of {@code keys}
     * @throws NullPointerException if {@code keys} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<List<V>> mget(K... keys) {
        return mgetOf(List.of(keys));
    }

    @SuppressWarnings("unchecked")
    private RedisCommand<List<V>> mgetOf(List<K> ks) {
        return new RedisCommand<>(CommandType.MGET, codec, a -> a.addKeys(ks), ValueListOutput::new,
                new RedisCommand.MultiKey(ks, RedisCommand.Combine.IN_KEY_ORDER, part -> mgetOf((List<K>) part),
                        key -> get((K) key)));
    }

    /** A command over {@code ks} replying a count that is the sum over any split of the keys. */
    @SuppressWarnings("unchecked")
    private RedisCommand<Long> counted(CommandType type, List<K> ks) {
        return new RedisCommand<>(type, codec, a -> a.addKeys(ks), IntegerOutput::new,
                new RedisCommand.MultiKey(ks, RedisCommand.Combine.SUM, part -> counted(type, (List<K>) part), null));
    }

    /**
     * {@code EXISTS key…}: how many of the keys exist (a key named twice counts twice).
     *
     * @param keys the keys, at least one; none {@code null}
     * @return the command; replies the number of the keys that exist
     * @throws NullPointerException if {@code keys} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> exists(K... keys) {
        return counted(CommandType.EXISTS, List.of(keys));
    }

    /**
     * {@code UNLINK key…}: removes the keys, reclaiming their memory in the background.
     *
     * @param keys the keys, at least one; none {@code null}
     * @return the command; replies the number of keys that existed and were removed
     * @throws NullPointerException if {@code keys} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> unlink(K... keys) {
        return counted(CommandType.UNLINK, List.of(keys));
    }

    /**
     * {@code SET key value}: {@code "OK"}.
     *
     * @param key the key; an existing value of any type is replaced and its time to live cleared
     * @param value the value
     * @return the command; replies {@code "OK"}
     */
    public RedisCommand<String> set(K key, V value) {
        return raw(CommandType.SET, StatusOutput::new, a -> a.addKey(key).addValue(value));
    }

    /**
     * {@code DEL key…}: the number of keys removed.
     *
     * @param keys the keys, at least one; none {@code null}
     * @return the command; replies the number of keys that existed and were removed
     * @throws NullPointerException if {@code keys} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> del(K... keys) {
        return counted(CommandType.DEL, List.of(keys));
    }

    /**
     * {@code INCR key}: the new value.
     *
     * @param key the key of an integer value; a missing key counts as 0
     * @return the command; replies the value after the increment; a value that is not an integer fails the call
     *     with {@link io.doubleface.driver.ShardException.Kind#SHARD_ERROR}
     */
    public RedisCommand<Long> incr(K key) {
        return keyOnly(CommandType.INCR, key, IntegerOutput::new, false);
    }

    /**
     * {@code EXPIRE key seconds}: whether the timeout was set.
     *
     * @param key the key
     * @param seconds the time to live in seconds; Redis deletes the key at once if it is not positive
     * @return the command; replies {@code true} if the timeout was set, {@code false} if the key does not exist
     */
    public RedisCommand<Boolean> expire(K key, long seconds) {
        return raw(CommandType.EXPIRE, BooleanOutput::new, a -> a.addKey(key).add(seconds));
    }

    /**
     * {@code HGET key field}: the value, or {@code null}.
     *
     * @param key the key of a hash
     * @param field the field, encoded with the key codec
     * @return the command; replies the field's value, or {@code null} if the hash or the field does not exist
     */
    public RedisCommand<V> hget(K key, K field) {
        return raw(CommandType.HGET, ValueOutput::new, a -> a.addKey(key).addKey(field));
    }

    /**
     * {@code HMGET key field…}: a value per field, {@code null} where the field has no value.
     *
     * @param key the key of a hash
     * @param fields the fields, at least one, encoded with the key codec; none {@code null}
     * @return the command; replies a value (or {@code null}) per field, in the order of {@code fields}
     * @throws NullPointerException if {@code fields} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<List<V>> hmget(K key, K... fields) {
        List<K> fs = List.of(fields);
        return raw(CommandType.HMGET, ValueListOutput::new, a -> a.addKey(key).addKeys(fs));
    }

    /**
     * {@code HGETALL key}: every field and value.
     *
     * @param key the key of a hash
     * @return the command; replies every field and its value; an empty map if the key does not exist
     */
    public RedisCommand<Map<K, V>> hgetall(K key) {
        return keyOnly(CommandType.HGETALL, key, MapOutput::new, false);
    }

    /**
     * {@code HSET key field value}: whether the field is new.
     *
     * @param key the key of a hash; created if missing
     * @param field the field, encoded with the key codec
     * @param value the value
     * @return the command; replies {@code true} if the field is new, {@code false} if its value was replaced
     */
    public RedisCommand<Boolean> hset(K key, K field, V value) {
        return raw(CommandType.HSET, BooleanOutput::new, a -> a.addKey(key).addKey(field).addValue(value));
    }

    /**
     * {@code SMEMBERS key}: the members.
     *
     * @param key the key of a set
     * @return the command; replies the members, in no particular order; an empty set if the key does not exist
     */
    public RedisCommand<Set<V>> smembers(K key) {
        return keyOnly(CommandType.SMEMBERS, key, ValueSetOutput::new, false);
    }

    /**
     * {@code SADD key member…}: the number of members added.
     *
     * @param key the key of a set; created if missing
     * @param members the members, at least one; none {@code null}
     * @return the command; replies the number of members that were not in the set yet
     * @throws NullPointerException if {@code members} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> sadd(K key, V... members) {
        List<V> ms = List.of(members);
        return raw(CommandType.SADD, IntegerOutput::new, a -> a.addKey(key).addValues(ms));
    }

    /**
     * {@code ZADD key score member}: the number of members added.
     *
     * @param key the key of a sorted set; created if missing
     * @param score the member's score; an existing member's score is updated
     * @param member the member
     * @return the command; replies 1 if the member is new, 0 if only its score changed
     */
    public RedisCommand<Long> zadd(K key, double score, V member) {
        return raw(CommandType.ZADD, IntegerOutput::new, a -> a.addKey(key).add(score).addValue(member));
    }

    /**
     * {@code ZRANGE key start stop}: the members by rank.
     *
     * @param key the key of a sorted set
     * @param start the first rank, 0-based; negative counts from the end ({@code -1} is the last)
     * @param stop the last rank, inclusive; negative counts from the end
     * @return the command; replies the members by ascending score; empty if the range or the set is empty
     */
    public RedisCommand<List<V>> zrange(K key, long start, long stop) {
        return raw(CommandType.ZRANGE, ValueListOutput::new, a -> a.addKey(key).add(start).add(stop));
    }

    /**
     * {@code ZRANGE key start stop WITHSCORES}: the members with their scores, by rank.
     *
     * @param key the key of a sorted set
     * @param start the first rank, 0-based; negative counts from the end ({@code -1} is the last)
     * @param stop the last rank, inclusive; negative counts from the end
     * @return the command; replies the members with their scores, by ascending score
     */
    public RedisCommand<List<Scored<V>>> zrangeWithScores(K key, long start, long stop) {
        return raw(CommandType.ZRANGE, ScoredOutput::new,
                a -> a.addKey(key).add(start).add(stop).add(CommandKeyword.WITHSCORES));
    }

    /**
     * {@code ZREVRANGE key start stop}: the members by descending rank.
     *
     * @param key the key of a sorted set
     * @param start the first rank, 0-based from the highest score; negative counts from the end
     * @param stop the last rank, inclusive; negative counts from the end
     * @return the command; replies the members by descending score
     */
    public RedisCommand<List<V>> zrevrange(K key, long start, long stop) {
        return raw(CommandType.ZREVRANGE, ValueListOutput::new, a -> a.addKey(key).add(start).add(stop));
    }

    /**
     * {@code ZREVRANGE key start stop WITHSCORES}: the members with their scores, by descending rank.
     *
     * @param key the key of a sorted set
     * @param start the first rank, 0-based from the highest score; negative counts from the end
     * @param stop the last rank, inclusive; negative counts from the end
     * @return the command; replies the members with their scores, by descending score
     */
    public RedisCommand<List<Scored<V>>> zrevrangeWithScores(K key, long start, long stop) {
        return raw(CommandType.ZREVRANGE, ScoredOutput::new,
                a -> a.addKey(key).add(start).add(stop).add(CommandKeyword.WITHSCORES));
    }

    /**
     * {@code LRANGE key start stop}: the elements.
     *
     * @param key the key of a list
     * @param start the first index, 0-based; negative counts from the end ({@code -1} is the last)
     * @param stop the last index, inclusive; negative counts from the end ({@code 0, -1} is the whole list)
     * @return the command; replies the elements in list order; empty if the range or the list is empty
     */
    public RedisCommand<List<V>> lrange(K key, long start, long stop) {
        return raw(CommandType.LRANGE, ValueListOutput::new, a -> a.addKey(key).add(start).add(stop));
    }

    /**
     * {@code LPUSH key value…}: the length of the list after the push.
     *
     * @param key the key of a list; created if missing
     * @param values the values, at least one, pushed in turn onto the head (so the last ends up first);
     *     none {@code null}
     * @return the command; replies the length of the list after the push
     * @throws NullPointerException if {@code values} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> lpush(K key, V... values) {
        List<V> vs = List.of(values);
        return raw(CommandType.LPUSH, IntegerOutput::new, a -> a.addKey(key).addValues(vs));
    }

    /**
     * {@code RPUSH key value…}: the length of the list after the push.
     *
     * @param key the key of a list; created if missing
     * @param values the values, at least one, appended in turn at the tail; none {@code null}
     * @return the command; replies the length of the list after the push
     * @throws NullPointerException if {@code values} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> rpush(K key, V... values) {
        List<V> vs = List.of(values);
        return raw(CommandType.RPUSH, IntegerOutput::new, a -> a.addKey(key).addValues(vs));
    }

    /**
     * {@code LPOP key}: the first element, removed.
     *
     * @param key the key of a list
     * @return the command; replies the element, or {@code null} if the list is empty or missing
     */
    public RedisCommand<V> lpop(K key) {
        return keyOnly(CommandType.LPOP, key, ValueOutput::new, false);
    }

    /**
     * {@code RPOP key}: the last element, removed.
     *
     * @param key the key of a list
     * @return the command; replies the element, or {@code null} if the list is empty or missing
     */
    public RedisCommand<V> rpop(K key) {
        return keyOnly(CommandType.RPOP, key, ValueOutput::new, false);
    }

    /**
     * {@code LLEN key}: the length of the list.
     *
     * @param key the key of a list
     * @return the command; replies the length, 0 if the key does not exist
     */
    public RedisCommand<Long> llen(K key) {
        return keyOnly(CommandType.LLEN, key, IntegerOutput::new, false);
    }

    /**
     * {@code LTRIM key start stop}: keeps only the elements from {@code start} to {@code stop}.
     *
     * @param key the key of a list
     * @param start the first index kept, 0-based; negative counts from the end
     * @param stop the last index kept, inclusive; negative counts from the end
     * @return the command; replies {@code "OK"}
     */
    public RedisCommand<String> ltrim(K key, long start, long stop) {
        return raw(CommandType.LTRIM, StatusOutput::new, a -> a.addKey(key).add(start).add(stop));
    }

    /**
     * {@code INCRBY key increment}: the new value.
     *
     * @param key the key of an integer value; a missing key counts as 0
     * @param increment added to the value (negative to subtract)
     * @return the command; replies the value after the increment; a value that is not an integer fails
     *     the call with {@link io.doubleface.driver.ShardException.Kind#SHARD_ERROR}
     */
    public RedisCommand<Long> incrby(K key, long increment) {
        return raw(CommandType.INCRBY, IntegerOutput::new, a -> a.addKey(key).add(increment));
    }

    /**
     * {@code DECR key}: the new value.
     *
     * @param key the key of an integer value; a missing key counts as 0
     * @return the command; replies the value after the decrement
     */
    public RedisCommand<Long> decr(K key) {
        return keyOnly(CommandType.DECR, key, IntegerOutput::new, false);
    }

    /**
     * {@code SET key value EX seconds}: the value with a time to live.
     *
     * @param key the key; an existing value of any type is replaced
     * @param seconds the time to live in seconds, {@code > 0}
     * @param value the value
     * @return the command; replies {@code "OK"}
     * @throws IllegalArgumentException if {@code seconds} is not positive
     */
    public RedisCommand<String> setex(K key, long seconds, V value) {
        if (seconds <= 0) {
            throw new IllegalArgumentException("seconds: " + seconds + " (expected: > 0)");
        }
        return raw(CommandType.SET, StatusOutput::new, a -> a.addKey(key).addValue(value).add(CommandKeyword.EX).add(seconds));
    }

    /**
     * {@code SETNX key value}: sets the value only if the key does not exist.
     *
     * @param key the key
     * @param value the value
     * @return the command; replies {@code true} if the value was set, {@code false} if the key existed
     */
    public RedisCommand<Boolean> setnx(K key, V value) {
        return raw(CommandType.SETNX, BooleanOutput::new, a -> a.addKey(key).addValue(value));
    }

    /**
     * {@code TTL key}: the time to live left, in seconds.
     *
     * @param key the key
     * @return the command; replies the seconds left, {@code -1} if the key has no time to live,
     *     {@code -2} if it does not exist
     */
    public RedisCommand<Long> ttl(K key) {
        return keyOnly(CommandType.TTL, key, IntegerOutput::new, false);
    }

    /**
     * {@code PTTL key}: the time to live left, in milliseconds.
     *
     * @param key the key
     * @return the command; replies the milliseconds left, {@code -1} if the key has no time to live,
     *     {@code -2} if it does not exist
     */
    public RedisCommand<Long> pttl(K key) {
        return keyOnly(CommandType.PTTL, key, IntegerOutput::new, false);
    }

    /**
     * {@code PERSIST key}: removes the time to live.
     *
     * @param key the key
     * @return the command; replies {@code true} if a time to live was removed
     */
    public RedisCommand<Boolean> persist(K key) {
        return keyOnly(CommandType.PERSIST, key, BooleanOutput::new, false);
    }

    /**
     * {@code HINCRBY key field increment}: the field's new value.
     *
     * @param key the key of a hash; created if missing
     * @param field the field, encoded with the key codec; a missing field counts as 0
     * @param increment added to the field (negative to subtract)
     * @return the command; replies the field's value after the increment; a field that is not an
     *     integer fails the call with {@link io.doubleface.driver.ShardException.Kind#SHARD_ERROR}
     */
    public RedisCommand<Long> hincrby(K key, K field, long increment) {
        return raw(CommandType.HINCRBY, IntegerOutput::new, a -> a.addKey(key).addKey(field).add(increment));
    }

    /**
     * {@code HDEL key field…}: the number of fields removed.
     *
     * @param key the key of a hash
     * @param fields the fields, at least one, encoded with the key codec; none {@code null}
     * @return the command; replies the number of fields that existed and were removed
     * @throws NullPointerException if {@code fields} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> hdel(K key, K... fields) {
        List<K> fs = List.of(fields);
        return raw(CommandType.HDEL, IntegerOutput::new, a -> a.addKey(key).addKeys(fs));
    }

    /**
     * {@code HEXISTS key field}: whether the field exists.
     *
     * @param key the key of a hash
     * @param field the field, encoded with the key codec
     * @return the command; replies {@code true} if the hash has the field
     */
    public RedisCommand<Boolean> hexists(K key, K field) {
        return raw(CommandType.HEXISTS, BooleanOutput::new, a -> a.addKey(key).addKey(field));
    }

    /**
     * {@code HLEN key}: the number of fields.
     *
     * @param key the key of a hash
     * @return the command; replies the number of fields, 0 if the key does not exist
     */
    public RedisCommand<Long> hlen(K key) {
        return keyOnly(CommandType.HLEN, key, IntegerOutput::new, false);
    }

    /**
     * {@code HKEYS key}: the fields.
     *
     * @param key the key of a hash
     * @return the command; replies the fields, decoded with the key codec; empty if the key does not exist
     */
    public RedisCommand<List<K>> hkeys(K key) {
        return keyOnly(CommandType.HKEYS, key, KeyListOutput::new, false);
    }

    /**
     * {@code SREM key member…}: the number of members removed.
     *
     * @param key the key of a set
     * @param members the members, at least one; none {@code null}
     * @return the command; replies the number of members that were in the set and were removed
     * @throws NullPointerException if {@code members} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> srem(K key, V... members) {
        List<V> ms = List.of(members);
        return raw(CommandType.SREM, IntegerOutput::new, a -> a.addKey(key).addValues(ms));
    }

    /**
     * {@code SISMEMBER key member}: whether the member is in the set.
     *
     * @param key the key of a set
     * @param member the member
     * @return the command; replies {@code true} if it is a member
     */
    public RedisCommand<Boolean> sismember(K key, V member) {
        return raw(CommandType.SISMEMBER, BooleanOutput::new, a -> a.addKey(key).addValue(member));
    }

    /**
     * {@code SCARD key}: the number of members.
     *
     * @param key the key of a set
     * @return the command; replies the number of members, 0 if the key does not exist
     */
    public RedisCommand<Long> scard(K key) {
        return keyOnly(CommandType.SCARD, key, IntegerOutput::new, false);
    }

    /**
     * {@code ZREM key member…}: the number of members removed.
     *
     * @param key the key of a sorted set
     * @param members the members, at least one; none {@code null}
     * @return the command; replies the number of members removed
     * @throws NullPointerException if {@code members} or one of them is {@code null}
     */
    @SafeVarargs
    public final RedisCommand<Long> zrem(K key, V... members) {
        List<V> ms = List.of(members);
        return raw(CommandType.ZREM, IntegerOutput::new, a -> a.addKey(key).addValues(ms));
    }

    /**
     * {@code ZSCORE key member}: the member's score.
     *
     * @param key the key of a sorted set
     * @param member the member
     * @return the command; replies the score, or {@code null} if the member or the set does not exist
     */
    public RedisCommand<Double> zscore(K key, V member) {
        return raw(CommandType.ZSCORE, DoubleOutput::new, a -> a.addKey(key).addValue(member));
    }

    /**
     * {@code ZINCRBY key increment member}: the member's new score.
     *
     * @param key the key of a sorted set; created if missing
     * @param increment added to the score (a missing member counts as 0)
     * @param member the member
     * @return the command; replies the score after the increment
     */
    public RedisCommand<Double> zincrby(K key, double increment, V member) {
        return raw(CommandType.ZINCRBY, DoubleOutput::new, a -> a.addKey(key).add(increment).addValue(member));
    }

    /**
     * {@code ZCARD key}: the number of members.
     *
     * @param key the key of a sorted set
     * @return the command; replies the number of members, 0 if the key does not exist
     */
    public RedisCommand<Long> zcard(K key) {
        return keyOnly(CommandType.ZCARD, key, IntegerOutput::new, false);
    }

    /**
     * {@code ZRANGEBYSCORE key min max}: the members whose score is in {@code [min, max]}.
     *
     * @param key the key of a sorted set
     * @param min the lowest score, inclusive ({@link Double#NEGATIVE_INFINITY} for none)
     * @param max the highest score, inclusive ({@link Double#POSITIVE_INFINITY} for none)
     * @return the command; replies the members by ascending score
     */
    public RedisCommand<List<V>> zrangebyscore(K key, double min, double max) {
        return raw(CommandType.ZRANGEBYSCORE, ValueListOutput::new,
                a -> a.addKey(key).add(score(min)).add(score(max)));
    }

    private static String score(double d) {
        return d == Double.NEGATIVE_INFINITY ? "-inf" : d == Double.POSITIVE_INFINITY ? "+inf" : Double.toString(d);
    }

    /**
     * A member of a sorted set with its score, as {@link #zrangeWithScores} and
     * {@link #zrevrangeWithScores} reply them.
     *
     * @param <V> the member type
     * @param value the member
     * @param score its score ({@code ±Infinity} for {@code ±inf})
     */
    public record Scored<V>(V value, double score) {}

    /**
     * How {@link #eval} and {@link #evalsha} read a script's reply.
     */
    public enum ScriptReply {
        /** A Lua boolean (or integer 0/1): {@code Boolean}. */
        BOOLEAN,
        /** A Lua number: {@code Long}. */
        INTEGER,
        /** A status reply ({@code redis.status_reply}): {@code String}. */
        STATUS,
        /** A bulk string: the value type {@code V} ({@code null} for nil). */
        VALUE,
        /** A Lua table: {@code List<Object>}, nested as the table is. */
        MULTI
    }

    /** {@code WITHSCORES} replies as {@link Scored}: a member then its score (RESP2), or pairs (RESP3). */
    private static final class ScoredOutput<K, V> extends CommandOutput<K, V, List<Scored<V>>> {
        private boolean initialized;
        private boolean hasValue;
        private V value;

        ScoredOutput(RedisCodec<K, V> codec) {
            super(codec, java.util.Collections.emptyList());
        }

        @Override
        public void set(ByteBuffer bytes) {
            if (!hasValue) {
                value = bytes == null ? null : codec.decodeValue(bytes);
                hasValue = true;
                return;
            }
            String score = decodeString(bytes);
            set(switch (score) {
                case "inf", "+inf" -> Double.POSITIVE_INFINITY;
                case "-inf" -> Double.NEGATIVE_INFINITY;
                default -> Double.parseDouble(score);
            });
        }

        @Override
        public void set(double number) {
            output.add(new Scored<>(value, number));
            value = null;
            hasValue = false;
        }

        @Override
        public void multi(int count) {
            if (!initialized) {
                // the count comes from the shard's bytes: never size an allocation by it
                output = new java.util.ArrayList<>(Math.min(Math.max(count, 0), 1024));
                initialized = true;
            }
        }
    }

    /**
     * One page of a {@link #scan} over a shard's keys.
     *
     * @param <K> the key type
     * @param cursor where the next page starts; {@code "0"} when the iteration is over
     * @param keys this page's keys (possibly none, possibly some seen on an earlier page, as Redis says)
     */
    public record ScanPage<K>(String cursor, List<K> keys) {
        /** {@return whether this is the last page: the cursor is back to {@code "0"}} */
        public boolean finished() {
            return "0".equals(cursor);
        }
    }

    /**
     * {@code SCAN cursor [MATCH pattern] COUNT count}: one page of the keys of the shard the call is
     * sent to. Start with cursor {@code "0"} and send the returned cursor until {@link ScanPage#finished()}.
     * The command carries no key, so it is addressed by shard index (on a Redis Cluster, shard {@code i}
     * is the {@code i}-th master; scan each).
     *
     * @param cursor {@code "0"} to start, else the cursor of the previous page, not {@code null}
     * @param match a glob pattern the keys must match, or {@code null} for every key
     * @param count how much work Redis does per page (a hint, {@code > 0}; 10 by Redis's default)
     * @return the command; replies the page
     * @throws IllegalArgumentException if {@code count} is not positive
     */
    public RedisCommand<ScanPage<K>> scan(String cursor, String match, long count) {
        Objects.requireNonNull(cursor, "cursor");
        if (count <= 0) {
            throw new IllegalArgumentException("count: " + count + " (expected: > 0)");
        }
        return raw(CommandType.SCAN, ScanPageOutput::new, a -> {
            a.add(cursor);
            if (match != null) {
                a.add(CommandKeyword.MATCH).add(match);
            }
            a.add(CommandKeyword.COUNT).add(count);
        });
    }

    /** The reply of {@code SCAN}: the cursor, then the keys. */
    private static final class ScanPageOutput<K, V> extends CommandOutput<K, V, ScanPage<K>> {
        private String cursor;
        private final java.util.ArrayList<K> keys = new java.util.ArrayList<>();

        ScanPageOutput(RedisCodec<K, V> codec) {
            super(codec, null);
        }

        @Override
        public void set(ByteBuffer bytes) {
            if (cursor == null) {
                cursor = bytes == null ? "0" : java.nio.charset.StandardCharsets.US_ASCII.decode(bytes).toString();
            } else {
                keys.add(bytes == null ? null : codec.decodeKey(bytes));
            }
        }

        @Override
        public ScanPage<K> get() {
            return new ScanPage<>(cursor, java.util.Collections.unmodifiableList(keys));
        }
    }

    /**
     * {@code EVAL script numkeys key… arg…}: runs {@code script} (Lua) on the shard and reads its
     * reply as {@code type} says, as {@link #evalsha} does. Redis caches the script by its digest,
     * so sending the same text again costs its bytes, not a compilation; for long scripts on a hot
     * path, {@code SCRIPT LOAD} them on every shard and use {@link #evalsha}.
     *
     * @param <T> the reply type, as {@code type} says; not checked
     * @param script the Lua script, not {@code null}
     * @param type how to read the script's reply, not {@code null}
     * @param keys the script's keys ({@code KEYS}), possibly empty; none {@code null}
     * @param args the script's other arguments ({@code ARGV}), possibly none; none {@code null}
     * @return the command
     * @throws NullPointerException if an argument or an element of {@code keys} or {@code args} is
     *     {@code null}
     */
    @SafeVarargs
    public final <T> RedisCommand<T> eval(String script, ScriptReply type, K[] keys, V... args) {
        return script(CommandType.EVAL, java.util.Objects.requireNonNull(script, "script"), type, keys, args);
    }

    /**
     * {@code EVALSHA sha numkeys key… arg…}: the script's reply, read as {@code type} says
     * ({@code INTEGER} → {@code Long}, {@code VALUE} → {@code V}, {@code STATUS} → {@code String},
     * {@code BOOLEAN} → {@code Boolean}, {@code MULTI} → {@code List<Object>}).
     *
     * @param <T> the reply type, as {@code type} says; not checked (a wrong {@code T} fails with a
     *     {@link ClassCastException} where the reply is used)
     * @param sha the SHA1 digest of a script loaded with {@code SCRIPT LOAD}; an unknown one fails the
     *     call with {@code NOSCRIPT} ({@link io.doubleface.driver.ShardException.Kind#SHARD_ERROR})
     * @param type how to read the script's reply, not {@code null}
     * @param keys the script's keys ({@code KEYS}), possibly empty; none {@code null}
     * @param args the script's other arguments ({@code ARGV}), possibly none; none {@code null}
     * @return the command
     * @throws NullPointerException if an argument or an element of {@code keys} or {@code args} is
     *     {@code null}
     */
    @SafeVarargs
    @SuppressWarnings({"unchecked", "rawtypes"})
    public final <T> RedisCommand<T> evalsha(String sha, ScriptReply type, K[] keys, V... args) {
        return script(CommandType.EVALSHA, sha, type, keys, args);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <T> RedisCommand<T> script(CommandType command, String scriptOrSha, ScriptReply type, K[] keys,
            V[] args) {
        java.util.Objects.requireNonNull(scriptOrSha, "script");
        java.util.Objects.requireNonNull(type, "type");
        List<K> ks = List.of(keys);
        List<V> as = List.of(args);
        Function<RedisCodec<K, V>, CommandOutput<K, V, T>> out = switch (type) {
            case BOOLEAN -> c -> (CommandOutput) new BooleanOutput<>(c);
            case INTEGER -> c -> (CommandOutput) new IntegerOutput<>(c);
            case STATUS -> c -> (CommandOutput) new StatusOutput<>(c);
            case MULTI -> c -> (CommandOutput) new NestedMultiOutput<>(c);
            case VALUE -> c -> (CommandOutput) new ValueOutput<>(c);
        };
        return raw(command, out, a -> a.add(scriptOrSha).add(ks.size()).addKeys(ks).addValues(as));
    }
}
