package io.doubleface.redis;

import io.doubleface.driver.spi.PipelinedConnection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Frames RESP2 replies on one connection of the native client ({@link RespProtocol}): each complete
 * reply goes to {@link PipelinedConnection#onReply} as a retained slice of the received bytes
 * (decoded later into the command's output), an error reply ({@code -ERR …}) to
 * {@link PipelinedConnection#onError} with its text; anything that is not RESP2 closes the
 * connection ({@link PipelinedConnection#onMalformed}). A partial reply waits for more bytes.
 *
 * <p>Bounds: a header line longer than {@value #MAX_LINE} bytes, a bulk string longer than Redis's
 * own limit ({@value #MAX_BULK} bytes), an array of more than {@value #MAX_ELEMENTS} elements or
 * nested deeper than {@value #MAX_DEPTH} levels is malformed.
 */
final class RespReplyDecoder extends ByteToMessageDecoder {

    static final int MAX_LINE = 64 * 1024;
    static final long MAX_BULK = 512L * 1024 * 1024;
    static final long MAX_ELEMENTS = 1L << 24;
    static final int MAX_DEPTH = 32;

    /** Received bytes copied to the heap to be framed and decoded there, at most: {@value}. */
    static final int COPY_LIMIT = 16 * 1024;

    /** {@link #frameEnd}: more bytes are needed. */
    static final int INCOMPLETE = -1;

    private final PipelinedConnection connection;

    RespReplyDecoder(PipelinedConnection connection) {
        this.connection = connection;
        // Replies are handed on as retained slices of the received buffers, so the cumulation is
        // usually shared when a read ends inside a reply; the default (merging) cumulator then copies
        // the unparsed rest and the whole new read into a freshly allocated buffer on every such read
        // (with large values, much of the loop's time, most of it allocating new direct memory;
        // docs/benchmarks.md). A composite cumulation appends the new read without a copy.
        setCumulator(COMPOSITE_CUMULATOR);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (!in.isReadable()) {
            return;
        }
        // Framing and Lettuce's decoder read byte by byte; on a direct buffer each read is a checked
        // access (without Unsafe, as on JDK 24+ by default), which showed in the mid-tier's profile
        // (docs/redis.md). So the received bytes are copied to the heap once per read and
        // framed and decoded there.
        // Only up to COPY_LIMIT readable bytes: a large reply arriving in many reads would otherwise be
        // copied again on each, and a large value is better sliced than copied once more (its framing
        // reads a few header bytes; copying larger reads cost throughput, docs/benchmarks.md), and
        // not when a large bulk string comes first (copyToHeap).
        ByteBuf heap = copyToHeap(in) ? Unpooled.wrappedBuffer(ByteBufUtil.getBytes(in)) : in.retain();
        int base = in.readerIndex() - heap.readerIndex(); // index in 'in' = index in 'heap' + base
        try {
            while (heap.isReadable()) {
                int start = heap.readerIndex();
                int end;
                try {
                    end = frameEnd(heap, start, 0);
                } catch (IllegalArgumentException e) {
                    in.skipBytes(in.readableBytes());
                    connection.onMalformed(ctx.channel(), e.getMessage());
                    return;
                }
                if (end == INCOMPLETE) {
                    return;
                }
                heap.readerIndex(end);
                in.readerIndex(end + base);
                int id = connection.nextReplyId(ctx.channel());
                if (id == 0) { // a channel the connection no longer uses
                    continue;
                }
                if (heap.getByte(start) == '-') {
                    String message = heap.toString(start + 1, end - start - 3, StandardCharsets.UTF_8);
                    connection.onError(ctx.channel(), id, "redis error: " + message);
                } else {
                    connection.onReply(ctx.channel(), id, heap.retainedSlice(start, end - start));
                }
            }
        } finally {
            heap.release();
        }
    }

    /**
     * Whether {@link #decode} copies {@code in}'s readable bytes to the heap to frame them there: a
     * direct buffer of at most {@link #COPY_LIMIT} readable bytes that does not start with a large
     * bulk string. A large value's reply usually arrives over several reads, the first of them
     * within the limit, and is framed from its header line alone: copied, its first part was
     * allocated and copied for nothing (at 5 x 20 kB values, ~2/3 of the server's heap allocation per
     * request and a young collection every 5 s at 1,900 requests/s).
     */
    static boolean copyToHeap(ByteBuf in) {
        return !in.hasArray() && in.readableBytes() <= COPY_LIMIT && !largeBulkFirst(in);
    }

    /** A bulk string of {@value #LARGE_BULK_DIGITS} or more length digits (1,000+ bytes) starts {@code in}. */
    static boolean largeBulkFirst(ByteBuf in) {
        int i = in.readerIndex();
        if (in.readableBytes() < LARGE_BULK_DIGITS + 1 || in.getByte(i) != '$') {
            return false;
        }
        for (int d = 1; d <= LARGE_BULK_DIGITS; d++) {
            byte c = in.getByte(i + d);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** Length digits from which {@link #largeBulkFirst} calls a bulk string large. */
    static final int LARGE_BULK_DIGITS = 4;

    /**
     * The index just past the complete RESP2 reply starting at {@code i}, or {@link #INCOMPLETE}.
     *
     * @throws IllegalArgumentException if the bytes are not RESP2 (the message says why)
     */
    static int frameEnd(ByteBuf b, int i, int depth) {
        int limit = b.writerIndex();
        if (i >= limit) {
            return INCOMPLETE;
        }
        byte type = b.getByte(i);
        int lf = b.indexOf(i + 1, Math.min(limit, i + 1 + MAX_LINE), (byte) '\n');
        if (lf < 0) {
            if (limit - i > MAX_LINE) {
                throw new IllegalArgumentException("a header line longer than " + MAX_LINE + " bytes");
            }
            return INCOMPLETE;
        }
        if (lf == i + 1 || b.getByte(lf - 1) != '\r') {
            throw new IllegalArgumentException("a line not ended by CRLF at offset " + (lf - b.readerIndex()));
        }
        switch (type) {
            case '+', '-' -> {
                return lf + 1;
            }
            case ':' -> {
                number(b, i + 1, lf - 1, "integer");
                return lf + 1;
            }
            case '$' -> {
                long n = number(b, i + 1, lf - 1, "bulk length");
                if (n == -1) {
                    return lf + 1;
                }
                if (n < 0 || n > MAX_BULK) {
                    throw new IllegalArgumentException("bulk length " + n + " (expected: -1.." + MAX_BULK + ")");
                }
                long end = lf + 1 + n + 2;
                if (end > limit) {
                    return INCOMPLETE;
                }
                if (b.getByte((int) end - 2) != '\r' || b.getByte((int) end - 1) != '\n') {
                    throw new IllegalArgumentException("a bulk string of " + n + " bytes not followed by CRLF");
                }
                return (int) end;
            }
            case '*' -> {
                long n = number(b, i + 1, lf - 1, "array length");
                if (n == -1) {
                    return lf + 1;
                }
                if (n < 0 || n > MAX_ELEMENTS) {
                    throw new IllegalArgumentException("array length " + n + " (expected: -1.." + MAX_ELEMENTS + ")");
                }
                if (depth >= MAX_DEPTH) {
                    throw new IllegalArgumentException("arrays nested deeper than " + MAX_DEPTH);
                }
                int j = lf + 1;
                for (long k = 0; k < n; k++) {
                    j = frameEnd(b, j, depth + 1);
                    if (j == INCOMPLETE) {
                        return INCOMPLETE;
                    }
                }
                return j;
            }
            default -> throw new IllegalArgumentException("reply type byte 0x" + Integer.toHexString(type & 0xff)
                    + " (expected RESP2: + - : $ *)");
        }
    }

    /** The decimal number in {@code [from, to)}. */
    private static long number(ByteBuf b, int from, int to, String what) {
        if (from >= to || to - from > 20) {
            throw new IllegalArgumentException(what + ": '" + b.toString(from, Math.max(0, Math.min(to - from, 24)),
                    StandardCharsets.US_ASCII) + "' (expected: a decimal number)");
        }
        boolean neg = b.getByte(from) == '-';
        int k = neg ? from + 1 : from;
        if (k == to) {
            throw new IllegalArgumentException(what + ": '-' (expected: a decimal number)");
        }
        long v = 0;
        for (; k < to; k++) {
            byte c = b.getByte(k);
            if (c < '0' || c > '9') {
                throw new IllegalArgumentException(what + ": '" + b.toString(from, to - from, StandardCharsets.US_ASCII)
                        + "' (expected: a decimal number)");
            }
            v = v * 10 + (c - '0');
            if (v < 0) {
                throw new IllegalArgumentException(what + ": out of range");
            }
        }
        return neg ? -v : v;
    }
}
