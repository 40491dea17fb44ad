package io.doubleface.loadgen;

import io.doubleface.driver.Transport;
import io.doubleface.internal.loop.LoopGroup;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tiny HTTP/1.1 server for the generator's tests: answers {@code 200 ok} after {@link #delayMillis}
 * (or the path's own delay in {@link #delayMillisByPath}),
 * holds every answer due during a {@link #pause} until the pause ends (a stalled server), answers
 * {@code /status/NNN} with that status, and counts requests in flight (the most at once) and per path.
 * With {@link #dropEveryMillis} it closes a connection on a request instead of answering it (a server
 * closing an idle connection just as a request arrives).
 *
 * <p>Threading: setters from any thread; the handler runs on the server's loops.
 */
final class TestServer implements AutoCloseable {

    final LoopGroup loops = new LoopGroup("testsrv", 1, Transport.AUTO);
    final Channel channel;
    volatile long delayMillis;
    /** Per path (without the query): a delay that replaces {@link #delayMillis}. */
    final Map<String, Long> delayMillisByPath = new ConcurrentHashMap<>();
    /** System.nanoTime() until which no answer goes out. */
    volatile long pausedUntil;
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    final AtomicLong requests = new AtomicLong();
    final Map<String, AtomicLong> byPath = new ConcurrentHashMap<>();
    /**
     * If {@code > 0}: a request on a connection that has already been answered is, at most once per
     * this many ms, not answered: the connection closes instead. Counted in {@link #dropped}.
     */
    volatile long dropEveryMillis;
    final AtomicLong dropped = new AtomicLong();
    private final AtomicLong lastDrop = new AtomicLong(Long.MIN_VALUE / 2);

    TestServer() throws InterruptedException {
        channel = new ServerBootstrap().group(loops.group()).channel(loops.serverChannelClass())
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1024), new Handler());
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + ((InetSocketAddress) channel.localAddress()).getPort());
    }

    /** Holds every answer for {@code millis} from now. */
    void pause(long millis) {
        pausedUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    }

    private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        /** Requests this connection received before. */
        private int received;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            long every = dropEveryMillis;
            long t = System.nanoTime();
            long last = lastDrop.get();
            if (every > 0 && received++ > 0 && t - last >= TimeUnit.MILLISECONDS.toNanos(every)
                    && lastDrop.compareAndSet(last, t)) {
                dropped.incrementAndGet();
                ctx.close();
                return;
            }
            int now = inFlight.incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            requests.incrementAndGet();
            String uri = req.uri();
            int q = uri.indexOf('?');
            String path = q < 0 ? uri : uri.substring(0, q);
            byPath.computeIfAbsent(path, k -> new AtomicLong()).incrementAndGet();
            int status = uri.startsWith("/status/") ? Integer.parseInt(uri.substring(8, 11)) : 200;
            long wait = Math.max(0, pausedUntil - System.nanoTime()) + TimeUnit.MILLISECONDS.toNanos(
                    delayMillisByPath.getOrDefault(path, delayMillis));
            Runnable answer = () -> {
                FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
                        Unpooled.copiedBuffer(uri, StandardCharsets.US_ASCII));
                r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
                inFlight.decrementAndGet();
                ctx.writeAndFlush(r);
            };
            if (wait <= 0) {
                answer.run();
            } else {
                ctx.executor().schedule(answer, wait, TimeUnit.NANOSECONDS);
            }
        }
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        loops.close();
    }
}
