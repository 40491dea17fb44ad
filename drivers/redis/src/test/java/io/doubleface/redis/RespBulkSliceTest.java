package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@link Redis#getBuffer} over the native client: {@link RespProtocol#reply} finds the value in a
 * framed bulk string from the frame's length alone, so every length around a change in its number
 * of digits, and headers the arithmetic does not explain, must still give exactly the value.
 */
class RespBulkSliceTest {

    private static final RedisCommand<?> GET_BUFFER = Redis.bytes().getBuffer(new byte[] {'k'});

    /** The frame {@code header + value + CRLF}, decoded by getBuffer's reply path, as a string (or null for nil). */
    private static String decode(String header, byte[] value) {
        byte[] h = header.getBytes(StandardCharsets.US_ASCII);
        ByteBuf in = Unpooled.directBuffer(h.length + value.length + 2);
        in.writeBytes(h).writeBytes(value).writeByte('\r').writeByte('\n');
        try {
            int end = RespReplyDecoder.frameEnd(in, 0, 0);
            assertEquals(in.writerIndex(), end, "framed whole: " + header.strip());
            Object reply = RespProtocol.INSTANCE.reply(GET_BUFFER, 0, in.retainedSlice(0, end), ByteBufAllocator.DEFAULT);
            if (reply == null) {
                return null;
            }
            ByteBuf slice = (ByteBuf) reply;
            try {
                return slice.toString(StandardCharsets.ISO_8859_1);
            } finally {
                slice.release();
            }
        } finally {
            assertEquals(1, in.refCnt(), "the frame released, the slice too");
            in.release();
        }
    }

    private static byte[] value(int n) {
        byte[] v = new byte[n];
        for (int i = 0; i < n; i++) {
            v[i] = (byte) (i % 7 == 3 ? '\r' : i % 7 == 4 ? '\n' : 'a' + i % 26); // CRLFs inside are data
        }
        return v;
    }

    @Test
    void everyLengthAroundADigitChangeGivesExactlyTheValue() {
        for (int base : new int[] {0, 10, 100, 1_000, 10_000, 100_000}) {
            for (int n = Math.max(0, base - 12); n <= base + 12; n++) {
                byte[] v = value(n);
                assertEquals(new String(v, StandardCharsets.ISO_8859_1), decode("$" + n + "\r\n", v), "length " + n);
            }
        }
    }

    @Test
    void nilIsNull() {
        byte[] none = new byte[0];
        ByteBuf in = Unpooled.copiedBuffer("$-1\r\n", StandardCharsets.US_ASCII);
        try {
            assertNull(RespProtocol.INSTANCE.reply(GET_BUFFER, 0, in.retainedSlice(), ByteBufAllocator.DEFAULT));
        } finally {
            in.release();
        }
        assertEquals("", decode("$0\r\n", none), "the empty value is not nil");
        assertNull(decode("$-0\r\n", none), "-0 (framed as a length of 0; the fuzzer's find): nil, as before");
        assertNull(decode("$-00\r\n", none));
    }

    @Test
    void headersWithLeadingZerosAreParsed() {
        assertEquals("hello", decode("$05\r\n", "hello".getBytes(StandardCharsets.US_ASCII)));
        assertEquals("hello world", decode("$0011\r\n", "hello world".getBytes(StandardCharsets.US_ASCII)));
        assertEquals("", decode("$00\r\n", new byte[0]));
        byte[] v = value(99);
        assertEquals(new String(v, StandardCharsets.ISO_8859_1), decode("$099\r\n", v));
    }

    @Test
    void lengthDigitsInvertsTheFrameLength() {
        for (long n = 0; n < 2_000_000; n += n < 20_000 ? 1 : 997) {
            int d = Long.toString(n).length();
            assertEquals(d, RespProtocol.lengthDigits((int) (5 + d + n)), "value length " + n);
        }
        assertEquals(0, RespProtocol.lengthDigits(5), "$-1\\r\\n: no value length fits");
        assertEquals(0, RespProtocol.lengthDigits(0));
    }
}
