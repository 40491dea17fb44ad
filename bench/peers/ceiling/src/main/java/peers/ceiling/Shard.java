package peers.ceiling;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.ArrayDeque;

/**
 * One loop's connection to one shard: {@code GET}s are appended to one pooled buffer per iteration
 * (flushed by {@link Loop#run}); replies are parsed by hand (RESP bulk strings, nil, errors) and each
 * value is handed to its request as a retained slice of the read buffer. Redis answers in order, so the
 * waiting requests are a FIFO; a request's call to shard {@code i} is its part {@code i}.
 */
final class Shard extends ChannelInboundHandlerAdapter {

    private final Loop loop;
    private final int index;
    private final ArrayDeque<Req> waiting = new ArrayDeque<>();
    /** Cluster workload: the part of each waiting call (several parts of a request may go to one master), a FIFO ring. */
    private int[] parts = new int[64];
    private int partHead;
    private int partCount;
    private ChannelHandlerContext ctx;
    private ByteBuf out;
    private final Cumulation cumulation = new Cumulation();

    Shard(Loop loop, int index) {
        this.loop = loop;
        this.index = index;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** A call of the cluster workload: its reply is part {@code part} of {@code req}. */
    void send(Req req, byte[] command, int part) {
        if (partCount == parts.length) {
            int[] bigger = new int[parts.length * 2];
            for (int i = 0; i < partCount; i++) {
                bigger[i] = parts[(partHead + i) & (parts.length - 1)];
            }
            parts = bigger;
            partHead = 0;
        }
        parts[(partHead + partCount++) & (parts.length - 1)] = part;
        send(req, command);
    }

    /** The part of the oldest waiting call: its shard's index, or in the cluster workload the recorded part. */
    private int nextPart() {
        if (partCount == 0) {
            return index;
        }
        int p = parts[partHead];
        partHead = (partHead + 1) & (parts.length - 1);
        partCount--;
        return p;
    }

    void send(Req req, byte[] command) {
        if (out == null) {
            out = ctx.alloc().directBuffer(Math.max(256, command.length * 16));
            loop.dirty(this);
        }
        out.writeBytes(command);
        waiting.add(req);
    }

    void flush() {
        ByteBuf b = out;
        out = null;
        ctx.writeAndFlush(b, ctx.voidPromise());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf cum = cumulation.add(ctx.alloc(), (ByteBuf) msg);
        int r = cum.readerIndex();
        int w = cum.writerIndex();
        while (r < w) {
            int eol = cum.indexOf(r, w, (byte) '\n');
            if (eol < 0) {
                break;
            }
            byte type = cum.getByte(r);
            if (type == '$') {
                int len = parseInt(cum, r + 1, eol - 1);
                if (len < 0) { // nil: the key is missing
                    r = eol + 1;
                    waiting.poll().complete(nextPart(), null);
                    continue;
                }
                int start = eol + 1;
                if (w - start < len + 2) {
                    break; // the rest of the value has not arrived yet
                }
                r = start + len + 2;
                waiting.poll().complete(nextPart(), cum.retainedSlice(start, len));
            } else { // an error or an unexpected type: the call fails
                r = eol + 1;
                waiting.poll().complete(nextPart(), null);
            }
        }
        cumulation.consumed(r);
    }

    private static int parseInt(ByteBuf b, int from, int to) {
        boolean negative = b.getByte(from) == '-';
        int v = 0;
        for (int i = negative ? from + 1 : from; i < to; i++) {
            v = v * 10 + (b.getByte(i) - '0');
        }
        return negative ? -v : v;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        System.err.println("ceiling: shard " + index + " closed its connection; exiting");
        System.exit(1);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        cause.printStackTrace();
        ctx.close();
    }
}
