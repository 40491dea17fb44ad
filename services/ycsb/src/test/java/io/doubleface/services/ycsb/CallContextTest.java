package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.doubleface.api.Backend;
import io.doubleface.api.CallRef;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.RequestContext;
import io.doubleface.driver.ShardException;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.kv.KvRequest;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.ycsb.v1.FanoutServiceGrpc;
import io.doubleface.services.ycsb.v1.QueryReply;
import io.doubleface.services.ycsb.v1.QueryRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * The request context, typed call results, per-call timeouts and the failure answers that read the
 * same under every model — over real sockets, real KV shards, a shard that never answers and a port
 * nobody listens on, under every model, over HTTP and gRPC.
 */
@Timeout(180)
class CallContextTest {

    static final List<String> MODELS = Models.ALL;

    /** Each call's reply under a reference of its own type: no common reply type, no casts, no call numbers. */
    static final CallRef<ByteBuf> FIELD = CallRef.named("field");
    static final CallRef<String> WHERE = CallRef.named("where");
    static final CallRef<Integer> SIZES = CallRef.named("sizes");
    static final CallRef<ByteBuf> SLOW = CallRef.named("slow");
    static final CallRef<ByteBuf> DEAD = CallRef.named("dead");

    /**
     * {@code GET /ctx/{key}} and gRPC {@code Query(key)}. Key 77: an optional call to the silent shard
     * with a 100-ms timeout of its own beside the normal calls; 78: the same call required (fail-fast);
     * 55: a call to the port nobody listens on; anything else: the context and typed replies.
     */
    static final class ContextService implements FanoutService<Long, Object, String> {
        final Backend<KvRequest> a;
        final Backend<KvRequest> b;
        final Backend<KvRequest> silent;
        final Backend<KvRequest> dead;
        volatile String planContext;

        ContextService(Backend<KvRequest> a, Backend<KvRequest> b, Backend<KvRequest> silent, Backend<KvRequest> dead) {
            this.a = a;
            this.b = b;
            this.silent = silent;
            this.dead = dead;
        }

        @Override
        public void plan(Long key, FanoutPlan<Long, Object> plan) {
            RequestContext c = plan.context();
            long left = c.timeLeft().toMillis();
            planContext = c.route() + "|" + c.method() + "|" + c.path() + "|" + c.pathVariable("key") + "|"
                    + c.pathVariable("nope") + "|" + c.header("X-Tenant") + "|" + c.configuration() + "|"
                    + (left > 0 && left <= TestCluster.GENEROUS.toMillis());
            if (key == 55) {
                plan.call(dead, 0, KvRequest.readField(1, 0), DEAD);
                return;
            }
            int shard = (int) (key % a.shardCount());
            plan.call(a, shard, KvRequest.readField(key, 0), FIELD);
            plan.call(b, shard, KvRequest.readField(key, 1), WHERE,
                    (call, reply) -> call.backend().name() + "/" + call.shard() + "/" + call.index() + "/"
                            + call.request() + "/" + call.context().route() + "/" + reply.readableBytes());
            plan.broadcast(b, KvRequest.readField(key, 2), SIZES, (call, reply) -> reply.readableBytes());
            if (key == 77 || key == 78) {
                int slow = plan.call(silent, 0, KvRequest.readField(1, 0), SLOW);
                plan.timeout(slow, Duration.ofMillis(100));
                if (key == 77) {
                    plan.optional(slow);
                }
            }
        }

        @Override
        public String merge(Long key, Replies<Object> replies, FanoutPlan<Long, Object> next) {
            RequestContext c = replies.context();
            String seen = c.route() + "|" + c.method() + "|" + c.path() + "|" + c.pathVariable("key") + "|"
                    + c.pathVariable("nope") + "|" + c.header("x-tenant") + "|" + c.configuration() + "|true";
            if (!seen.equals(planContext)) {
                return "merge saw " + seen; // the test fails on it
            }
            ByteBuf field = replies.get(FIELD); // the raw reply, still owned by the framework here
            String where = replies.get(WHERE);
            List<Integer> sizes = replies.all(SIZES);
            String out = planContext + "\n" + field.readableBytes() + "\n" + where + "\n" + sizes;
            if (replies.indexOf(SLOW) >= 0) {
                ShardException f = replies.failure(SLOW);
                out += "\nslow: " + replies.ok(SLOW) + " " + f.kind() + " " + f.getMessage() + " / "
                        + f.getCause().getMessage();
            }
            return out;
        }
    }

