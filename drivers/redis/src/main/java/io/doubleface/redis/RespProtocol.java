package io.doubleface.redis;

import io.doubleface.driver.spi.PipelinedConnection;
import io.doubleface.driver.spi.PipelinedProtocol;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.protocol.RedisStateMachine;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * The native Redis client of {@code connection=native} ({@link RedisDriver}): RESP2 over the
 * shared pipelined loop client ({@link io.doubleface.driver.spi.PipelinedLoopClient}), so a command
 * costs what a KV call costs — its bytes appended to the connection's buffer of unwritten calls,
 * written once per loop iteration with the rest — instead of a trip through Lettuce's channel
 * pipeline (a write, a promise and a command-stack entry per command, a lock per dispatch).
 *
 * <p>Encoding: the command as a RESP array of bulk strings, the keyword then Lettuce's
 * {@link CommandArgs} of the command (so keys and values are encoded by the command's codec,
 * exactly as through Lettuce). Decoding: {@link RespReplyDecoder} frames each reply by hand and
 * hands it on as a retained slice; {@link #reply} runs Lettuce's {@link RedisStateMachine} over it
 * into the command's own {@link CommandOutput}, so every typed helper of {@link Redis} gives the
 * same value as over Lettuce. Replies come in call order (the connection numbers them,
 * {@link PipelinedConnection#nextReplyId}). An error reply fails the call with {@code SHARD_ERROR}
 * and Redis's message, as over Lettuce.
 *
 * <p>The connection speaks RESP2 and sends nothing but the commands (no {@code HELLO}, no
 * {@code AUTH}, no {@code SELECT}), so it serves {@code redis://} and {@code redis-cluster://} shards
 * without a password or a database number; {@code rediss://} stays on Lettuce. Stateless; one
 * instance serves every loop.
 */
enum RespProtocol implements PipelinedProtocol<RedisCommand<?>> {
    /** Plain connections (to masters, and every standalone shard). */
    INSTANCE,
    /**
     * Connections to Redis Cluster replicas for {@code read-from=replica…}: every new connection
     * starts with {@code READONLY} ({@link ReadOnlyHandshake}), so the replica serves reads of the
     * slots its master owns instead of redirecting them.
     */
    READ_ONLY;

    /** One decoder of replies per thread (they are loop threads): it keeps no state between replies. */
    private static final FastThreadLocal<RedisStateMachine> MACHINES = new FastThreadLocal<>() {
        @Override
        protected RedisStateMachine initialValue() {
            RedisStateMachine m = new RedisStateMachine(ByteBufAllocator.DEFAULT);
            m.setProtocolVersion(ProtocolVersion.RESP2);
            return m;
        }
    };

    private static final byte[] CRLF = {'\r', '\n'};

    @Override
    public String protocolName() {
        return "redis";
    }

    @Override
    public int initialOutputBytes() {
        return 512;
    }

    @Override
    public boolean repliesInOrder() {
        return true;
    }

    /** Reads (commands Redis Cluster lets a {@code READONLY} replica serve) may be sent twice. */
    @Override
    public boolean idempotent(RedisCommand<?> command) {
        return command.readOnly();
    }

    /**
     * In a group {@code master|replica|…} of standalone servers, reads go to any member and everything
     * else to the first, the master (a replica answers writes with {@code READONLY}).
     */
    @Override
    public boolean anyMember(RedisCommand<?> command) {
        return command.readOnly();
    }

    @Override
    public String refuse(RedisCommand<?> command) {
        return null;
    }

    @Override
    public void encode(int id, int shard, RedisCommand<?> command, ByteBuf out) {
        byte[] resp = command.encoded();
        if (resp != null) { // built once with the command (Redis#get and the other one-key commands)
            out.writeBytes(resp);
            return;
        }
        CommandArgs<Object, Object> args = command.newArgs();
        byte[] keyword = command.type().getBytes();
        out.writeByte('*');
        writeDecimal(out, 1 + args.count());
        out.writeBytes(CRLF);
        out.writeByte('$');
        writeDecimal(out, keyword.length);
        out.writeBytes(CRLF);
        out.writeBytes(keyword);
        out.writeBytes(CRLF);
        args.encode(out);
    }

    private static void writeDecimal(ByteBuf out, long v) {
        if (v >= 0 && v < 10) {
            out.writeByte('0' + (int) v);
        } else {
            out.writeCharSequence(Long.toString(v), java.nio.charset.StandardCharsets.US_ASCII);
        }
    }

    @Override
    public void initChannel(Channel channel, PipelinedConnection connection) {
        if (this == READ_ONLY) {
            channel.pipeline().addLast(new ReadOnlyHandshake());
        }
        channel.pipeline().addLast(new RespReplyDecoder(connection));
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Object reply(RedisCommand<?> command, int shard, Object decoded, ByteBufAllocator alloc) {
        ByteBuf frame = (ByteBuf) decoded;
        try {
            if (command.bulkSlice()) {
                return bulkSlice(command, frame);
            }
            CommandOutput output = command.newOutput();
            RedisStateMachine m = MACHINES.get();
            if (!m.decode(frame, output)) {
                m.reset();
                throw new IllegalStateException("incomplete reply to " + command.type());
            }
            if (output.hasError()) {
                throw new IllegalStateException("redis error: " + output.getError());
            }
            return output.get();
        } finally {
            frame.release();
        }
    }

    /**
     * The bulk string {@code $n\r\n…\r\n} that {@code frame} holds (framed and checked by
     * {@link RespReplyDecoder}) as a retained slice of it, without a copy; {@code null} for nil.
     *
     * <p>The framing has checked the whole frame, so the value's length follows from the frame's:
     * {@code 1 + d + 2 + n + 2} bytes, where {@code d} is the number of digits of {@code n}. Only one
     * {@code d} fits a given length; the byte after the digits must then be the header's {@code \r}.
     * That reads two bytes of the frame instead of scanning its header a second time. A header the
     * arithmetic does not explain (leading zeros, {@code -0}: valid to the framing, never sent by
     * Redis) is parsed, and a negative one is nil, as before.
     */
    private static ByteBuf bulkSlice(RedisCommand<?> command, ByteBuf frame) {
        int at = frame.readerIndex();
        if (frame.getByte(at) != '$') {
            throw new IllegalStateException("reply to " + command.type() + ": type byte '" + (char) frame.getByte(at)
                    + "' (expected a bulk string, '$')");
        }
        int length = frame.readableBytes();
        if (length == NIL_LENGTH) {
            return null; // $-1\r\n, no such key: the shortest bulk string with a value is $0\r\n\r\n
        }
        int digits = lengthDigits(length);
        if (digits > 0 && frame.getByte(at + 1 + digits) == '\r') {
            return frame.retainedSlice(at + 3 + digits, length - 5 - digits);
        }
        if (frame.getByte(at + 1) == '-') {
            return null; // $-0 and the like: the decoder admits no negative length but -1, and reads -0 as 0
        }
        int lf = frame.indexOf(at + 1, frame.writerIndex(), (byte) '\n');
        int n = 0;
        for (int i = at + 1; i < lf - 1; i++) {
            n = n * 10 + (frame.getByte(i) - '0');
        }
        return frame.retainedSlice(lf + 1, n);
    }

    /** The length of the nil bulk string {@code $-1\r\n}. */
    private static final int NIL_LENGTH = 5;

    /**
     * The number of length digits {@code d} of a bulk string frame of {@code length} bytes
     * ({@code length = 5 + d + n}, {@code n} having {@code d} decimal digits), or 0 if none fits.
     */
    static int lengthDigits(int length) {
        long bound = 10; // 10^d
        for (int d = 1; d <= 10; d++, bound *= 10) {
            long n = (long) length - 5 - d;
            if (n < 0) {
                return 0;
            }
            if (n < bound && (d == 1 || n >= bound / 10)) {
                return d;
            }
        }
        return 0;
    }
}
