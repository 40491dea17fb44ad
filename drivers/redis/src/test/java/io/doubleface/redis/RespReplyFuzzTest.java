package io.doubleface.redis;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.RedisProtocolException;
import io.lettuce.core.protocol.RedisStateMachine;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.List;

/**
 * Coverage-guided fuzzing (Jazzer) of the RESP reply path of {@code redis://} backends: Lettuce's
 * decoder ({@link RedisStateMachine}, what the loop client's connection runs) filling the output of
 * each kind of {@link RedisCommand} the typed helpers build (bulk, integer, status, map, set, list,
 * scored list, and the raw form), with the received bytes as they may arrive from a broken or
 * hostile shard. A reply may be refused with one of the exceptions Lettuce's decoder and outputs
 * throw on purpose ({@link #REFUSALS}), which Lettuce's handler turns into a failed call and a reset
 * connection; anything else fails the test (an {@code IndexOutOfBoundsException},
 * {@code NullPointerException} or {@code ClassCastException} is a bug, not a refusal; no
 * {@code Error}, e.g. an array declared with 2³¹ elements must not be allocated up front), and no
 * buffer may leak.
 *
 * <p>Seeds: {@code src/test/resources/io/doubleface/redis/RespReplyFuzzTestInputs/};
 * {@code JAZZER_FUZZ=1} fuzzes (CI does, bounded).
 */
class RespReplyFuzzTest {

    private static final Redis<byte[], byte[]> R = Redis.bytes();
    private static final Redis<String, String> S = Redis.utf8();
    /** One command of each output kind the typed helpers build (also RespNativeReplyFuzzTest's). */
    static final List<RedisCommand<?>> COMMANDS = List.of(
            R.get("k".getBytes()), S.set("k", "v"), S.incr("k"), S.hgetall("h"), S.smembers("s"),
            S.zrangeWithScores("z", 0, -1), S.lrange("l", 0, -1), S.hget("h", "f"));

    /**
     * The exceptions Lettuce's decoder and outputs throw on purpose for a reply they cannot take
     * (also RespNativeReplyFuzzTest's): {@code RedisProtocolException} (a bad type byte or length,
     * from {@link RedisStateMachine}), {@code UnsupportedOperationException} (an output given a
     * value kind it does not take, e.g. a number to a bulk-string output), {@code
     * IllegalStateException} (a value out of place in a nested output) and {@code
     * IllegalArgumentException}, which includes the {@code NumberFormatException} of a score or
     * double that is not a number. (And one accident, see {@link #requireRefusal}.)
     */
    static final List<Class<? extends RuntimeException>> REFUSALS = List.of(
            RedisProtocolException.class, UnsupportedOperationException.class, IllegalStateException.class,
            IllegalArgumentException.class);

    /**
     * Rethrows {@code e} as a test failure unless it is one of {@link #REFUSALS}, or the known
     * accident of Lettuce's decoder: an {@code IndexOutOfBoundsException} thrown while
     * {@code RedisStateMachine} reads past its buffer or table on a malformed reply (a type byte of
     * {@code 0x80} or more indexes its table of reply types with a negative number; a bulk length
     * that is not a decimal number parses as a negative one and is read as such). Lettuce's handler fails the call and resets the connection
     * as for a refusal. One thrown from anywhere else (our code, an output) fails. (The tests run
     * with {@code -XX:-OmitStackTraceInFastThrow}, so the exception has its stack.)
     */
    static void requireRefusal(RuntimeException e) {
        if (REFUSALS.stream().anyMatch(c -> c.isInstance(e))) {
            return;
        }
        if (e instanceof IndexOutOfBoundsException && thrownBy(e, RedisStateMachine.class)) {
            return;
        }
        throw new AssertionError("not a refusal the decoder makes on purpose: " + e, e);
    }

    /** Whether the first frame of {@code e}'s stack outside Netty's buffers and the JDK is in {@code decoder}. */
    private static boolean thrownBy(RuntimeException e, Class<?> decoder) {
        for (StackTraceElement at : e.getStackTrace()) {
            String c = at.getClassName();
            if (!c.startsWith("io.netty.buffer.") && !c.startsWith("java.")) {
                return c.equals(decoder.getName());
            }
        }
        return false;
    }

    @FuzzTest(maxDuration = "60s")
    void anyReplyIsDecodedOrRefusedCleanly(byte[] input) {
        if (input.length == 0) {
            return;
        }
        // the first byte picks the command whose output the rest fills
        RedisCommand<?> command = COMMANDS.get(Math.floorMod(input[0], COMMANDS.size()));
        ByteBuf in = Unpooled.wrappedBuffer(input, 1, input.length - 1);
        RedisStateMachine rsm = new RedisStateMachine(ByteBufAllocator.DEFAULT);
        try {
            CommandOutput<Object, Object, ?> out = command.newOutput();
            // as the handler does: decode while whole replies are there
            while (in.isReadable() && rsm.decode(in, out)) {
                out.get();
                out = command.newOutput();
            }
        } catch (RuntimeException refused) {
            // Lettuce's CommandHandler fails the call and resets the connection
            requireRefusal(refused);
        } finally {
            rsm.close();
            in.release();
        }
    }
}