    static final class ContextHttp implements HttpBinding<Long, String> {
        @Override
        public Long decode(HttpRequestView req) throws io.doubleface.api.BadRequestException {
            return req.pathLong("key");
        }

        @Override
        public ByteBuf encode(String response, ByteBufAllocator alloc) {
            return ByteBufUtil.writeUtf8(alloc, response);
        }

        @Override
        public String contentType() {
            return "text/plain; charset=utf-8";
        }
    }

    static final class ContextGrpc implements GrpcBinding<Long, String, QueryRequest, QueryReply> {
        @Override
        public MethodDescriptor<QueryRequest, QueryReply> method() {
            return FanoutServiceGrpc.getQueryMethod();
        }

        @Override
        public Long decode(QueryRequest r) {
            return r.getKey();
        }

        @Override
        public QueryReply encode(String response) {
            return QueryReply.newBuilder().setBody(ByteString.copyFromUtf8(response)).build();
        }
    }

    static final class Cluster implements AutoCloseable {
        final KvLeafServer leaf = KvLeafServer.builder().shards(4).basePort(0).records(TestCluster.RECORDS).start();
        final BlackHole hole;
        final FanoutServer server;
        final ManagedChannel channel;
        final int deadPort;

        Cluster(String model) throws Exception {
            hole = new BlackHole();
            try (ServerSocket s = new ServerSocket(0)) {
                deadPort = s.getLocalPort(); // closed again: nobody listens there
            }
            KvDriver.Options o = KvDriver.Options.DEFAULT.withCallTimeout(TestCluster.GENEROUS)
                    .withConnectTimeout(Duration.ofSeconds(5));
            FanoutServer.Builder b = FanoutServer.builder();
            Backend<KvRequest> a = b.backend("a", KvDriver.of(leaf.addresses(), o));
            Backend<KvRequest> bb = b.backend("b", KvDriver.of(leaf.addresses(), o));
            Backend<KvRequest> silent = b.backend("silent", KvDriver.of(List.of(hole.address()), o));
            Backend<KvRequest> dead = b.backend("dead",
                    KvDriver.of(List.of(new InetSocketAddress("127.0.0.1", deadPort)), o));
            ContextService service = new ContextService(a, bb, silent, dead);
            b.get("/ctx/{key}", service, new ContextHttp()).grpc(0, service, new ContextGrpc());
            server = b.port(0).adminPort(0).ioThreads(2).configuration(model).deadline(TestCluster.GENEROUS).start();
            channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
        }

        RawHttp.Response get(long key) throws Exception {
            try (RawHttp c = new RawHttp(server.port())) {
                return c.exchange("GET /ctx/" + key + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Tenant: blue\r\n\r\n");
            }
        }

        QueryReply grpc(long key) {
            Metadata m = new Metadata();
            m.put(Metadata.Key.of("x-tenant", Metadata.ASCII_STRING_MARSHALLER), "green");
            return FanoutServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(m))
                    .query(QueryRequest.newBuilder().setKey(key).build());
        }

