package io.doubleface.server.internal;

/**
 * Netty settings doubleface chooses where the user has not: applied as system properties, before
 * Netty's buffer allocator reads them (when its class is first initialised, once per JVM), so
 * {@link #apply()} runs from {@code FanoutServer}'s class initialisation and at the start of the
 * command line. A property the user set (e.g. {@code -Dio.netty.allocator.chunkReuseQueueCapacity=8})
 * is left as it is; if the allocator was initialised earlier (by code that used Netty before the
 * first {@code FanoutServer}), Netty's own default applies.
 *
 * <ul>
 *   <li>{@value #CHUNK_REUSE_PROPERTY} = {@value #CHUNK_REUSE_QUEUE} (Netty: twice the cores). The
 *       adaptive allocator keeps this many wholly free chunks for reuse and frees the rest. Values
 *       handed on uncopied ({@code Redis.getBuffer}) keep the read buffers they are slices of until
 *       the response is written, so more chunks are in use at once and fall free together; with the
 *       default queue, most were freed and new ones allocated, and on JDK 25 freeing a direct chunk
 *       closes its memory segment's shared arena, a handshake with every thread. Idle chunks in the
 *       queue are still purged by the allocator (docs/tracing.md, "Netty's direct-memory allocator").</li>
 * </ul>
 */
public final class NettyDefaults {

    /** The adaptive allocator's chunk reuse queue capacity, per magazine group: {@value}. */
    public static final String CHUNK_REUSE_PROPERTY = "io.netty.allocator.chunkReuseQueueCapacity";

    /** doubleface's default for {@link #CHUNK_REUSE_PROPERTY}: {@value}. */
    public static final int CHUNK_REUSE_QUEUE = 64;

    private NettyDefaults() {}

    /** Sets every property of this class that is not set yet; idempotent and thread-safe. */
    public static void apply() {
        synchronized (NettyDefaults.class) {
            if (System.getProperty(CHUNK_REUSE_PROPERTY) == null) {
                System.setProperty(CHUNK_REUSE_PROPERTY, Integer.toString(CHUNK_REUSE_QUEUE));
            }
        }
    }
}
