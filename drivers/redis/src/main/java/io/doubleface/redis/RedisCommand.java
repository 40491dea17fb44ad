package io.doubleface.redis;

import io.doubleface.api.ShardRouting;
import io.lettuce.core.cluster.ClusterReadOnlyCommands;
import java.nio.ByteBuffer;
import java.util.List;

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
    /** The hash slot of the first key: {@link #SLOT_UNKNOWN} until computed, {@link #NO_KEY} for none. */
    private int slot;
    /** Where the first key starts in {@link #encoded} when a one-key command knows it; -1 otherwise. */
    private int keyAt = -1;
    /** The first key's length in {@link #encoded}, with {@link #keyAt}. */
    private int keyLength;
    /** The keys of a command a cluster client may split by slot ({@code MGET}, {@code DEL}, …); or {@code null}. */
    private final MultiKey multiKey;
    /** Each key's hash slot, for {@link #multiKey}; computed on first use (an idempotent race). */
    private int[] keySlots;

    /** {@link #slot()} not computed yet. */
    static final int SLOT_UNKNOWN = -2;
    /** {@link #slot()} of a command that carries no key. */
    static final int NO_KEY = -1;

    /** How the replies of a split multi-key command are put back together. */
    enum Combine {
        /** {@code MGET}: the parts' key-value lists, back in the order of the keys. */
        IN_KEY_ORDER,
        /** {@code DEL}, {@code EXISTS}, {@code UNLINK}, {@code TOUCH}: the sum of the parts' counts. */
        SUM
    }

    /**
     * The keys of a multi-key command, and how to make the same command over a subset of them.
     *
     * @param keys the command's keys, in its order
     * @param combine how the parts' replies make the whole reply
     * @param part the same command over some of the keys (in the order given)
     * @param single for {@link Combine#IN_KEY_ORDER}, the one-key command whose reply is the key's
     *     value ({@code GET} for {@code MGET}: its RESP is built once, cheaper than a one-key
     *     {@code MGET}); {@code null} to use {@code part} for a single key too
     */
    record MultiKey(List<?> keys, Combine combine, Function<List<Object>, RedisCommand<?>> part,
            Function<Object, RedisCommand<?>> single) {}

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
        this.slot = SLOT_UNKNOWN;
        this.multiKey = null;
    }

    /**
     * A command of one key whose encoded bytes hold the key at {@code keyAt} ({@link Redis}'s
     * one-key commands): its slot, needed by cluster clients only, is computed from those bytes on
     * first use.
     */
    <K, W> RedisCommand(ProtocolKeyword type, RedisCodec<K, W> codec, Consumer<CommandArgs<K, W>> args,
            Function<RedisCodec<K, W>, CommandOutput<K, W, V>> output, boolean bulkSlice, byte[] encoded, int keyAt,
            int keyLength) {
        this(type, codec, args, output, bulkSlice, encoded);
        this.keyAt = keyAt;
        this.keyLength = keyLength;
    }

    /** A multi-key command a cluster client splits by slot when its keys span several. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    <K, W> RedisCommand(ProtocolKeyword type, RedisCodec<K, W> codec, Consumer<CommandArgs<K, W>> args,
            Function<RedisCodec<K, W>, CommandOutput<K, W, V>> output, MultiKey multiKey) {
        this.type = Objects.requireNonNull(type, "type");
        this.codec = Objects.requireNonNull(codec, "codec");
        this.args = (Consumer) Objects.requireNonNull(args, "args");
        this.output = (Function) Objects.requireNonNull(output, "output");
        this.bulkSlice = false;
        this.encoded = null;
        this.slot = SLOT_UNKNOWN;
        this.multiKey = multiKey;
    }

    /**
     * The Redis Cluster hash slot of the command's first key ({@code CRC16} of the key as the
     * command's codec encodes it, honouring {@code {hash tags}}), what a cluster client routes the
     * command by; {@value #NO_KEY} if the command carries no key. Computed once per command.
     */
    int slot() {
        int s = slot;
        if (s == SLOT_UNKNOWN && keyAt >= 0) {
            s = ShardRouting.redisSlot(encoded, keyAt, keyLength);
            slot = s;
        } else if (s == SLOT_UNKNOWN) {
            ByteBuffer k = newArgs().getFirstEncodedKey();
            s = k == null ? NO_KEY : slotOf(k);
            slot = s;
        }
        return s;
    }

    /** {@return the keys of a command a cluster client may split by slot, or {@code null}} */
    MultiKey multiKey() {
        return multiKey;
    }

    /** {@return each key's slot, for a {@link #multiKey()} command} */
    @SuppressWarnings({"unchecked", "rawtypes"})
    int[] keySlots() {
        int[] s = keySlots;
        if (s == null) {
            List<?> keys = multiKey.keys();
            s = new int[keys.size()];
            for (int i = 0; i < s.length; i++) {
                Object k = keys.get(i);
                s[i] = k instanceof byte[] b && codec instanceof io.lettuce.core.codec.ByteArrayCodec ? ShardRouting.redisSlot(b) : slotOf(((RedisCodec) codec).encodeKey(k));
            }
            keySlots = s;
        }
        return s;
    }

    private static int slotOf(ByteBuffer key) {
        if (key.hasArray()) {
            return ShardRouting.redisSlot(key.array(), key.arrayOffset() + key.position(), key.remaining());
        }
        byte[] b = new byte[key.remaining()];
        key.duplicate().get(b);
        return ShardRouting.redisSlot(b);
    }

    /** Whether the command only reads (so a replica may serve it, {@code read-from=replica}). */
    boolean readOnly() {
        return ClusterReadOnlyCommands.isReadOnlyCommand(type);
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
