package io.doubleface.loadgen;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpResponseDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Recorder;

/**
 * The part of a run on one event loop: its share of the open-loop arrivals or of the closed-loop
 * users, its connections, and the requests waiting for one. See {@link LoadGenerator} for the
 * design.
 *
 * <p>Threading: everything runs on {@link #loop}; only {@link #start()} is called from elsewhere
 * (it hops onto the loop). Shared results go to the thread-safe {@link RunStats}.
 */
final class Worker {

    /** How often in-flight and queued requests are checked against the timeout: {@value} ms. */
    static final long SWEEP_MILLIS = 20;
    /** Pause before a closed-loop user reconnects after its connection failed: {@value} ms. */
    static final long RECONNECT_MILLIS = 100;

    private final LoadGenerator.Run run;
    private final EventLoop loop;
    private final RunStats stats;
    /** {@link RunStats#classLatency}: per mix template, or {@code null} for a single-template mix. */
    private final Recorder[] classLatency;
    private final Bootstrap bootstrap;
    private final Class<? extends SocketChannel> channelClass;
    private final int connectMillis;
    /** The mix as gRPC calls, or {@code null} for an HTTP target. */
    private final GrpcQueries grpc;
    private final SplittableRandom random;
    private final ArrivalGaps gaps;
    /** This worker's share of the schedule's rate (open loop). */
    private final double share;
    private final int maxConnections;
    private final int users;
    private final byte[][] requestHead;
    private final byte[] requestTail;

    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private final List<Connection> all = new ArrayList<>();
    /** Intended times of requests waiting for a connection, oldest first. */
    private final ArrayDeque<Long> waiting = new ArrayDeque<>();
    /** Intended times of requests to send again ({@link #closed}) waiting for a connection, served first. */
    private final ArrayDeque<Long> resends = new ArrayDeque<>();
    private int connections;
    /** Connections being opened (counted in {@link #connections} too). */
    private int connecting;
    /** Next arrival, ns from the schedule's start (open loop). */
    private long next;
    private boolean done;
    private final Runnable tick = this::tick;

