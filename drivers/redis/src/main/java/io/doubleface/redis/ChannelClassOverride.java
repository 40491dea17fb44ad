package io.doubleface.redis;

import io.netty.bootstrap.AbstractBootstrap;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import java.lang.reflect.Field;

/**
 * Replaces the channel class Lettuce set on a {@link Bootstrap} by the one our loop needs.
 *
 * <p>Why: Lettuce chooses the socket channel class once per JVM ({@code Transports.socketChannelClass()}:
 * {@code EpollSocketChannel} whenever native epoll works, unless {@code -Dio.lettuce.core.epoll=false})
 * and sets it on the bootstrap before the last hook we get ({@code NettyCustomizer.afterBootstrapInitialized}).
 * A per-loop client on a NIO loop in a JVM where epoll works would register an epoll channel on a
 * NIO loop, which Netty 4.2 refuses; and Netty's {@link AbstractBootstrap#channel} refuses to be
 * called twice ("channelFactory set already"). So, only in that mismatch, the bootstrap's
 * private {@code channelFactory} field is cleared by reflection and the right class set. If
 * reflection is not allowed, connecting fails with a message naming the two fixes: epoll loops
 * ({@code --transport epoll}/auto) or {@code -Dio.lettuce.core.epoll=false}.
 */
final class ChannelClassOverride {

    private static final Field CHANNEL_FACTORY;
    private static final Throwable UNAVAILABLE;

    static {
        Field f = null;
        Throwable cause = null;
        try {
            f = AbstractBootstrap.class.getDeclaredField("channelFactory");
            f.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            f = null;
            cause = e;
        }
        CHANNEL_FACTORY = f;
        UNAVAILABLE = cause;
    }

    private ChannelClassOverride() {}

    static void set(Bootstrap bootstrap, Class<? extends Channel> channelClass) {
        if (CHANNEL_FACTORY == null) {
            throw new IllegalStateException("Lettuce picked " + io.lettuce.core.resource.Transports.socketChannelClass()
                    .getSimpleName() + " but the loop needs " + channelClass.getSimpleName() + "; use epoll loops or run "
                    + "with -Dio.lettuce.core.epoll=false", UNAVAILABLE);
        }
        try {
            CHANNEL_FACTORY.set(bootstrap, null);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot replace the bootstrap's channel class", e);
        }
        bootstrap.channel(channelClass);
    }
}
