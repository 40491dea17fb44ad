package io.doubleface.redis;

import io.doubleface.jmh.BenchmarkBase;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What writing one Redis command into the connection's buffer costs (the native RESP client's
 * {@link RespProtocol#encode}), command built included: a {@code GET} of a 7-character key (built once
 * as RESP by {@link Redis#get}; {@code getEncodedPerSend}: the same command with its arguments encoded
 * at the send) and a {@code SET} with a 100-byte value, built with {@link Redis#utf8()} ({@code codec = exact}: {@link ExactUtf8Codec}, the
 * header and bytes written straight into the buffer) or with Lettuce's own UTF-8 codec
 * ({@code codec = lettuce}: a temporary pooled buffer per argument, then a copy).
 *
 * <p>In package {@code io.doubleface.redis} because the encoder and the codec are package-private.
 */
@State(Scope.Thread)
public class RedisEncodeBenchmark extends BenchmarkBase {

    @Param({"exact", "lettuce"})
    public String codec;

    private Redis<String, String> redis;
    private ByteBuf out;
    private final String value = "v".repeat(100);
    private int n;

    @Setup(Level.Trial)
    public void setUp() {
        redis = codec.equals("exact") ? Redis.utf8() : Redis.of(StringCodec.UTF8);
        out = PooledByteBufAllocator.DEFAULT.directBuffer(64 * 1024);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        out.release();
    }

    @Benchmark
    public int get() {
        out.clear();
        RespProtocol.INSTANCE.encode(0, 0, redis.get("key:" + (n++ & 0xFF)), out);
        return out.writerIndex();
    }

    /** The same {@code GET} with its arguments encoded at the send, as every command was before {@code get} was built once. */
    @Benchmark
    public int getEncodedPerSend() {
        out.clear();
        String key = "key:" + (n++ & 0xFF);
        RespProtocol.INSTANCE.encode(0, 0, redis.raw(CommandType.GET, ValueOutput::new, a -> a.addKey(key)), out);
        return out.writerIndex();
    }

    @Benchmark
    public int set() {
        out.clear();
        RespProtocol.INSTANCE.encode(0, 0, redis.set("key:" + (n++ & 0xFF), value), out);
        return out.writerIndex();
    }
}
