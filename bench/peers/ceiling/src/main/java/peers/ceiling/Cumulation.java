package peers.ceiling;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * The bytes of a connection not parsed yet: what is left of earlier reads merged with the new read.
 * Never compacted in place, so slices retained from it stay valid.
 */
final class Cumulation {

    /**
     * How a read that ends inside a value is joined with the next: merged into one buffer (a copy of
     * the rest and of the next read whenever a value sliced from the buffer is still held), or, with
     * the server's {@code composite} argument, as components of a composite buffer (no copy).
     */
    static ByteToMessageDecoder.Cumulator cumulator = ByteToMessageDecoder.MERGE_CUMULATOR;

    private ByteBuf buf;

    /** {@return the bytes to parse: {@code in} alone, or appended to what was left} */
    ByteBuf add(ByteBufAllocator alloc, ByteBuf in) {
        buf = buf == null ? in : cumulator.cumulate(alloc, buf, in);
        return buf;
    }

    /** Everything before {@code readerIndex} was parsed; a fully parsed buffer is released. */
    void consumed(int readerIndex) {
        buf.readerIndex(readerIndex);
        if (!buf.isReadable()) {
            release();
        }
    }

    void release() {
        if (buf != null) {
            buf.release();
            buf = null;
        }
    }
}
