// The per-request floor for bench/zero-call.sh: a raw Netty 4.2 HTTP/1.1 server with no framework,
// written the way Netty's own HttpHelloWorldServer example is (HttpServerCodec, keep-alive, a write
// per request and one flush per read batch in channelReadComplete), answering every request "ok\n".
//
//   java -cp cli/target/doubleface.jar bench/peers/RawNettyHttp.java PORT [IO_THREADS]
//
// Single-file source program: the shaded doubleface jar only provides the Netty classes.
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;

public final class RawNettyHttp {
    private static final byte[] OK = "ok\n".getBytes();

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        boolean epoll = Epoll.isAvailable();
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(threads,
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        try {
            new ServerBootstrap().group(group)
                    .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new HttpServerCodec(), new Hello());
                        }
                    })
                    .bind("127.0.0.1", port).sync();
            System.out.println("raw netty listening on 127.0.0.1:" + port + " (" + (epoll ? "epoll" : "nio") + ", "
                    + threads + " threads)");
            Thread.currentThread().join();
        } finally {
            group.shutdownGracefully();
        }
    }

    static final class Hello extends SimpleChannelInboundHandler<HttpObject> {
        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (msg instanceof HttpRequest req) {
                boolean keepAlive = HttpUtil.isKeepAlive(req);
                FullHttpResponse r = new DefaultFullHttpResponse(req.protocolVersion(), HttpResponseStatus.OK,
                        Unpooled.wrappedBuffer(OK));
                r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, OK.length);
                if (keepAlive) {
                    if (!req.protocolVersion().isKeepAliveDefault()) {
                        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                    }
                    ctx.write(r);
                } else {
                    r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                    ctx.write(r).addListener(io.netty.channel.ChannelFutureListener.CLOSE);
                }
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
