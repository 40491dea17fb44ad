package io.doubleface.server.internal;

import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.loop.LoopGroup;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.TimeUnit;

/**
 * The admin listener ({@link AdminHandler}: {@code /admin}, {@code /admin/stats}, {@code /metrics},
 * the probes, the knobs) on a loop of its own ({@code admin-0}), so that scraping stats never shows
 * up in the measured loops' counters. Off loopback it needs the admin token, for reads too.
 *
 * <p>Threading: thread-safe.
 */
public final class AdminListener {

    private final LoopGroup loop;
    private final Channel channel;

    private AdminListener(LoopGroup loop, Channel channel) {
        this.loop = loop;
        this.channel = channel;
    }

    /**
     * Starts the admin loop and binds the listener on {@code config}'s admin host and port.
     *
     * @param tls the TLS context (ALPN {@code http/1.1} only), or {@code null} for plain text
     * @throws IllegalStateException if the host is not loopback and there is no admin token, or the
     *     port cannot be bound
     */
    public static AdminListener start(ServerConfig config, SslContext tls, FanoutEngine engine, ServerMetrics metrics,
            ServerKnobs knobs) {
        String host = config.adminHost();
        int port = config.adminPort();
        LoopGroup group = new LoopGroup("admin", 1, config.transport());
        try {
            boolean loopback = isLoopback(host);
            if (!loopback && config.adminToken() == null) {
                throw new IllegalStateException("admin listener on " + host + " (not loopback) needs a token "
                        + "(Builder.adminToken, serve --admin-token-file)");
            }
            AdminHandler handler = new AdminHandler(engine, metrics, knobs, config.adminToken(), !loopback);
            ServerBootstrap sb = new ServerBootstrap()
                    .group(group.group())
                    .channel(group.serverChannelClass())
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            if (tls != null) {
                                ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                            }
                            ch.pipeline().addLast(
                                    new IdleStateHandler(0, 0, 60, TimeUnit.SECONDS),
                                    new HttpServerCodec(),
                                    new HttpObjectAggregator(8192),
                                    handler);
                        }
                    });
            Channel ch;
            try {
                ch = sb.bind(host, port).sync().channel();
            } catch (Exception e) {
                throw new IllegalStateException("cannot listen (admin) on " + host + ":" + port + ": " + e.getMessage(), e);
            }
            return new AdminListener(group, ch);
        } catch (RuntimeException e) {
            group.close();
            throw e;
        }
    }

    private static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException("admin host " + host + ": " + e.getMessage(), e);
        }
    }

    /** {@return the bound address} */
    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    /** Closes the listening socket (admin connections stay until {@link #closeLoop()}). */
    public void close() {
        channel.close().syncUninterruptibly();
    }

    /** Closes the admin loop, and with it the admin connections. */
    public void closeLoop() {
        loop.close();
    }
}
