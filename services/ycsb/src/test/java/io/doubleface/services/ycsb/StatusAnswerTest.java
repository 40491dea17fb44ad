package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.StatusException;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.kv.KvRequest;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.ycsb.v1.FanoutServiceGrpc;
import io.doubleface.services.ycsb.v1.QueryReply;
import io.doubleface.services.ycsb.v1.QueryRequest;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Statuses of the service's choosing ({@link StatusException}, a binding's own status) over real
 * sockets and real KV shards, under every model, over HTTP and gRPC: thrown from decode, plan, a
 * reply handler, merge and encode; JSON bodies parsed, gRPC codes and descriptions checked, the
 * answers counted under {@code service_status}.
 */
@Timeout(120)
class StatusAnswerTest {

    static final List<String> MODELS = Models.ALL;

    static final byte[] CACHED = QueryReply.newBuilder().setBody(ByteString.copyFromUtf8("cached")).build().toByteArray();

    static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * {@code GET /product/{key}} and gRPC {@code Query(key)}: reads field 0 of record {@code key}, then
     * answers by the key: 900 an early 200 from plan, 901 a 409 from the reply handler, {@code 10k+3} a
     * JSON 404 from merge, 5 a response the binding answers 410, 8 a JSON 503 from encode, else
     * {@code ok:<bytes>}; a key over 10,000 is a 422 from decode.
     */
    static final class ProductService implements FanoutService<Long, Integer, String> {
        final Backend<KvRequest> a;

        ProductService(Backend<KvRequest> a) {
            this.a = a;
        }

        @Override
        public void plan(Long key, FanoutPlan<Long, Integer> plan) {
            if (key == 900) {
                throw StatusException.of(200, "application/x-protobuf", CACHED);
            }
            plan.call(a, (int) (key % a.shardCount()), KvRequest.readField(key % 100, 0), (q, call, reply) -> {
                if (q == 901) {
                    throw StatusException.of(409, "conflict on key " + q);
                }
                return reply.readableBytes();
            });
        }

        @Override
        public String merge(Long key, Replies<Integer> replies, FanoutPlan<Long, Integer> next) {
            if (key % 10 == 3) {
                throw StatusException.of(404, "application/json",
                        json("{\"error\":\"no product " + key + "\",\"status\":404}"));
            }
            if (key == 5) {
                return "gone";
            }
            if (key == 8) {
                return "refuse-at-encode";
            }
            if (key == 666) {
                throw new IllegalStateException("a bug in merge, class and message never answered");
            }
            return "ok:" + replies.get(0);
        }
    }

    static long checkKey(long key) {
        if (key > 10_000) {
            throw StatusException.of(422, "key " + key + " (expected: at most 10000)");
        }
        return key;
    }

    static String encodeText(String response) {
        if (response.equals("refuse-at-encode")) {
            throw StatusException.of(503, "application/json", json("{\"error\":\"encoder says no\",\"status\":503}"));
        }
        return response;
    }

    static final class ProductHttp implements HttpBinding<Long, String> {
        @Override
        public Long decode(HttpRequestView req) throws BadRequestException {
            return checkKey(Long.parseLong(req.pathParam("key")));
        }

        @Override
        public HttpResponseStatus status(String response) {
            return response.equals("gone") ? HttpResponseStatus.GONE : HttpResponseStatus.OK;
        }

        @Override
        public ByteBuf encode(String response, ByteBufAllocator alloc) {
            return ByteBufUtil.writeUtf8(alloc, encodeText(response));
        }

        @Override
        public String contentType() {
            return "text/plain; charset=utf-8";
        }
    }

    static final class ProductGrpc implements GrpcBinding<Long, String, QueryRequest, QueryReply> {
        @Override
        public MethodDescriptor<QueryRequest, QueryReply> method() {
            return FanoutServiceGrpc.getQueryMethod();
        }

        @Override
        public Long decode(QueryRequest r) {
            return checkKey(r.getKey());
        }

        @Override
        public QueryReply encode(String response) {
            return QueryReply.newBuilder().setBody(ByteString.copyFromUtf8(encodeText(response))).build();
        }
    }

    static final class Cluster implements AutoCloseable {
        final KvLeafServer leaf = KvLeafServer.builder().shards(4).basePort(0).records(TestCluster.RECORDS).start();
        final FanoutServer server;
        final ManagedChannel channel;

        Cluster(String model) {
            this(model, io.doubleface.api.ErrorEncoder.plainText());
        }

        Cluster(String model, io.doubleface.api.ErrorEncoder errors) {
            FanoutServer.Builder b = FanoutServer.builder().errorEncoder(errors);
            Backend<KvRequest> a = b.backend("a", KvDriver.of(leaf.addresses(), KvDriver.Options.DEFAULT
                    .withCallTimeout(TestCluster.GENEROUS).withConnectTimeout(Duration.ofSeconds(5))));
            ProductService service = new ProductService(a);
            b.get("/product/{key}", service, new ProductHttp()).grpc(0, service, new ProductGrpc());
            server = b.port(0).adminPort(0).ioThreads(2).configuration(model).deadline(TestCluster.GENEROUS).start();
            channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
        }

        RawHttp.Response get(long key) throws Exception {
            try (RawHttp c = new RawHttp(server.port())) {
                return c.exchange(RawHttp.get("/product/" + key));
            }
        }

        QueryReply grpc(long key) {
            return FanoutServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .query(QueryRequest.newBuilder().setKey(key).build());
        }

        Status grpcFailure(long key) {
            return assertThrows(StatusRuntimeException.class, () -> grpc(key)).getStatus();
        }

        @Override
        public void close() {
            channel.shutdownNow();
            server.close();
            leaf.close();
        }
    }

