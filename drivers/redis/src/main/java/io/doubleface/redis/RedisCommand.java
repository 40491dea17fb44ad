package io.doubleface.redis;

import io.doubleface.driver.Command;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One Redis command for a {@code redis://} backend, whose reply is a {@code V}: any command Redis
 * knows, sent through Lettuce's {@code dispatch} on the loop's connection to the shard. Build it
 * with {@link Redis} — typed helpers for the common commands and
 * {@link Redis#raw raw} for every other.
 *
 * <p>Immutable and reusable: a command keeps its arguments and makes a fresh Lettuce
 * {@link CommandOutput} and {@link CommandArgs} per send, so one instance may be sent from many
 * loops at once. Keys and values are encoded, and the reply decoded, with the codec of the
 * {@link Redis} that built it ({@code byte[]} or UTF-8 strings, or one of your own).
 *
 * <p>A Redis error reply ({@code WRONGTYPE …}, {@code NOSCRIPT …}) fails the call with
 * {@link io.doubleface.driver.ShardException.Kind#SHARD_ERROR} and Redis's message.
 *
 * @param <V> the reply type
 */
public final class RedisCommand<V> implements Command<V> {

    private final ProtocolKeyword type;
    private final RedisCodec<?, ?> codec;
    private final Consumer<CommandArgs<?, ?>> args;
    private final Function<RedisCodec<?, ?>, CommandOutput<?, ?, V>> output;
    private final boolean bulkSlice;
    private final byte[] encoded;

    <K, W> RedisCommand(ProtocolKeyword type, RedisCodec<K, W> codec, Consumer<CommandArgs<K, W>> args,
            Function<RedisCodec<K, W>, CommandOutput<K, W, V>> output) {
        this(type, codec, args, output, false, null);
    }

    /**
     * @param bulkSlice the reply is a bulk string (or nil) handed on as a {@code ByteBuf} slice of the
     *     received bytes by the native client; {@code output} is used on Lettuce connections
     * @param encoded the whole command in RESP, the same bytes {@code args} encode to, for the native
     *     client to write in one piece; or {@code null}
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    <K, W> RedisCommand(ProtocolKeyword type, RedisCodec<K, W> codec, Consumer<CommandArgs<K, W>> args,
            Function<RedisCodec<K, W>, CommandOutput<K, W, V>> output, boolean bulkSlice, byte[] encoded) {
        this.type = Objects.requireNonNull(type, "type");
        this.codec = Objects.requireNonNull(codec, "codec");
        this.args = (Consumer) Objects.requireNonNull(args, "args");
        this.output = (Function) Objects.requireNonNull(output, "output");
        this.bulkSlice = bulkSlice;
        this.encoded = encoded;
    }

    /** The command in RESP, written by the native client as it is; {@code null} if it encodes its arguments per send. */
    byte[] encoded() {
        return encoded;
    }

    /** Whether the native client hands the bulk-string reply on as a slice ({@link Redis#getBuffer}). */
    boolean bulkSlice() {
        return bulkSlice;
    }

    /** {@return the command keyword, e.g. {@code SMEMBERS}} */
    public ProtocolKeyword type() {
        return type;
    }

    /** Fresh arguments for one send. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    CommandArgs<Object, Object> newArgs() {
        CommandArgs a = new CommandArgs(codec);
        args.accept(a);
        return a;
    }

    /** A fresh output for one send. */
    @SuppressWarnings("unchecked")
    CommandOutput<Object, Object, V> newOutput() {
        return (CommandOutput<Object, Object, V>) output.apply(codec);
    }

    @Override
    public String toString() {
        return type.toString() + " " + newArgs().toCommandString();
    }
}
