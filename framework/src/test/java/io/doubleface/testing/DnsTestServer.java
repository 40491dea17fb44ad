package io.doubleface.testing;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.dns.DatagramDnsQuery;
import io.netty.handler.codec.dns.DatagramDnsQueryDecoder;
import io.netty.handler.codec.dns.DatagramDnsResponse;
import io.netty.handler.codec.dns.DatagramDnsResponseEncoder;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
import io.netty.handler.codec.dns.DnsQuestion;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.handler.codec.dns.DnsSection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A DNS server for tests, on a UDP port of 127.0.0.1, made with Netty's DNS codec: answers A and
 * SRV questions from records the test sets (and changes) while it runs, {@code NXDOMAIN} for any
 * other name. Records carry the TTL the test gives.
 */
public final class DnsTestServer implements AutoCloseable {

    /** An SRV record's target and port. */
    public record Srv(String target, int port) {}

    private final MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel channel;
    private final Map<String, List<InetAddress>> a = new ConcurrentHashMap<>();
    private final Map<String, List<Srv>> srv = new ConcurrentHashMap<>();
    private volatile long ttl = 1;
    private final AtomicLong queries = new AtomicLong();

    public DnsTestServer() {
        channel = new Bootstrap().group(group).channel(NioDatagramChannel.class)
                .handler(new ChannelInitializer<DatagramChannel>() {
                    @Override
                    protected void initChannel(DatagramChannel ch) {
                        ch.pipeline().addLast(new DatagramDnsQueryDecoder(), new DatagramDnsResponseEncoder(),
                                new SimpleChannelInboundHandler<DatagramDnsQuery>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, DatagramDnsQuery q) {
                                        answer(ctx, q);
                                    }
                                });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    }

    /** {@return where the server listens, for {@code dns-server=}} */
    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    /** Sets (replaces) the A records of {@code name}; none: the name has no A record (but exists). */
    public void a(String name, InetAddress... addresses) {
        a.put(key(name), List.of(addresses));
    }

    /** Sets (replaces) the SRV records of {@code name}. */
    public void srv(String name, Srv... records) {
        srv.put(key(name), List.of(records));
    }

    /** Sets the TTL of every answer from now on, in seconds. */
    public void ttl(long seconds) {
        this.ttl = seconds;
    }

    /** {@return the questions answered so far} */
    public long queries() {
        return queries.get();
    }

    private static String key(String name) {
        return name.endsWith(".") ? name : name + ".";
    }

    private void answer(ChannelHandlerContext ctx, DatagramDnsQuery q) {
        queries.incrementAndGet();
        DatagramDnsResponse r = new DatagramDnsResponse(q.recipient(), q.sender(), q.id());
        DnsQuestion question = q.recordAt(DnsSection.QUESTION);
        r.addRecord(DnsSection.QUESTION, question);
        String name = key(question.name());
        boolean known = a.containsKey(name) || srv.containsKey(name);
        if (!known) {
            r.setCode(DnsResponseCode.NXDOMAIN);
        } else if (question.type() == DnsRecordType.A) {
            for (InetAddress ip : a.getOrDefault(name, List.of())) {
                if (ip.getAddress().length == 4) {
                    r.addRecord(DnsSection.ANSWER, new DefaultDnsRawRecord(question.name(), DnsRecordType.A, ttl,
                            Unpooled.wrappedBuffer(ip.getAddress())));
                }
            }
        } else if (question.type() == DnsRecordType.SRV) {
            for (Srv s : srv.getOrDefault(name, List.of())) {
                ByteBuf c = Unpooled.buffer();
                c.writeShort(0).writeShort(1).writeShort(s.port());
                for (String label : key(s.target()).split("\\.")) {
                    byte[] b = label.getBytes(StandardCharsets.US_ASCII);
                    c.writeByte(b.length).writeBytes(b);
                }
                c.writeByte(0);
                r.addRecord(DnsSection.ANSWER, new DefaultDnsRawRecord(question.name(), DnsRecordType.SRV, ttl, c));
            }
        }
        ctx.writeAndFlush(r);
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
