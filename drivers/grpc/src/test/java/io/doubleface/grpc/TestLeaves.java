package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.testing.Outcomes;
import io.doubleface.internal.loop.LoopGroup;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Test leaves of a hand-described unary method (no generated code): {@code shards} grpc-java
 * {@link Server}s on loopback, one port per shard, built with {@link NettyServerBuilder} on one
 * {@link LoopGroup} of the given transport (boss and worker group alike, {@code directExecutor}).
 *
 * <p>{@code test.Leaf/Get} ({@link #GET}) takes {@code "k:<n>:<size>"} and answers
 * {@link #reply(int, int, int) reply(shard, n, size)}: exactly {@code size} ASCII bytes that start
 * with {@code "s<shard>:k<n>:"} followed by pseudo-random letters seeded by shard, n and size, so
 * replies are deterministic, tell where they came from and may be large (up to {@link #MAX_SIZE}).
 * A key outside {@code 0 .. records-1}, a size outside {@code 0 .. MAX_SIZE} or a malformed request
 * fails with {@code INVALID_ARGUMENT}; {@code "fail:<CODE>:<description>"} fails with that status.
 *
 * <p>{@link #stop()} stops every shard's server and {@link #restart()} binds them again on the same
 * ports; {@link #close()} also shuts the loops down.
 */
final class TestLeaves implements AutoCloseable {

    /** A UTF-8 string as a gRPC message. */
    static final MethodDescriptor.Marshaller<String> UTF8 = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    /** {@code test.Leaf/Get}: see the class comment. */
    static final MethodDescriptor<String, String> GET = MethodDescriptor.<String, String>newBuilder(UTF8, UTF8)
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("test.Leaf/Get")
            .build();

    /** Largest reply: {@value} bytes (1 MiB, below grpc-java's 4 MiB default inbound limit). */
    static final int MAX_SIZE = 1 << 20;

    private static final long CLOSE_WAIT_MILLIS = 5_000;

    private final int records;
    private final LoopGroup loops;
    private final int[] ports;
    private final Server[] servers;
    private final io.netty.handler.ssl.SslContext ssl; // null: plaintext
    private boolean closed;
    /** The {@code traceparent} of every call the leaves received, with the shard: "shard traceparent". */
    private final java.util.Queue<String> traceparents = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private static final io.grpc.Metadata.Key<String> TRACEPARENT =
            io.grpc.Metadata.Key.of("traceparent", io.grpc.Metadata.ASCII_STRING_MARSHALLER);

    private TestLeaves(int shards, int records, Transport transport, io.netty.handler.ssl.SslContext ssl) {
        this.records = records;
        this.ssl = ssl;
        this.loops = new LoopGroup("test-leaf", 1, transport);
        this.ports = new int[shards];
        this.servers = new Server[shards];
        try {
            for (int s = 0; s < shards; s++) {
                servers[s] = bind(s, 0);
                ports[s] = servers[s].getPort();
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Starts {@code shards} shards, each serving keys {@code 0 .. records-1}, on loops of {@code transport}.
     */
    static TestLeaves start(int shards, int records, Transport transport) {
        return new TestLeaves(shards, records, transport, null);
    }

    /** {@link #start} serving TLS with {@code ssl} (a server context, e.g. {@code GrpcSslContexts.forServer}). */
    static TestLeaves startTls(int shards, int records, io.netty.handler.ssl.SslContext ssl) {
        return new TestLeaves(shards, records, Transport.AUTO, ssl);
    }

    /** A call of {@link #GET} for key {@code n} and a reply of {@code size} bytes. */
    static GrpcCall<String, String> get(int n, int size) {
        return GrpcCall.of(GET, "k:" + n + ":" + size);
    }

    /** A call of {@link #GET} that fails with {@code code} and {@code description}. */
    static GrpcCall<String, String> fail(Status.Code code, String description) {
        return GrpcCall.of(GET, "fail:" + code.name() + ":" + description);
    }

    /** The reply of {@code shard} to {@link #get get(n, size)}. */
    static String reply(int shard, int n, int size) {
        StringBuilder b = new StringBuilder(size + 24);
        b.append('s').append(shard).append(":k").append(n).append(':');
        SplittableRandom r = new SplittableRandom(((long) shard << 48) ^ ((long) n << 24) ^ size);
        while (b.length() < size) {
            b.append((char) ('a' + r.nextInt(26)));
        }
        b.setLength(size);
        return b.toString();
    }

    private Server bind(int shard, int port) {
        ServerServiceDefinition def = io.grpc.ServerInterceptors.intercept(ServerServiceDefinition.builder("test.Leaf")
                .addMethod(GET, ServerCalls.asyncUnaryCall((request, out) -> answer(shard, request, out)))
                .build(), new io.grpc.ServerInterceptor() {
                    @Override
                    public <I, O> io.grpc.ServerCall.Listener<I> interceptCall(io.grpc.ServerCall<I, O> call,
                            io.grpc.Metadata headers, io.grpc.ServerCallHandler<I, O> next) {
                        String tp = headers.get(TRACEPARENT);
                        if (tp != null) {
                            traceparents.add(shard + " " + tp);
                        }
                        return next.startCall(call, headers);
                    }
                });
        NettyServerBuilder nb = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port));
        if (ssl != null) {
            nb.sslContext(ssl);
        }
        Server s = nb
                .bossEventLoopGroup(loops.group())
                .workerEventLoopGroup(loops.group())
                .channelType(loops.serverChannelClass())
                .withOption(ChannelOption.SO_REUSEADDR, true)
                .withChildOption(ChannelOption.TCP_NODELAY, true)
                .directExecutor()
                .addService(def)
                .build();
        try {
            return s.start();
        } catch (IOException e) {
            s.shutdownNow();
            throw new UncheckedIOException("test shard " + shard + ": cannot listen on 127.0.0.1:" + port, e);
        }
    }

    private void answer(int shard, String request, StreamObserver<String> out) {
        String[] p = request.split(":", 3);
        if (p.length == 3 && p[0].equals("fail")) {
            out.onError(Status.fromCode(Status.Code.valueOf(p[1])).withDescription(p[2]).asRuntimeException());
            return;
        }
        int n;
        int size;
        try {
            if (p.length != 3 || !p[0].equals("k")) {
                throw new NumberFormatException();
            }
            n = Integer.parseInt(p[1]);
            size = Integer.parseInt(p[2]);
        } catch (NumberFormatException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("request: " + request + " (expected: k:<n>:<size>)")
                    .asRuntimeException());
            return;
        }
        if (n < 0 || n >= records) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("key: " + n + " (expected: 0.." + (records - 1) + ")")
                    .asRuntimeException());
            return;
        }
        if (size < 0 || size > MAX_SIZE) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("size: " + size + " (expected: 0.." + MAX_SIZE + ")")
                    .asRuntimeException());
            return;
        }
        out.onNext(reply(shard, n, size));
        out.onCompleted();
    }

    /** {@return and forgets the traceparents received so far, each as {@code "<shard> <traceparent>"}} */
    List<String> takeTraceparents() {
        List<String> out = new ArrayList<>();
        for (String t; (t = traceparents.poll()) != null; ) {
            out.add(t);
        }
        return out;
    }

    /** {@return the number of shards} */
    int shardCount() {
        return ports.length;
    }

    /** {@return the port of {@code shard}, the same after {@link #restart()}} */
    int port(int shard) {
        return ports[shard];
    }

    /** {@return the shard addresses, indexed by shard} */
    List<InetSocketAddress> addresses() {
        List<InetSocketAddress> out = new ArrayList<>(ports.length);
        for (int p : ports) {
            out.add(new InetSocketAddress("127.0.0.1", p));
        }
        return out;
    }

    /** {@return the shard list, e.g. {@code grpc://127.0.0.1:7401-7403}} */
    String uri() {
        return GrpcDriver.describe(addresses());
    }

    /** Stops every shard: no more listening, every call and connection ended. The loops stay. */
    synchronized void stop() {
        for (Server s : servers) {
            if (s != null) {
                s.shutdownNow();
            }
        }
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] != null) {
                try {
                    if (!servers[i].awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                        throw new IllegalStateException("test shard " + i + " did not stop");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted stopping test shard " + i, e);
                }
                servers[i] = null;
            }
        }
    }

    /** Listens again on the same ports (after {@link #stop()}). */
    synchronized void restart() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        for (int s = 0; s < servers.length; s++) {
            if (servers[s] == null) {
                servers[s] = bind(s, ports[s]);
            }
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stop();
        } finally {
            loops.close();
        }
    }

    /** Asserts that {@code tag} of {@code o} got {@code expected}, comparing lengths first (replies may be 1 MB). */
    static void assertReply(Outcomes o, int tag, String expected) {
        String got = (String) o.value(tag);
        assertEquals(expected.length(), got.length(), () -> "tag " + tag + ": reply length");
        assertTrue(expected.equals(got), () -> "tag " + tag + ": reply differs from the expected one at "
                + firstDifference(expected, got) + " (starts " + head(got) + ", expected " + head(expected) + ")");
    }

    private static int firstDifference(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            if (a.charAt(i) != b.charAt(i)) {
                return i;
            }
        }
        return n;
    }

    private static String head(String s) {
        return s.length() <= 40 ? '"' + s + '"' : '"' + s.substring(0, 40) + "...\"";
    }
}
