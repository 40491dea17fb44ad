package io.doubleface.testing;

import io.doubleface.driver.Command;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The command of the framework's socket-free test drivers: read field {@code field} of key
 * {@code key}. Its reply ({@link #reply}) is {@value #REPLY_SIZE} bytes that are a function of
 * (key, field) alone: the key (8 bytes), the field (4 bytes), then letters.
 *
 * @param key the key, {@code >= 0}
 * @param field the field, {@code >= 0}
 */
public record TestRead(long key, int field) implements Command<ByteBuf> {

    /** Bytes of every reply: {@value}. */
    public static final int REPLY_SIZE = 112;

    public TestRead {
        if (key < 0 || field < 0) {
            throw new IllegalArgumentException("key " + key + ", field " + field + " (expected: >= 0)");
        }
    }

    /** {@return a read of {@code field} of {@code key}} */
    public static TestRead readField(long key, int field) {
        return new TestRead(key, field);
    }

    /** {@return a read of field 0 of {@code key}} */
    public static TestRead readRecord(long key) {
        return new TestRead(key, 0);
    }

    /** The reply to this read, in a new buffer the caller releases. */
    public ByteBuf reply() {
        ByteBuf b = ByteBufAllocator.DEFAULT.buffer(REPLY_SIZE);
        b.writeLong(key).writeInt(field);
        for (int i = 12; i < REPLY_SIZE; i++) {
            b.writeByte('a' + (int) ((key + field + i) % 26));
        }
        return b;
    }
}
