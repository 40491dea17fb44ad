package io.doubleface.mongo;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;

/**
 * The allocator the MongoDB driver's Netty transport gets: unpooled direct buffers (every kind of
 * request answers one) that Netty's leak detector does not track.
 *
 * <p>Why: the MongoDB driver drops buffers it owns in some races (docs/mongo.md lists them, with
 * the driver version they were found in). From a pooled allocator such a buffer is a leak of pool memory; from this
 * one it is a {@link java.nio.ByteBuffer#allocateDirect} buffer whose memory the GC's cleaner
 * frees, and doubleface's own buffers (the replies handed to
 * listeners, from {@link io.netty.buffer.PooledByteBufAllocator#DEFAULT}) stay leak-checked. The
 * cost: an unpooled direct allocation per read and write of the driver instead of a pooled one.
 *
 * <p>Thread-safe and stateless.
 */
final class DriverBufferAllocator implements ByteBufAllocator {

    static final DriverBufferAllocator INSTANCE = new DriverBufferAllocator();

    /** Largest composite the driver builds: {@value} components. */
    private static final int MAX_COMPONENTS = 1024;

    private DriverBufferAllocator() {}

    @Override
    public ByteBuf buffer() {
        return directBuffer();
    }

    @Override
    public ByteBuf buffer(int initialCapacity) {
        return directBuffer(initialCapacity);
    }

    @Override
    public ByteBuf buffer(int initialCapacity, int maxCapacity) {
        return directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf ioBuffer() {
        return directBuffer();
    }

    @Override
    public ByteBuf ioBuffer(int initialCapacity) {
        return directBuffer(initialCapacity);
    }

    @Override
    public ByteBuf ioBuffer(int initialCapacity, int maxCapacity) {
        return directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf heapBuffer() {
        return directBuffer();
    }

    @Override
    public ByteBuf heapBuffer(int initialCapacity) {
        return directBuffer(initialCapacity);
    }

    @Override
    public ByteBuf heapBuffer(int initialCapacity, int maxCapacity) {
        return directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf directBuffer() {
        return directBuffer(256);
    }

    @Override
    public ByteBuf directBuffer(int initialCapacity) {
        return directBuffer(initialCapacity, Integer.MAX_VALUE);
    }

    @Override
    public ByteBuf directBuffer(int initialCapacity, int maxCapacity) {
        return new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
    }

    @Override
    public CompositeByteBuf compositeBuffer() {
        return compositeDirectBuffer();
    }

    @Override
    public CompositeByteBuf compositeBuffer(int maxNumComponents) {
        return compositeDirectBuffer(maxNumComponents);
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer() {
        return compositeHeapBuffer(MAX_COMPONENTS);
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
        return compositeDirectBuffer(maxNumComponents);
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer() {
        return compositeDirectBuffer(MAX_COMPONENTS);
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
        return new CompositeByteBuf(this, true, Math.max(2, maxNumComponents));
    }

    @Override
    public boolean isDirectBufferPooled() {
        return false;
    }

    @Override
    public int calculateNewCapacity(int minNewCapacity, int maxCapacity) {
        return UnpooledByteBufAllocator.DEFAULT.calculateNewCapacity(minNewCapacity, maxCapacity);
    }
}
