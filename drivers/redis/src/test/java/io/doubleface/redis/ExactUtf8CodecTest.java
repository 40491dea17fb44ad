package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link ExactUtf8Codec} puts the same bytes on the wire as Lettuce's own UTF-8 codec — for ASCII,
 * multi-byte characters, surrogate pairs, unpaired surrogates and random strings — written
 * straight into the command's buffer.
 */
class ExactUtf8CodecTest {

    static byte[] encode(StringCodec codec, String key, String value) {
        ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer();
        try {
            new CommandArgs<>(codec).addKey(key).addValue(value).encode(out);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    static void same(String key, String value) {
        assertArrayEquals(encode(StringCodec.UTF8, key, value), encode(ExactUtf8Codec.INSTANCE, key, value),
                () -> "key " + key + " value " + value);
    }

    @Test
    void theBytesOnTheWireAreLettucesForEveryKindOfString() {
        String[] samples = {"", "key:42", "é", "✓ check", "😀 emoji", "\uD800 unpaired high", "low \uDC00",
            "\uDBFF\uDFFF", "x".repeat(70_000), "ü".repeat(40_000)};
        for (String k : samples) {
            for (String v : samples) {
                same(k.isEmpty() ? "k" : k, v);
            }
        }
        SplittableRandom r = new SplittableRandom(42);
        for (int i = 0; i < 2000; i++) {
            char[] c = new char[r.nextInt(0, 40)];
            for (int j = 0; j < c.length; j++) {
                c[j] = (char) r.nextInt(0, 0x10000); // any UTF-16 unit, surrogates included
            }
            same("k" + i, new String(c));
        }
    }

    @Test
    void theEstimateIsTheExactLengthWritten() {
        for (String s : new String[] {"abc", "é✓😀", "\uD800?", ""}) {
            ByteBuf b = Unpooled.buffer();
            ExactUtf8Codec.INSTANCE.encodeValue(s, b);
            assertEquals(b.readableBytes(), ExactUtf8Codec.INSTANCE.estimateSize(s), s);
        }
    }

    /** Counts the buffers it hands out. */
    static final class CountingAllocator extends AbstractByteBufAllocator {
        int buffers;

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            buffers++;
            return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            buffers++;
            return new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }

    @Test
    void redisUtf8CommandsAreWrittenWithoutATemporaryBufferPerArgument() {
        CountingAllocator alloc = new CountingAllocator();
        ByteBuf out = alloc.heapBuffer(256);
        Redis.utf8().set("clé", "✓").newArgs().encode(out);
        assertEquals("$4\r\nclé\r\n$3\r\n✓\r\n", out.toString(java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(1, alloc.buffers, "only the command's own buffer");
        out.release();

        CountingAllocator lettuce = new CountingAllocator();
        ByteBuf ref = lettuce.heapBuffer(256);
        new CommandArgs<>(StringCodec.UTF8).addKey("clé").addValue("✓").encode(ref);
        assertEquals(3, lettuce.buffers, "Lettuce's own UTF-8 codec: one temporary buffer per argument");
        ref.release();
    }
}