        @Override
        public void close() throws Exception {
            channel.shutdownNow();
            server.close();
            hole.close();
            leaf.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void planMergeAndHandlersReadTheContextAndTypedReplies(String model) throws Exception {
        try (Cluster c = new Cluster(model)) {
            long key = 6;
            int shard = (int) (key % 4);
            RawHttp.Response r = c.get(key);
            assertEquals(200, r.status(), r.toString());
            String[] lines = r.text().split("\n");
            assertEquals("GET /ctx/{key}|GET|/ctx/6|6|null|blue|" + model + "|true", lines[0]);
            int fieldLen = Integer.parseInt(lines[1]);
            assertTrue(fieldLen > 0, r.text());
            assertTrue(lines[2].startsWith("b/" + shard + "/1/6/GET /ctx/{key}/"), lines[2]);
            List<String> sizes = new ArrayList<>(List.of(lines[3].substring(1, lines[3].length() - 1).split(", ")));
            assertEquals(4, sizes.size(), "a broadcast: one result per shard, in shard order: " + lines[3]);

            String g = c.grpc(key).getBody().toStringUtf8();
            String[] gl = g.split("\n");
            String method = FanoutServiceGrpc.getQueryMethod().getFullMethodName();
            assertEquals("grpc " + method + "|POST|/" + method + "|null|null|green|" + model + "|true", gl[0]);
            assertEquals(lines[1], gl[1], "the same reply over gRPC");
            assertEquals(lines[3], gl[3]);
            assertTrue(gl[2].startsWith("b/" + shard + "/1/6/grpc " + method + "/"), gl[2]);
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void aCallsOwnTimeoutFailsItAloneOrTheRequest(String model) throws Exception {
        try (Cluster c = new Cluster(model)) {
            // optional: the page comes without it, the failure says which call and why
            RawHttp.Response r = c.get(77);
            assertEquals(200, r.status(), r.toString());
            String slow = r.text().substring(r.text().indexOf("\nslow: ") + 1);
            assertEquals("slow: false TIMEOUT backend silent: shard 0 timed out / "
                    + "shard 0 timeout: no reply within the call's timeout of 100 ms", slow);
            // required: 504 well before the request's deadline, in the same words under every model
            RawHttp.Response required = c.get(78);
            assertEquals(504, required.status(), required.toString());
            assertEquals("backend silent: shard 0 timed out\n", required.text());
            // the connection stays usable and the next request is served
            assertEquals(200, c.get(5).status());
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void aDeadShardFailsInTheSameWordsUnderEveryModel(String model) throws Exception {
        try (Cluster c = new Cluster(model)) {
            for (int i = 0; i < 3; i++) { // first connect, reconnect backoff, and after: the same answer
                RawHttp.Response r = c.get(55);
                assertEquals(503, r.status(), r.toString());
                assertEquals("backend dead: shard 0 unavailable\n", r.text(), model);
            }
            io.grpc.Status s = assertThrows(io.grpc.StatusRuntimeException.class, () -> c.grpc(55)).getStatus();
            assertEquals(io.grpc.Status.Code.UNAVAILABLE, s.getCode());
            assertEquals("backend dead: shard 0 unavailable", s.getDescription());
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void referencesMisusedFailClearly(String model) throws Exception {
        CallRef<String> never = CallRef.named("never");
        assertEquals("CallRef[never]", never.toString());
        assertThrows(NullPointerException.class, () -> CallRef.named(null));
        try (KvLeafServer leaf = KvLeafServer.builder().shards(1).basePort(0).records(TestCluster.RECORDS).start()) {
            FanoutServer.Builder b = FanoutServer.builder();
            Backend<KvRequest> a = b.backend("a", KvDriver.of(leaf.addresses(), KvDriver.Options.DEFAULT));
            FanoutService<Long, Object, String> misuse = new FanoutService<Long, Object, String>() {
                @Override
                public void plan(Long key, FanoutPlan<Long, Object> plan) {
                    plan.call(a, 0, KvRequest.readField(1, 0), FIELD);
                    refused(() -> plan.timeout(0, Duration.ZERO), IllegalArgumentException.class);
                    refused(() -> plan.timeout(1, Duration.ofMillis(5)), IndexOutOfBoundsException.class);
                }

                @Override
                public String merge(Long key, Replies<Object> replies, FanoutPlan<Long, Object> next) {
                    String why;
                    try {
                        replies.get(never);
                        why = "get(never) answered";
                    } catch (IllegalArgumentException e) {
                        why = e.getMessage();
                    }
                    return (replies.ref(0) == FIELD) + "|" + replies.indexOf(never) + "|" + replies.all(never) + "|"
                            + why + "|" + String.join(",", refusals);
                }

                final List<String> refusals = new java.util.concurrent.CopyOnWriteArrayList<>();

                void refused(Runnable r, Class<? extends RuntimeException> expected) {
                    try {
                        r.run();
                        refusals.add("accepted");
                    } catch (RuntimeException e) {
                        refusals.add(expected.isInstance(e) ? "refused" : e.toString());
                    }
                }
            };
            try (FanoutServer s = b.get("/w/{key}", misuse, new ContextHttp()).port(0).adminPort(0).ioThreads(2)
                    .configuration(model).start();
                    RawHttp h = new RawHttp(s.port())) {
                RawHttp.Response r = h.exchange(RawHttp.get("/w/1"));
                assertEquals(200, r.status(), r.toString());
                assertEquals("true|-1|[]|no call of round 0 was planned with reference 'never'|refused,refused", r.text());
            }
        }
    }
}
