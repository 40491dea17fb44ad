package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * When the native client's reply decoder copies received bytes to the heap before framing them
 * ({@link RespReplyDecoder#copyToHeap}): small direct reads yes; heap buffers, reads over the limit
 * and reads that start with a large bulk string no. Correctness of the framing itself is tested
 * over real Redis ({@code RedisDriverTest}) and fuzzed ({@code RespNativeReplyFuzzTest}).
 */
class RespReplyDecoderCopyTest {

    private static ByteBuf direct(String s) {
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        return Unpooled.directBuffer(b.length).writeBytes(b);
    }

    @Test
    void smallDirectReadsAreCopied() {
        for (String s : new String[] {"$100\r\n" + "x".repeat(100) + "\r\n", "$999\r\nabc", "+OK\r\n", "$-1\r\n",
                "*2\r\n$5000\r\n", "$", "$12", ":1000\r\n", "-ERR 12345\r\n"}) {
            ByteBuf in = direct(s);
            try {
                assertTrue(RespReplyDecoder.copyToHeap(in), s);
            } finally {
                in.release();
            }
        }
    }

    @Test
    void theFirstPartOfALargeBulkStringIsNotCopied() {
        // a 20 kB value's reply: its first read (within the copy limit) is framed on the received buffer
        for (String s : new String[] {"$20000\r\n" + "x".repeat(8000), "$1000\r\n", "$1000", "$123456789\r\nab"}) {
            ByteBuf in = direct(s);
            try {
                assertFalse(RespReplyDecoder.copyToHeap(in), s);
                assertEquals(RespReplyDecoder.INCOMPLETE, RespReplyDecoder.frameEnd(in, in.readerIndex(), 0), s);
            } finally {
                in.release();
            }
        }
    }

    @Test
    void theDecisionReadsFromTheReaderIndexAndNeverMovesIt() {
        ByteBuf in = direct("+OK\r\n$20000\r\n");
        try {
            in.readerIndex(5);
            assertFalse(RespReplyDecoder.copyToHeap(in));
            assertEquals(5, in.readerIndex());
            in.readerIndex(0);
            assertTrue(RespReplyDecoder.copyToHeap(in), "a small reply first: copied as before");
        } finally {
            in.release();
        }
    }

    @Test
    void heapBuffersAndLargeReadsAreNeverCopied() {
        byte[] small = "$3\r\nabc\r\n".getBytes(StandardCharsets.US_ASCII);
        assertFalse(RespReplyDecoder.copyToHeap(Unpooled.wrappedBuffer(small)));
        ByteBuf big = Unpooled.directBuffer(RespReplyDecoder.COPY_LIMIT + 1);
        try {
            big.writeBytes("+OK\r\n".getBytes(StandardCharsets.US_ASCII)).writeZero(RespReplyDecoder.COPY_LIMIT - 4);
            assertFalse(RespReplyDecoder.copyToHeap(big));
        } finally {
            big.release();
        }
    }
}
