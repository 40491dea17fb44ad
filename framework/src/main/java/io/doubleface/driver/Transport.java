package io.doubleface.driver;

/**
 * The socket transport of a server's event loops (and of the loops a driver or leaf server opens):
 * {@code FanoutServer.Builder.transport}, {@code KvLeafServer.Builder.transport}, {@code --transport}.
 */
public enum Transport {
    /** epoll if the native library loads, else NIO. */
    AUTO,
    /** Linux epoll (netty-transport-native-epoll); refused where the native library does not load. */
    EPOLL,
    /** Java NIO: every platform. */
    NIO
}