    static void assertJson(RawHttp.Response r, int status, String error) {
        assertEquals(status, r.status(), r.toString());
        assertEquals("application/json", r.header("content-type"), r.toString());
        Map<String, Object> body = JsonDoc.object(r.text());
        assertEquals(error, JsonDoc.path(body, "error").asString());
        assertEquals(status, JsonDoc.path(body, "status").asLong());
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void theServiceAnswersItsOwnStatusesOverHttpAndGrpc(String model) throws Exception {
        try (Cluster c = new Cluster(model)) {
            RawHttp.Response ok = c.get(7);
            assertEquals(200, ok.status(), ok.toString());
            assertTrue(ok.text().startsWith("ok:"), ok.toString());

            assertJson(c.get(13), 404, "no product 13"); // from merge
            assertJson(c.get(8), 503, "encoder says no"); // from encode

            RawHttp.Response early = c.get(900); // a 2xx from plan, no shard call
            assertEquals(200, early.status(), early.toString());
            assertEquals("application/x-protobuf", early.header("content-type"));
            assertEquals("cached", QueryReply.parseFrom(early.body()).getBody().toStringUtf8());

            RawHttp.Response conflict = c.get(901); // from a reply handler
            assertEquals(409, conflict.status(), conflict.toString());
            assertEquals("conflict on key 901\n", conflict.text());
            assertEquals("text/plain; charset=utf-8", conflict.header("content-type"));

            RawHttp.Response gone = c.get(5); // the binding's own status, with the body it encodes
            assertEquals(410, gone.status(), gone.toString());
            assertEquals("gone", gone.text());

            RawHttp.Response tooLarge = c.get(20_000); // from decode
            assertEquals(422, tooLarge.status(), tooLarge.toString());
            assertEquals("key 20000 (expected: at most 10000)\n", tooLarge.text());

            // gRPC: the same service, the code each status maps to
            assertTrue(c.grpc(7).getBody().toStringUtf8().startsWith("ok:"));
            Status notFound = c.grpcFailure(13);
            assertEquals(Status.Code.NOT_FOUND, notFound.getCode(), notFound.toString());
            assertEquals("status 404", notFound.getDescription());
            assertEquals(Status.Code.UNAVAILABLE, c.grpcFailure(8).getCode());
            assertEquals("cached", c.grpc(900).getBody().toStringUtf8(), "a 2xx body is the response message");
            Status conflictG = c.grpcFailure(901);
            assertEquals(Status.Code.ALREADY_EXISTS, conflictG.getCode());
            assertEquals("conflict on key 901", conflictG.getDescription());
            Status invalid = c.grpcFailure(20_000);
            assertEquals(Status.Code.FAILED_PRECONDITION, invalid.getCode(), "422 is a 4xx without a gRPC twin");

            // counted: 404, 503, 409, 410, 422 over HTTP and 404, 503, 409, 422 over gRPC
            Map<String, Object> stats = JsonDoc.object(c.server.statsJson());
            assertEquals(9, JsonDoc.path(stats, "requests", "service_status").asLong(), c.server.statsJson());
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void theFrameworksOwnAnswersTakeTheErrorEncodersBodyAndNameNoException(String model) throws Exception {
        try (Cluster c = new Cluster(model, io.doubleface.api.ErrorEncoder.json())) {
            RawHttp.Response unknown = call(c, RawHttp.get("/nope"));
            assertJson(unknown, 404, "no such path: /nope");
            assertJson(call(c, RawHttp.get("/product/abc")), 400, "bad request: For input string: \"abc\"");
            RawHttp.Response wrongMethod = call(c, "DELETE /product/1 HTTP/1.1\r\nHost: x\r\n\r\n");
            assertJson(wrongMethod, 405, "method DELETE not allowed on /product/1 (use GET)");
            // a bug in the service's code: the step is named, the exception is not (it is logged)
            assertJson(c.get(666), 500, "merge failed");
            // a status of the service's choosing keeps its own body
            assertJson(c.get(13), 404, "no product 13");
        }
        try (Cluster c = new Cluster("doubleface", io.doubleface.api.ErrorEncoder.problemDetails())) {
            RawHttp.Response r = call(c, RawHttp.get("/nope"));
            assertEquals(404, r.status());
            assertEquals("application/problem+json", r.header("content-type"));
            Map<String, Object> p = JsonDoc.object(r.text());
            assertEquals("about:blank", JsonDoc.path(p, "type").asString());
            assertEquals("Not Found", JsonDoc.path(p, "title").asString());
            assertEquals(404, JsonDoc.path(p, "status").asLong());
            assertEquals("no such path: /nope", JsonDoc.path(p, "detail").asString());
        }
    }

    static RawHttp.Response call(Cluster c, String raw) throws Exception {
        try (RawHttp h = new RawHttp(c.server.port())) {
            return h.exchange(raw);
        }
    }

    @Test
    void statusesOutOfRangeAndMissingPartsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> StatusException.of(302, "moved"));
        assertThrows(IllegalArgumentException.class, () -> StatusException.of(600, "no"));
        assertThrows(IllegalArgumentException.class, () -> StatusException.of(404, " ", new byte[0]));
        assertThrows(NullPointerException.class, () -> StatusException.of(404, (String) null));
        StatusException e = StatusException.of(404, "application/json", json("{}"));
        byte[] body = e.body();
        body[0] = 'x';
        assertEquals("{}", new String(e.body(), StandardCharsets.UTF_8), "the body is copied");
        assertEquals("NOT_FOUND", e.grpcCode());
        assertEquals("OK", StatusException.of(201, "made").grpcCode());
        assertEquals("INTERNAL", StatusException.of(507, "full").grpcCode());
    }
}
