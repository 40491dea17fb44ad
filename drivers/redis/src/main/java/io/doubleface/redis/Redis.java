package io.doubleface.redis;

import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.BooleanOutput;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.KeyValueListOutput;
import io.lettuce.core.output.MapOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.output.ScoredValueListOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueListOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.output.ValueSetOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandKeyword;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.KeyValue;
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

    private static final Redis<String, String> UTF8 = new Redis<>(StringCodec.UTF8);
    private static final Redis<byte[], byte[]> BYTES = new Redis<>(ByteArrayCodec.INSTANCE);

    private final RedisCodec<K, V> codec;

    private Redis(RedisCodec<K, V> codec) {
        this.codec = Objects.requireNonNull(codec, "codec");
    }

    /** Keys and values as UTF-8 strings. */
    public static Redis<String, String> utf8() {
        return UTF8;
    }

    /** Keys and values as byte arrays (no copy beyond Lettuce's decoding). */
    public static Redis<byte[], byte[]> bytes() {
        return BYTES;
    }

    /** Keys and values through {@code codec} (it must be thread-safe). */
    public static <K, V> Redis<K, V> of(RedisCodec<K, V> codec) {
        return new Redis<>(codec);
    }

    /**
     * Any command: {@code type} (a {@link CommandType} or your own {@link ProtocolKeyword}), the
     * arguments written by {@code args}, and the reply read by the Lettuce output {@code output}
     * makes (e.g. {@code IntegerOutput::new}, {@code ValueListOutput::new}).
     */
    public <T> RedisCommand<T> raw(ProtocolKeyword type, Function<RedisCodec<K, V>, CommandOutput<K, V, T>> output,
            Consumer<CommandArgs<K, V>> args) {
        return new RedisCommand<>(type, codec, args, output);
    }

    /** {@code GET key}: the value, or {@code null}. */
    public RedisCommand<V> get(K key) {
        return raw(CommandType.GET, ValueOutput::new, a -> a.addKey(key));
    }

    /** {@code MGET key…}: a key-value pair per key, empty where the key has no value. */
    @SafeVarargs
    public final RedisCommand<List<KeyValue<K, V>>> mget(K... keys) {
        List<K> ks = List.of(keys);
        return raw(CommandType.MGET, c -> new KeyValueListOutput<>(c, ks), a -> a.addKeys(ks));
    }

    /** {@code SET key value}: {@code "OK"}. */
    public RedisCommand<String> set(K key, V value) {
        return raw(CommandType.SET, StatusOutput::new, a -> a.addKey(key).addValue(value));
    }

    /** {@code DEL key…}: the number of keys removed. */
    @SafeVarargs
    public final RedisCommand<Long> del(K... keys) {
        List<K> ks = List.of(keys);
        return raw(CommandType.DEL, IntegerOutput::new, a -> a.addKeys(ks));
    }

    /** {@code INCR key}: the new value. */
    public RedisCommand<Long> incr(K key) {
        return raw(CommandType.INCR, IntegerOutput::new, a -> a.addKey(key));
    }

    /** {@code EXPIRE key seconds}: whether the timeout was set. */
    public RedisCommand<Boolean> expire(K key, long seconds) {
        return raw(CommandType.EXPIRE, BooleanOutput::new, a -> a.addKey(key).add(seconds));
    }

    /** {@code HGET key field}: the value, or {@code null}. */
    public RedisCommand<V> hget(K key, K field) {
        return raw(CommandType.HGET, ValueOutput::new, a -> a.addKey(key).addKey(field));
    }

    /** {@code HMGET key field…}: a field-value pair per field, empty where the field has no value. */
    @SafeVarargs
    public final RedisCommand<List<KeyValue<K, V>>> hmget(K key, K... fields) {
        List<K> fs = List.of(fields);
        return raw(CommandType.HMGET, c -> new KeyValueListOutput<>(c, fs), a -> a.addKey(key).addKeys(fs));
    }

    /** {@code HGETALL key}: every field and value. */
    public RedisCommand<Map<K, V>> hgetall(K key) {
        return raw(CommandType.HGETALL, MapOutput::new, a -> a.addKey(key));
    }

    /** {@code HSET key field value}: whether the field is new. */
    public RedisCommand<Boolean> hset(K key, K field, V value) {
        return raw(CommandType.HSET, BooleanOutput::new, a -> a.addKey(key).addKey(field).addValue(value));
    }

    /** {@code SMEMBERS key}: the members. */
    public RedisCommand<Set<V>> smembers(K key) {
        return raw(CommandType.SMEMBERS, ValueSetOutput::new, a -> a.addKey(key));
    }

    /** {@code SADD key member…}: the number of members added. */
    @SafeVarargs
    public final RedisCommand<Long> sadd(K key, V... members) {
        List<V> ms = List.of(members);
        return raw(CommandType.SADD, IntegerOutput::new, a -> a.addKey(key).addValues(ms));
    }

    /** {@code ZADD key score member}: the number of members added. */
    public RedisCommand<Long> zadd(K key, double score, V member) {
        return raw(CommandType.ZADD, IntegerOutput::new, a -> a.addKey(key).add(score).addValue(member));
    }

    /** {@code ZRANGE key start stop}: the members by rank. */
    public RedisCommand<List<V>> zrange(K key, long start, long stop) {
        return raw(CommandType.ZRANGE, ValueListOutput::new, a -> a.addKey(key).add(start).add(stop));
    }

    /** {@code ZRANGE key start stop WITHSCORES}: the members with their scores, by rank. */
    public RedisCommand<List<ScoredValue<V>>> zrangeWithScores(K key, long start, long stop) {
        return raw(CommandType.ZRANGE, ScoredValueListOutput::new,
                a -> a.addKey(key).add(start).add(stop).add(CommandKeyword.WITHSCORES));
    }

    /** {@code ZREVRANGE key start stop}: the members by descending rank. */
    public RedisCommand<List<V>> zrevrange(K key, long start, long stop) {
        return raw(CommandType.ZREVRANGE, ValueListOutput::new, a -> a.addKey(key).add(start).add(stop));
    }

    /** {@code ZREVRANGE key start stop WITHSCORES}: the members with their scores, by descending rank. */
    public RedisCommand<List<ScoredValue<V>>> zrevrangeWithScores(K key, long start, long stop) {
        return raw(CommandType.ZREVRANGE, ScoredValueListOutput::new,
                a -> a.addKey(key).add(start).add(stop).add(CommandKeyword.WITHSCORES));
    }

    /** {@code LRANGE key start stop}: the elements. */
    public RedisCommand<List<V>> lrange(K key, long start, long stop) {
        return raw(CommandType.LRANGE, ValueListOutput::new, a -> a.addKey(key).add(start).add(stop));
    }

    /** {@code LPUSH key value…}: the length of the list after the push. */
    @SafeVarargs
    public final RedisCommand<Long> lpush(K key, V... values) {
        List<V> vs = List.of(values);
        return raw(CommandType.LPUSH, IntegerOutput::new, a -> a.addKey(key).addValues(vs));
    }

    /**
     * {@code EVALSHA sha numkeys key… arg…}: the script's reply, read as {@code type} says
     * ({@code INTEGER} → {@code Long}, {@code VALUE} → {@code V}, {@code STATUS} → {@code String},
     * {@code BOOLEAN} → {@code Boolean}, {@code MULTI} → {@code List<Object>}).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <T> RedisCommand<T> evalsha(String sha, ScriptOutputType type, K[] keys, V... args) {
        List<K> ks = List.of(keys);
        List<V> as = List.of(args);
        Function<RedisCodec<K, V>, CommandOutput<K, V, T>> out = switch (type) {
            case BOOLEAN -> c -> (CommandOutput) new BooleanOutput<>(c);
            case INTEGER -> c -> (CommandOutput) new IntegerOutput<>(c);
            case STATUS -> c -> (CommandOutput) new StatusOutput<>(c);
            case MULTI -> c -> (CommandOutput) new NestedMultiOutput<>(c);
            default -> c -> (CommandOutput) new ValueOutput<>(c);
        };
        return raw(CommandType.EVALSHA, out, a -> a.add(sha).add(ks.size()).addKeys(ks).addValues(as));
    }
}
