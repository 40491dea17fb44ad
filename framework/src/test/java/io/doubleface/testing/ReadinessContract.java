package io.doubleface.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.driver.Command;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.internal.Json;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

/**
 * Warm start and readiness of a driver under every threading model, over real sockets: a server
 * whose backend has a live shard and a dead one answers {@code /ready} {@code 503 connecting}
 * (naming the backend, and the dead shard's address as why), {@code awaitReady} times out naming
 * it; once the dead shard comes up the server turns ready by itself, {@code /ready} answers
 * {@code 200}; the first request is then served over connections made before it (the shards'
 * proxies stop accepting first, so a connection made on first use would be refused); and from the
 * start of a drain {@code /ready} answers {@code 503 draining}.
 *
 * <p>A subclass gives the live shard and the driver.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ReadinessContract {

    /** One or two configurations of each model. */
    public static final List<String> ALL_MODELS = List.of("thread-8", "thread-virtual", "type1-8", "type2a-1f2b",
            "type2a-2f1b", "type2b", "type2b-fixed-4", "doubleface", "doubleface-fifo", "doubleface-1");

    /** One configuration of each model. */
    public static final List<String> ONE_PER_MODEL = List.of("thread-8", "type1-8", "type2a-1f2b", "type2b",
            "doubleface");

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * A live shard the subclass started (both shards of the test serve it).
     *
     * @param address where it listens
     * @param stop stops it
     */
    public record LiveShard(InetSocketAddress address, AutoCloseable stop) {}

    private LiveShard live;

    /** {@return the address of the live shard ({@link #startShard()})} */
    protected InetSocketAddress liveAddress() {
        return live.address();
    }

    /** {@return a live shard, started now; stopped after the tests} */
    protected abstract LiveShard startShard() throws Exception;

    @BeforeAll
    void startLiveShard() throws Exception {
        live = startShard();
    }

    @AfterAll
    void stopLiveShard() throws Exception {
        if (live != null) {
            live.stop().close();
        }
    }

    /** {@return a driver over {@code shards}; the server closes it} */
    protected abstract ShardDriver<?> driver(List<InetSocketAddress> shards) throws Exception;

    /** {@return a command that any shard answers (a read), for shard {@code shard}} */
    protected abstract Command<?> read(int shard);

    /** {@return the configurations to run} */
    protected List<String> models() {
        return ALL_MODELS;
    }

    @TestFactory
    Stream<DynamicTest> readinessUnderEveryModel() {
        return models().stream().map(m -> DynamicTest.dynamicTest(m, () -> readiness(m)));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void readiness(String model) throws Exception {
        InetSocketAddress live = this.live.address();
        int deadPort = StallingProxy.closedLowPort();
        try (StallingProxy first = new StallingProxy(0, live)) {
            List<InetSocketAddress> shards = List.of(first.address(), new InetSocketAddress("127.0.0.1", deadPort));
            FanoutServer.Builder b = FanoutServer.builder();
            Backend backend = b.backend("b", (ShardDriver) driver(shards));
            readRoute(b, backend, this::read).port(0).adminPort(0).ioThreads(2).configuration(model)
                    .deadline(Duration.ofSeconds(10));
            FanoutServer server = b.start();
            StallingProxy second = null;
            try {
                // the dead shard: not ready, and the reason names it
                assertFalse(server.isReady());
                String port = ":" + deadPort;
                TimeoutException timeout = assertThrows(TimeoutException.class,
                        () -> server.awaitReady(Duration.ofMillis(100)));
                for (int i = 0; i < 300 && !timeout.getMessage().contains(port); i++) { // until an attempt failed
                    timeout = assertThrows(TimeoutException.class, () -> server.awaitReady(Duration.ofMillis(100)));
                }
                assertTrue(timeout.getMessage().contains("backend b") && timeout.getMessage().contains(port),
                        timeout.getMessage());
                Answer r = get(server, "/ready");
                assertEquals(503, r.status(), r.toString());
                assertEquals(false, r.json().get("ready"));
                assertEquals("connecting", r.json().get("reason"));
                List<Map<String, Object>> waiting = (List<Map<String, Object>>) r.json().get("waiting");
                assertFalse(waiting.isEmpty(), r.toString());
                assertTrue(waiting.stream().allMatch(w -> "b".equals(w.get("backend")) && w.get("client") != null),
                        r.toString());
                assertEquals(200, get(server, "/live").status());

                // the shard comes up: ready by itself
                second = new StallingProxy(deadPort, live);
                server.awaitReady(Duration.ofSeconds(60));
                assertTrue(server.isReady());
                r = get(server, "/ready");
                assertEquals(200, r.status(), r.toString());
                assertEquals(Map.of("ready", true), r.json());

                // the first request needs no new connection: both shards refuse new ones now
                assertTrue(second.awaitAccepted(1, Duration.ofSeconds(10)) >= 1, "no connection to the second shard");
                assertTrue(first.accepted() >= 1, "no connection to the first shard");
                first.stopAccepting();
                second.stopAccepting();
                assertReadAll(server, 2);

                // a drain: 503 at once, whatever the connections
                assertDraining(server);
            } finally {
                server.close();
                if (second != null) {
                    second.close();
                }
            }
        }
    }

    /**
     * Adds {@code GET /read} to {@code b}: one call of {@code read} to every shard of
     * {@code backend}, answered {@code {"replies":N}}.
     *
     * @return {@code b}
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static FanoutServer.Builder readRoute(FanoutServer.Builder b, Backend<?> backend,
            IntFunction<Command<?>> read) {
        return b.get("/read", new AllShards(backend, read), new Text());
    }

    /** Sends {@code GET /read} ({@link #readRoute}) and checks that every one of {@code shards} replied. */
    public static void assertReadAll(FanoutServer server, int shards) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.port() + "/read")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode(), answer.body());
        assertEquals("{\"replies\":" + shards + "}", answer.body());
    }

    /** Starts a drain and checks {@code /ready} (and {@code awaitReady}) during it; returns when stopped. */
    public static void assertDraining(FanoutServer server) throws Exception {
        Thread stopper = Thread.ofPlatform().name("stopper").start(
                () -> server.stop(Duration.ofSeconds(3), Duration.ofSeconds(10)));
        while (server.isReady() && stopper.isAlive()) {
            Thread.onSpinWait(); // stop() turns readiness off first thing
        }
        Answer r = get(server, "/ready");
        assertEquals(503, r.status(), r.toString());
        assertEquals(Map.of("ready", false, "reason", "draining"), r.json());
        assertEquals(200, get(server, "/live").status());
        assertThrows(IllegalStateException.class, () -> server.awaitReady(Duration.ofSeconds(1)));
        stopper.join(30_000);
        assertFalse(stopper.isAlive(), "stop did not return");
    }

    /** An admin answer: its status and its JSON body. */
    public record Answer(int status, Map<String, Object> json) {}

    /** {@return {@code GET path} on the server's admin listener} */
    @SuppressWarnings("unchecked")
    public static Answer get(FanoutServer server, String path) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.adminPort() + path)).build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), (Map<String, Object>) Json.parse(r.body()));
    }

    /** {@code GET /read}: one call to every shard; answers how many replies came. */
    private static final class AllShards<C extends Command<?>> implements FanoutService<String, Integer, String> {
        private static final ReplyHandler<String, Object, Integer> ONE = (q, call, reply) -> 1;
        private final Backend<C> backend;
        private final IntFunction<C> command;

        AllShards(Backend<C> backend, IntFunction<C> command) {
            this.backend = backend;
            this.command = command;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void plan(String q, FanoutPlan<String, Integer> plan) {
            for (int s = 0; s < backend.shardCount(); s++) {
                ((FanoutPlan) plan).call((Backend) backend, s, (Command) command.apply(s), (ReplyHandler) ONE);
            }
        }

        @Override
        public String merge(String q, Replies<Integer> replies, FanoutPlan<String, Integer> next) {
            List<Integer> got = new ArrayList<>();
            for (int i = 0; i < replies.size(); i++) {
                if (replies.get(i) == null) {
                    throw new IllegalStateException("no reply from shard " + replies.shard(i));
                }
                got.add(replies.get(i));
            }
            return "{\"replies\":" + got.size() + "}";
        }
    }

    /** The JSON answer of {@link AllShards} as it is. */
    private static final class Text implements HttpBinding<String, String> {
        @Override
        public String decode(HttpRequestView request) {
            return "";
        }

        @Override
        public ByteBuf encode(String response, ByteBufAllocator alloc) {
            return ByteBufUtil.writeUtf8(alloc, response);
        }
    }
}