    Worker(LoadGenerator.Run run, EventLoop loop, Class<? extends SocketChannel> channelClass, long seed,
            double share, int maxConnections, int users) {
        this.run = run;
        this.loop = loop;
        this.stats = run.stats;
        this.classLatency = run.stats.classLatency;
        this.random = new SplittableRandom(seed);
        this.gaps = new ArrivalGaps(random.split().nextLong(), run.generator.arrivals);
        this.share = share;
        this.maxConnections = maxConnections;
        this.users = users;
        LoadGenerator g = run.generator;
        this.connectMillis = (int) Math.min(g.timeout.toMillis(), LoadGenerator.CONNECT_TIMEOUT_MILLIS);
        this.channelClass = channelClass;
        this.grpc = g.grpc;
        this.bootstrap = new Bootstrap().group(loop).channel(channelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectMillis)
                .remoteAddress(run.address);
        List<RequestMix.Template> ts = g.mix.templates();
        this.requestHead = new byte[ts.size()][];
        for (int i = 0; i < ts.size(); i++) {
            requestHead[i] = (ts.get(i).method() + " ").getBytes(StandardCharsets.US_ASCII);
        }
        this.requestTail = (" HTTP/1.1\r\nHost: " + run.hostHeader + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    void start() {
        loop.execute(() -> {
            loop.scheduleAtFixedRate(this::sweep, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
            if (run.closedLoop()) {
                for (int i = 0; i < users; i++) {
                    connect();
                }
            } else {
                next = gaps.next(run.generator.schedule, share, -run.warmupNanos);
                tick();
            }
        });
    }

    // ---- open loop ------------------------------------------------------------------------------

    /** Dispatches every arrival whose intended time has come, then sleeps until the next one. */
    private void tick() {
        if (done) {
            return;
        }
        long now = System.nanoTime();
        long t0 = run.measureStart;
        while (true) {
            if (run.stopping || next == Long.MAX_VALUE || t0 + next >= run.measureEnd) {
                done = true;
                run.wake();
                return;
            }
            long intended = t0 + next;
            if (intended > now) {
                break;
            }
            boolean measured = next >= 0;
            if (measured) {
                if (!stats.take()) {
                    done = true;
                    run.budgetUsed();
                    return;
                }
                stats.scheduled.increment();
                long lag = (now - intended) / 1000;
                stats.sendLag.recordValue(lag);
                if (lag >= LoadGenerator.LATE_MICROS && run.late != null) {
                    run.late(intended, lag);
                }
            }
            dispatch(intended, measured);
            next = gaps.next(run.generator.schedule, share, next);
        }
        loop.schedule(tick, t0 + next - now, TimeUnit.NANOSECONDS);
    }

    private void dispatch(long intended, boolean measured) {
        stats.outstanding.incrementAndGet();
        Connection c = idle.pollLast(); // most recently used first: keeps few connections busy and warm
        if (c != null) {
            write(c, intended, measured, false);
            return;
        }
        waiting.addLast(intended);
        if (connecting < waiting.size() + resends.size() && connections < maxConnections) {
            // one new connection per waiting request at most: a slow connect must not start a connect storm
            connect();
        } else if (measured && connections >= maxConnections) {
            stats.connectionWaits.increment();
        }
    }

    private void write(Connection c, long intended, boolean measured, boolean resend) {
        if (measured && !resend && System.nanoTime() < run.measureEnd) {
            stats.sent.increment(); // sent in time: what the achieved rate counts
        }
        stats.allSent.increment();
        c.resend = resend;
        c.send(intended, measured);
    }

    /** Gives an open-loop connection the oldest request to send again or waiting, or parks it as idle. */
    private void serveWaiting(Connection c) {
        Long intended = resends.pollFirst();
        boolean resend = intended != null;
        if (!resend) {
            intended = waiting.pollFirst();
        }
        if (intended != null) {
            write(c, intended, intended >= run.measureStart, resend);
        } else {
            idle.addLast(c);
        }
    }

    /**
     * Sends a request lost with its connection again (open loop, {@link Connection#mayResend}), on an
     * idle connection or the next one free, with its intended send time kept: the time lost counts
     * as latency.
     */
    private void resend(long intended, boolean measured) {
        if (measured) {
            stats.resent.increment();
        }
        Connection c = idle.pollLast();
        if (c != null) {
            write(c, intended, measured, true);
        } else {
            resends.addLast(intended);
        }
    }

    // ---- closed loop ----------------------------------------------------------------------------

    private void sendNext(Connection c) {
        if (run.stopping || !c.isActive() || c.inFlight) {
            return;
        }
        long now = System.nanoTime();
        if (now >= run.measureEnd) {
            run.wake();
            return;
        }
        boolean measured = now >= run.measureStart;
        if (measured) {
            if (!stats.take()) {
                run.budgetUsed();
                return;
            }
            stats.scheduled.increment();
        }
        stats.outstanding.incrementAndGet();
        write(c, now, measured, false);
    }

    // ---- connections ----------------------------------------------------------------------------

    private void connect() {
        connections++;
        connecting++;
        if (grpc != null) {
            new GrpcConnection(this, loop, channelClass, run.address, connectMillis).connect();
            return;
        }
        HttpConnection c = new HttpConnection(this);
        ChannelFuture f = bootstrap.clone().handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new HttpResponseDecoder(), c.handler());
            }
        }).connect();
        f.addListener(done -> {
            if (!done.isSuccess()) {
                connectFailed(done.cause());
            }
        });
    }

    void connected(Connection c) {
        connecting--;
        stats.everConnected.set(true);
        stats.connectionOpened();
        all.add(c);
        if (run.closedLoop()) {
            sendNext(c);
        } else {
            serveWaiting(c);
        }
    }

    void connectFailed(Throwable cause) {
        connections--;
        connecting--;
        if (!stats.everConnected.get()) {
            run.abort(cause);
            return;
        }
        if (run.finished) {
            return;
        }
        if (run.closedLoop()) {
            if (System.nanoTime() >= run.measureStart) {
                stats.error(ErrorKind.CONNECT);
            }
            loop.schedule(this::connect, RECONNECT_MILLIS, TimeUnit.MILLISECONDS);
        } else {
            Long intended = resends.pollFirst();
            if (intended == null) {
                intended = waiting.pollFirst();
            }
            if (intended != null) {
                stats.outstanding.decrementAndGet();
                if (intended >= run.measureStart) {
                    stats.error(ErrorKind.CONNECT);
                }
            }
        }
    }

    void completed(Connection c) {
        long now = System.nanoTime();
        c.inFlight = false;
        stats.outstanding.decrementAndGet();
        if (c.measured) {
            long micros = (now - c.intended) / 1000;
            stats.latency.recordValue(micros);
            if (classLatency != null) {
                classLatency[c.template].recordValue(micros); // after the total: see LoadGenerator.Run#execute
            }
            if (c.status >= 500) {
                stats.failedLatency.recordValue(micros);
                stats.error(ErrorKind.STATUS_5XX);
            } else if (c.status >= 400) {
                stats.failedLatency.recordValue(micros);
                stats.error(ErrorKind.STATUS_4XX);
            } else {
                stats.okLatency.recordValue(micros);
            }
        }
        if (!c.keepAlive) {
            c.close(); // closed() replaces it when needed
            return;
        }
        if (run.closedLoop()) {
            long think = run.generator.think.toNanos();
            if (think > 0) {
                loop.schedule(() -> sendNext(c), think, TimeUnit.NANOSECONDS);
            } else {
                sendNext(c);
            }
        } else {
            serveWaiting(c);
        }
    }

    void closed(Connection c) {
        connections--;
        stats.connections.decrementAndGet();
        all.remove(c);
        idle.remove(c);
        if (run.finished) {
            return;
        }
        if (c.inFlight && !c.abandoned) {
            c.inFlight = false;
            if (!run.closedLoop() && !run.stopping && !c.resend && c.mayResend()) {
                resend(c.intended, c.measured); // still outstanding
            } else {
                stats.outstanding.decrementAndGet();
                if (c.measured) {
                    stats.error(ErrorKind.CLOSED);
                }
            }
        }
        if (run.stopping) {
            return;
        }
        if (run.closedLoop()) {
            if (System.nanoTime() < run.measureEnd) {
                connect();
            }
        } else if (connecting < waiting.size() + resends.size() && connections < maxConnections) {
            connect();
        }
    }

    /** Fails requests older than the timeout: in flight (closing their connection) or still waiting. */
    private void sweep() {
        if (run.finished) {
            return;
        }
        long limit = System.nanoTime() - run.generator.timeout.toNanos();
        for (int i = all.size() - 1; i >= 0; i--) {
            Connection c = all.get(i);
            if (c.inFlight && !c.abandoned && c.intended < limit) {
                c.abandoned = true;
                stats.outstanding.decrementAndGet();
                if (c.measured) {
                    stats.error(ErrorKind.TIMEOUT);
                }
                c.close();
            }
        }
        expire(resends, limit);
        expire(waiting, limit);
    }

    /** Fails the requests of {@code q} intended before {@code limit} as timeouts. */
    private void expire(ArrayDeque<Long> q, long limit) {
        while (!q.isEmpty() && q.peekFirst() < limit) {
            long intended = q.pollFirst();
            stats.outstanding.decrementAndGet();
            if (intended >= run.measureStart) {
                stats.error(ErrorKind.TIMEOUT);
            }
        }
    }

    /** The method of template {@code i} of the mix. */
    String method(int i) {
        return run.generator.mix.templates().get(i).method();
    }

    /**
     * A request of the mix as a {@code doubleface.ycsb.v1.QueryRequest} message (gRPC targets), for
     * connection {@code c}, which is told the request's template ({@link Connection#template}).
     */
    byte[] grpcRequest(Connection c) {
        int i = run.generator.mix.pick(random);
        c.template = i;
        return grpc.encode(i, random, run.generator.keys);
    }

    /**
     * A request of the mix, encoded: {@code GET PATH HTTP/1.1} and a Host header, for connection
     * {@code c}, which is told the request's template ({@link Connection#template}).
     */
    ByteBuf encodeRequest(Connection c, ByteBufAllocator alloc) {
        RequestMix mix = run.generator.mix;
        int i = mix.pick(random);
        c.template = i;
        byte[][] parts = mix.templates().get(i).parts();
        ByteBuf b = alloc.ioBuffer(128);
        b.writeBytes(requestHead[i]);
        b.writeBytes(parts[0]);
        for (int p = 1; p < parts.length; p++) {
            ByteBufUtil.writeAscii(b, Long.toString(random.nextLong(run.generator.keys)));
            b.writeBytes(parts[p]);
        }
        b.writeBytes(requestTail);
        return b;
    }
}
