package peers.ceiling;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * The bytes of a connection not parsed yet: what is left of earlier reads merged with the new read.
 * Never compacted in place, so slices retained from it stay valid.
 */
final class Cumulation {

    private ByteBuf buf;

    /** {@return the bytes to parse: {@code in} alone, or appended to what was left} */
    ByteBuf add(ByteBufAllocator alloc, ByteBuf in) {
        buf = buf == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(alloc, buf, in);
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
