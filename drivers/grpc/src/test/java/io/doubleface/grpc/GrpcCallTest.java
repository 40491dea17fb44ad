package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ReplyListener;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Unary calls of a user's own method ({@link GrpcCall}) through both clients, against real gRPC
 * servers on loopback. The method is described by hand with a string marshaller
 * ({@link TestLeaves#UTF8}, no generated code), as any {@code MethodDescriptor} works.
 */
@Timeout(60)
class GrpcCallTest {

    /** {@code test.Greeter/Greet}: "hello NAME from shard S", or INVALID_ARGUMENT for "bad". */
    static final MethodDescriptor<String, String> GREET = MethodDescriptor
            .<String, String>newBuilder(TestLeaves.UTF8, TestLeaves.UTF8)
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("test.Greeter/Greet")
            .build();

    static final MethodDescriptor<String, String> STREAM = GREET.toBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
            .setFullMethodName("test.Greeter/GreetAll")
            .build();

    static final Metadata.Key<String> TENANT = Metadata.Key.of("tenant", Metadata.ASCII_STRING_MARSHALLER);

    private final List<Server> servers = new ArrayList<>();
    private final Map<Integer, String> tenants = new ConcurrentHashMap<>();
    private LoopGroup loops;
    private ShardDriver<GrpcCall<?, ?>> driver;

    @BeforeEach
    void start() throws IOException {
        for (int s = 0; s < 3; s++) {
            int shard = s;
            ServerServiceDefinition def = ServerServiceDefinition.builder("test.Greeter")
                    .addMethod(GREET, ServerCalls.asyncUnaryCall((name, reply) -> {
                        if (name.equals("bad")) {
                            reply.onError(Status.INVALID_ARGUMENT.withDescription("no greeting for bad").asException());
                            return;
                        }
                        reply.onNext("hello " + name + " from shard " + shard);
                        reply.onCompleted();
                    }))
                    .build();
            ServerInterceptor recordTenant = new ServerInterceptor() {
                @Override
                public <I, O> ServerCall.Listener<I> interceptCall(ServerCall<I, O> call, Metadata headers,
                        ServerCallHandler<I, O> next) {
                    String t = headers.get(TENANT);
                    if (t != null) {
                        tenants.put(shard, t);
                    }
                    return next.startCall(call, headers);
                }
            };
            servers.add(NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(ServerInterceptors.intercept(def, recordTenant)).build().start());
        }
        String uri = "grpc://" + servers.stream().map(s -> "127.0.0.1:" + s.getPort()).collect(Collectors.joining(","));
        driver = GrpcDriver.of(uri, DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(10)));
        loops = new LoopGroup("grpc-call", 1, Transport.AUTO);
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (driver != null) {
            driver.close();
        }
        if (loops != null) {
            loops.close();
        }
        for (Server s : servers) {
            s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** Outcomes of one batch of loop-client sends, by tag, with the thread each arrived on. */
    static final class Collected implements ReplyListener {
        final Map<Integer, Object> outcomes = new ConcurrentHashMap<>();
        final Map<Integer, Thread> threads = new ConcurrentHashMap<>();
        final CountDownLatch done;

        Collected(int n) {
            done = new CountDownLatch(n);
        }

        @Override
        public void onReply(int tag, Object reply) {
            record(tag, reply);
        }

        @Override
        public void onFailure(int tag, ShardException cause) {
            record(tag, cause);
        }

        private void record(int tag, Object o) {
            if (outcomes.putIfAbsent(tag, o) != null) {
                throw new AssertionError("second outcome for tag " + tag);
            }
            threads.put(tag, Thread.currentThread());
            done.countDown();
        }

        Collected await() throws InterruptedException {
            assertTrue(done.await(30, TimeUnit.SECONDS), "outcomes: " + outcomes);
            return this;
        }
    }

    @Test
    void loopClientDeliversTheTypedReplyOfEachShardOnItsLoop() throws Exception {
        LoopClient<GrpcCall<?, ?>> client = driver.openOn(loops.loops().get(0));
        Collected out = new Collected(6);
        client.loop().submit(() -> {
            for (int i = 0; i < 6; i++) {
                client.send(i % 3, GrpcCall.of(GREET, "n" + i), out, i);
            }
        }).syncUninterruptibly();
        out.await();
        for (int i = 0; i < 6; i++) {
            assertEquals("hello n" + i + " from shard " + (i % 3), out.outcomes.get(i));
            assertTrue(client.loop().inEventLoop(out.threads.get(i)), "reply " + i + " off the loop");
        }
    }

    @Test
    void errorStatusFailsTheCallWithTheStatusAndItsDescription() throws Exception {
        LoopClient<GrpcCall<?, ?>> client = driver.openOn(loops.loops().get(0));
        Collected out = new Collected(2);
        client.loop().submit(() -> {
            client.send(1, GrpcCall.of(GREET, "bad"), out, 0);
            client.send(1, GrpcCall.of(GREET, "good"), out, 1);
        }).syncUninterruptibly();
        out.await();
        ShardException e = assertInstanceOf(ShardException.class, out.outcomes.get(0));
        assertEquals(ShardException.Kind.SHARD_ERROR, e.kind());
        assertTrue(e.getMessage().contains("INVALID_ARGUMENT: no greeting for bad"), e.getMessage());
        assertEquals("hello good from shard 1", out.outcomes.get(1), "the connection stays usable");
    }

    @Test
    void headersTravelAsRequestMetadataInBothClients() throws Exception {
        Metadata h = new Metadata();
        h.put(TENANT, "acme");
        GrpcCall<String, String> call = GrpcCall.of(GREET, "x").withHeaders(h);
        h.put(TENANT, "changed later"); // copied: the call keeps "acme"
        LoopClient<GrpcCall<?, ?>> client = driver.openOn(loops.loops().get(0));
        Collected out = new Collected(1);
        client.loop().submit(() -> client.send(0, call, out, 0)).syncUninterruptibly();
        out.await();
        assertEquals("acme", tenants.get(0));
        try (BlockingClient<GrpcCall<?, ?>> blocking = driver.openBlocking()) {
            assertEquals("hello x from shard 2", blocking.call(2, call, TimeUnit.SECONDS.toNanos(10)));
        }
        assertEquals("acme", tenants.get(2));
    }

    @Test
    void blockingClientCallsOneOrAllShards() throws Exception {
        try (BlockingClient<GrpcCall<?, ?>> client = driver.openBlocking()) {
            assertEquals("hello a from shard 0", client.call(0, GrpcCall.of(GREET, "a"), TimeUnit.SECONDS.toNanos(10)));
            ShardException e = assertThrows(ShardException.class,
                    () -> client.call(0, GrpcCall.of(GREET, "bad"), TimeUnit.SECONDS.toNanos(10)));
            assertEquals(ShardException.Kind.SHARD_ERROR, e.kind());
            Map<Integer, Object> got = new ConcurrentHashMap<>();
            client.callAll(new int[] {0, 1, 2}, List.of(GrpcCall.of(GREET, "p"), GrpcCall.of(GREET, "bad"),
                    GrpcCall.of(GREET, "r")), TimeUnit.SECONDS.toNanos(10), new BlockingClient.Sink() {
                        @Override
                        public void onReply(int index, Object reply) {
                            got.put(index, reply);
                        }

                        @Override
                        public void onFailure(int index, ShardException cause) {
                            got.put(index, cause.kind());
                        }
                    });
            assertEquals(Map.of(0, "hello p from shard 0", 1, ShardException.Kind.SHARD_ERROR, 2,
                    "hello r from shard 2"), got);
        }
    }

    @Test
    void onlyUnaryMethodsAndGrpcCallsAreAccepted() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GrpcCall.of(STREAM, "x"));
        assertTrue(e.getMessage().contains("test.Greeter/GreetAll is SERVER_STREAMING (expected: UNARY)"), e.getMessage());
        @SuppressWarnings({"unchecked", "rawtypes"})
        LoopClient<Command<?>> client = (LoopClient) driver.openOn(loops.loops().get(0));
        Command<String> foreign = new Command<>() {};
        e = assertThrows(IllegalArgumentException.class, () -> client.loop().submit(
                () -> client.send(0, foreign, new Collected(1), 0)).syncUninterruptibly());
        assertTrue(e.getMessage().contains("expected: a GrpcCall"), e.getMessage());
    }
}
