package peers.ceiling;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import peers.PeerArgs;

/**
 * The hand-written ceiling (docs/benchmarks.md, "Peers and the ceiling"): Netty 4.2 and nothing else, as fast as we can make it.
 *
 * <ul>
 *   <li>One loop group (epoll) for HTTP and Redis. Each loop owns one connection to each shard,
 *       connected at startup and registered on that loop, so a request, its K calls and its reply never
 *       leave the loop that accepted the connection.
 *   <li>A request's K {@code GET}s are written (pre-encoded RESP bytes per key) into one pooled buffer per
 *       shard per loop iteration; each dirty shard connection is flushed once, in a tail task that runs
 *       at the end of the iteration ({@link SingleThreadEventLoop#executeAfterEventLoopIteration}).
 *   <li>RESP bulk replies are parsed by hand ({@link Shard}) and handed on as retained slices of the
 *       read buffer: no copy. The response is a {@code CompositeByteBuf} of a small header buffer and the
 *       K slices (written with one {@code writev}); responses are flushed once per connection per
 *       iteration, in the same tail task.
 *   <li>HTTP/1.1 keep-alive with pipelining: request heads are parsed by hand, in place in the read
 *       buffer ({@link RequestHead}: GET only, no bodies); each connection answers in request order
 *       ({@link HttpConn}). The responses are written by hand too (a pre-encoded header prefix).
 *   <li>The cluster workload ({@code PEER_CLUSTER=1}): the shards are the cluster's masters; the slot map
 *       is read once at start ({@link ClusterSlots}), each key's master computed once, and a request's K
 *       {@code GET}s go to the masters holding their keys. No redirect handling: the benchmark's cluster
 *       does not change while it runs.
 * </ul>
 */
public final class CeilingServer {

    private CeilingServer() {}

    public static void main(String[] argv) {
        try {
            PeerArgs args = PeerArgs.parse("ceiling", argv, " [composite]");
            if (args.extra().length > 0) {
                if (!args.extra()[0].equals("composite")) {
                    throw new IllegalArgumentException("expected: composite, got " + args.extra()[0]);
                }
                Cumulation.cumulator = io.netty.handler.codec.ByteToMessageDecoder.COMPOSITE_CUMULATOR;
            }
            run(args);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(PeerArgs args) throws InterruptedException, java.io.IOException {
        if (PeerArgs.cluster()) {
            Loop.routeByCluster(args.redisBasePort(), args.shards());
        }
        boolean epoll = Epoll.isAvailable();
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(args.ioThreads(),
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        Class<? extends SocketChannel> client = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        Class<? extends ServerChannel> server = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;

        Map<EventExecutor, Loop> loops = new IdentityHashMap<>();
        List<ChannelFuture> connects = new ArrayList<>();
        for (EventExecutor e : group) {
            EventLoop loop = (EventLoop) e;
            Loop l = new Loop((SingleThreadEventLoop) loop, args.shards());
            loops.put(loop, l);
            for (int i = 0; i < args.shards(); i++) {
                Shard shard = new Shard(l, i);
                l.shards[i] = shard;
                connects.add(new Bootstrap().group(loop).channel(client)
                        .option(ChannelOption.TCP_NODELAY, true)
                        .handler(shard)
                        .connect("127.0.0.1", args.shardPort(i)));
            }
        }
        for (ChannelFuture f : connects) {
            f.sync();
        }
        Channel listener = new ServerBootstrap().group(group).channel(server)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpConn(loops.get(ch.eventLoop())));
                    }
                })
                .bind("127.0.0.1", args.port()).sync().channel();
        args.ready("ceiling, netty " + PeerArgs.version("io.netty", "netty-transport")
                + ", " + (epoll ? "epoll" : "nio") + ", " + args.ioThreads() + " loops x " + args.shards() + " shard connections"
                + (Cumulation.cumulator == io.netty.handler.codec.ByteToMessageDecoder.COMPOSITE_CUMULATOR
                        ? ", composite cumulation" : ", merging cumulation")
                + (PeerArgs.cluster() ? ", cluster workload: keys placed by the slot map read at start" : ""));
        listener.closeFuture().sync();
    }
}
