package peers.ceiling;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import peers.Workload;

/**
 * One client connection: a request head, parsed in place by {@link RequestHead}, becomes a {@link Req} queued in arrival order, its K calls
 * written to this loop's shards; answers leave in request order (pipelining-safe), each as a composite
 * of a header and the K value slices, flushed once per iteration by {@link Loop#run}.
 */
final class HttpConn extends ChannelInboundHandlerAdapter {

    private static final byte[] OK_HEAD = ascii("HTTP/1.1 200 OK\r\nContent-Type: " + Workload.CONTENT_TYPE + "\r\nContent-Length: ");
    private static final byte[] CLOSE = ascii("\r\nConnection: close");
    private static final byte[] KEEP_ALIVE = ascii("\r\nConnection: keep-alive");
    private static final byte[] END = ascii("\r\n\r\n");

    private final Loop loop;
    private final ArrayDeque<Req> inOrder = new ArrayDeque<>();
    private final RequestHead head = new RequestHead();
    private ChannelHandlerContext ctx;
    private final Cumulation cumulation = new Cumulation();
    private boolean dirty;
    private boolean closed;

    HttpConn(Loop loop) {
        this.loop = loop;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf cum = cumulation.add(ctx.alloc(), (ByteBuf) msg);
        int r = cum.readerIndex();
        int w = cum.writerIndex();
        while (r < w && !closed) {
            int end = head.parse(cum, r, w);
            if (end == RequestHead.INCOMPLETE) {
                break;
            }
            if (end == RequestHead.BAD) {
                badRequest();
                r = w;
                break;
            }
            r = end;
            request();
        }
        cumulation.consumed(r);
    }

    private void request() {
        Workload.Query q;
        try {
            q = Workload.parse(Workload.queryOf(head.target), Workload.maxFanout(loop.shards.length));
        } catch (IllegalArgumentException e) {
            badRequest();
            return;
        }
        Req r = new Req(this, q.fanout(), head.keepAlive, head.http10, 200);
        inOrder.add(r);
        if (Loop.owner != null) { // the cluster workload: K distinct keys, each to the master holding it
            int[] owner = Loop.owner[q.large() ? 1 : 0];
            for (int j = 0; j < q.fanout(); j++) {
                int k = (q.key() + j) % Workload.KEYS;
                loop.shards[owner[k]].send(r, Loop.getCommand(q.large(), k), j);
            }
            return;
        }
        byte[] get = Loop.getCommand(q);
        for (int i = 0; i < q.fanout(); i++) {
            loop.shards[i].send(r, get);
        }
    }

    private void badRequest() {
        inOrder.add(new Req(this, 0, false, false, 400));
        answerReady();
    }

    /** Writes every answered request at the head of the queue, in order. */
    void answerReady() {
        Req r;
        while ((r = inOrder.peek()) != null && r.remaining == 0) {
            inOrder.poll();
            if (closed) {
                r.release();
            } else {
                write(r);
            }
        }
    }

    private void write(Req r) {
        ByteBuf head = ctx.alloc().directBuffer(128);
        if (r.status != 200 || r.failed) {
            r.release();
            head.writeCharSequence("HTTP/1.1 " + (r.status != 200 ? "400 Bad Request" : "502 Bad Gateway")
                    + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", StandardCharsets.US_ASCII);
            closed = true;
            ctx.writeAndFlush(head).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        int length = 0;
        for (ByteBuf part : r.parts) {
            length += part.readableBytes();
        }
        head.writeBytes(OK_HEAD);
        writeDigits(head, length);
        if (!r.keepAlive) {
            head.writeBytes(CLOSE);
        } else if (r.http10) {
            head.writeBytes(KEEP_ALIVE);
        }
        head.writeBytes(END);
        CompositeByteBuf response = ctx.alloc().compositeDirectBuffer(r.parts.length + 1);
        response.addComponent(true, head);
        for (ByteBuf part : r.parts) {
            response.addComponent(true, part);
        }
        if (!r.keepAlive) {
            closed = true;
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.write(response, ctx.voidPromise());
        if (!dirty) {
            dirty = true;
            loop.dirty(this);
        }
    }

    private static void writeDigits(ByteBuf b, int v) {
        if (v >= 10) {
            writeDigits(b, v / 10);
        }
        b.writeByte('0' + v % 10);
    }

    void flush() {
        dirty = false;
        ctx.flush();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        cumulation.release();
        answerReady(); // releases what is already answered; the rest is released as it completes
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
