package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.BodyCodec;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * The service API end to end over real KV shards (two backends), under every model: routes with
 * path variables and bodies, a two-round request whose second round goes to the other backend and
 * whose every step runs on one thread under DoubleFace, and the failure policies when a stage-2
 * shard is down or silent.
 */
@Timeout(120)
class ServiceApiTest {

    static final int SHARDS = 4;
    static final List<String> MODELS = Models.ALL;
    static final int FIELD_REPLY = Records.replySize(KvRequest.readField(0, 0));

    /** The request: a key, and the threads its steps ran on. */
    static final class Chain {
        final long key;
        final Set<Thread> threads = ConcurrentHashMap.newKeySet();
        int first = -1; // bytes of round 0's reply, kept by merge for the final answer

        Chain(long key) {
            this.key = key;
        }
    }

    /**
     * {@code GET /chain/{key}}: round 0 reads field 0 of record {@code key} from backend "a",
     * round 1 (planned by merge from round 0's reply) reads record {@code key + 1} from backend "b".
     * Answers {@code key:bytes0:bytes1:threads} or, under best effort, {@code …:missing=b/shard}.
     */
    static final class ChainService implements FanoutService<Chain, Integer, String> {
        final Backend<KvRequest> a;
        final Backend<KvRequest> b;
        final FailurePolicy policy;
        final ReplyHandler<Chain, ByteBuf, Integer> length = (q, call, reply) -> {
            q.threads.add(Thread.currentThread());
            return reply.readableBytes();
        };

        ChainService(Backend<KvRequest> a, Backend<KvRequest> b, FailurePolicy policy) {
            this.a = a;
            this.b = b;
            this.policy = policy;
        }

        @Override
        public void plan(Chain q, FanoutPlan<Chain, Integer> plan) {
            q.threads.add(Thread.currentThread());
            onlyAView(plan);
            onlyAView(plan.context());
            plan.failurePolicy(policy);
            plan.call(a, (int) (q.key % a.shardCount()), KvRequest.readField(q.key, 0), length);
        }

        @Override
        public String merge(Chain q, Replies<Integer> replies, FanoutPlan<Chain, Integer> next) {
            q.threads.add(Thread.currentThread());
            onlyAView(replies);
            onlyAView(next);
            onlyAView(replies.context());
            if (replies.round() == 0) {
                q.first = replies.get(0);
                long k = q.key + 1;
                next.call(b, (int) (k % b.shardCount()), KvRequest.readField(k, 0), length);
                return null;
            }
            String tail = replies.ok(0) ? String.valueOf(replies.get(0))
                    : "missing=" + replies.backend(0).name() + "/" + replies.shard(0) + "("
                            + replies.failure(0).kind().name().toLowerCase() + ")";
            return q.key + ":" + q.first + ":" + tail + ":" + q.threads.size();
        }
    }

    /**
     * Fails the request (500) if the server handed the service an object of a public class (or one
     * extending a public class), such as the engine's own request object: the service must see only
     * views offering nothing but the API's methods.
     */
    static void onlyAView(Object o) {
        for (Class<?> k = o.getClass(); k != Object.class; k = k.getSuperclass()) {
            if (java.lang.reflect.Modifier.isPublic(k.getModifiers())) {
                throw new IllegalStateException(o.getClass().getName() + " is, or extends, public " + k.getName());
            }
        }
    }

    static final class ChainBinding implements HttpBinding<Chain, String> {
        @Override
        public Chain decode(HttpRequestView req) throws BadRequestException {
            long key = req.pathLong("key");
            if (key < 0 || key >= TestCluster.RECORDS - 1) {
                throw new BadRequestException("key: " + key + " (expected: 0.." + (TestCluster.RECORDS - 2) + ")");
            }
            return new Chain(key);
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

    /** {@code {"keys":[1,2,3]}}, parsed by a codec the service picks (here a strict little parser). */
    static final BodyCodec<List<Long>> KEYS = body -> {
        String s = body.toString(StandardCharsets.UTF_8).trim();
        Matcher m = Pattern.compile("\\{\\s*\"keys\"\\s*:\\s*\\[([0-9,\\s]*)]\\s*}").matcher(s);
        if (!m.matches()) {
            throw new IllegalArgumentException("expected {\"keys\":[numbers]}");
        }
        List<Long> keys = new ArrayList<>();
        for (String k : m.group(1).split(",")) {
            if (!k.isBlank()) {
                keys.add(Long.parseLong(k.trim()));
            }
        }
        return keys;
    };

    /** {@code POST /sum} with a JSON body of keys: reads field 0 of each from backend "a", answers the total bytes. */
    static final class SumService implements FanoutService<List<Long>, Integer, String> {
        final Backend<KvRequest> a;

        SumService(Backend<KvRequest> a) {
            this.a = a;
        }

        @Override
        public void plan(List<Long> keys, FanoutPlan<List<Long>, Integer> plan) {
            for (long k : keys) {
                plan.call(a, (int) (k % a.shardCount()), KvRequest.readField(k, 0), (q, c, r) -> r.readableBytes());
            }
        }

        @Override
        public String merge(List<Long> keys, Replies<Integer> replies, FanoutPlan<List<Long>, Integer> next) {
            return "sum=" + replies.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    static final class SumBinding implements HttpBinding<List<Long>, String> {
        @Override
        public List<Long> decode(HttpRequestView req) throws BadRequestException {
            List<Long> keys = req.body(KEYS);
            if (keys.isEmpty()) {
                throw new BadRequestException("keys: empty (expected: at least one)");
            }
            return keys;
        }

        @Override
        public HttpResponseStatus status(String response) {
            return HttpResponseStatus.CREATED; // a binding's own success status
        }

        @Override
        public ByteBuf encode(String response, ByteBufAllocator alloc) {
            return ByteBufUtil.writeUtf8(alloc, response);
        }
    }

    /** Two KV leaves, a server with both backends; backend b's shard 1 may be replaced. */
    static final class Cluster implements AutoCloseable {
        final KvLeafServer leafA = KvLeafServer.builder().shards(SHARDS).basePort(0).records(TestCluster.RECORDS).start();
        final KvLeafServer leafB = KvLeafServer.builder().shards(SHARDS).basePort(0).records(TestCluster.RECORDS).start();
        final FanoutServer server;

        Cluster(String model, InetSocketAddress bShard1, Duration deadline) {
            List<InetSocketAddress> b = new ArrayList<>(leafB.addresses());
            if (bShard1 != null) {
                b.set(1, bShard1);
            }
            KvDriver.Options o = KvDriver.Options.DEFAULT.withCallTimeout(TestCluster.GENEROUS)
                    .withConnectTimeout(Duration.ofSeconds(5));
            FanoutServer.Builder sb = FanoutServer.builder();
            Backend<KvRequest> a = sb.backend("a", KvDriver.of(leafA.addresses(), o));
            Backend<KvRequest> bb = sb.backend("b", KvDriver.of(b, o));
            sb.get("/chain/{key}", new ChainService(a, bb, FailurePolicy.failFast()), new ChainBinding())
                    .get("/chain/{key}/best-effort", new ChainService(a, bb, FailurePolicy.bestEffort()), new ChainBinding())
                    .post("/sum", new SumService(a), new SumBinding());
            server = sb.port(0).adminPort(0).ioThreads(2).configuration(model).deadline(deadline).start();
        }

        RawHttp.Response call(String raw) throws Exception {
            try (RawHttp c = new RawHttp(server.port())) {
                return c.exchange(raw);
            }
        }

        @Override
        public void close() {
            server.close();
            leafA.close();
            leafB.close();
        }
    }

    static String post(String path, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                + b.length + "\r\n\r\n" + body;
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void twoRoundsOverTwoBackendsAnswerOnceAndStayOnOneThreadUnderDoubleFace(String model) throws Exception {
        try (Cluster c = new Cluster(model, null, TestCluster.GENEROUS)) {
            for (long key = 0; key < 40; key++) {
                RawHttp.Response r = c.call(RawHttp.get("/chain/" + key));
                assertEquals(200, r.status(), model + " " + r);
                String[] parts = r.text().split(":");
                assertEquals(key + ":" + FIELD_REPLY + ":" + FIELD_REPLY, parts[0] + ":" + parts[1] + ":" + parts[2],
                        model);
                if (model.startsWith("doubleface")) {
                    assertEquals("1", parts[3], model + ": plan, both rounds' replies and merges on one thread");
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void routesGiveTheirStatusWithAReason(String model) throws Exception {
        try (Cluster c = new Cluster(model, null, TestCluster.GENEROUS)) {
            RawHttp.Response sum = c.call(post("/sum", "{\"keys\": [1, 2, 3]}"));
            assertEquals(201, sum.status(), sum.toString());
            assertEquals("sum=" + 3 * FIELD_REPLY, sum.text());

            RawHttp.Response unknown = c.call(RawHttp.get("/nope"));
            assertEquals(404, unknown.status());
            assertTrue(unknown.text().contains("no such path: /nope"), unknown.toString());

            RawHttp.Response wrongMethod = c.call(post("/chain/3", "{}"));
            assertEquals(405, wrongMethod.status());
            assertEquals("GET", wrongMethod.header("allow"));
            RawHttp.Response wrongMethod2 = c.call(RawHttp.get("/sum"));
            assertEquals(405, wrongMethod2.status());
            assertEquals("POST", wrongMethod2.header("allow"));

            RawHttp.Response badVar = c.call(RawHttp.get("/chain/abc"));
            assertEquals(400, badVar.status());
            assertEquals("key: 'abc' (expected: a number)\n", badVar.text());

            RawHttp.Response badJson = c.call(post("/sum", "{\"keys\": [1, 2"));
            assertEquals(400, badJson.status());
            assertEquals("malformed request body: expected {\"keys\":[numbers]}\n", badJson.text());

            RawHttp.Response noBody = c.call(post("/sum", ""));
            assertEquals(400, noBody.status());
            assertEquals("request body: empty (expected: a body)\n", noBody.text());
        }
    }

    @Test
    void eachRouteIsCountedApartInStatsAndMetrics() throws Exception {
        try (Cluster c = new Cluster("doubleface", null, TestCluster.GENEROUS)) {
            for (int i = 0; i < 3; i++) {
                assertEquals(201, c.call(post("/sum", "{\"keys\": [" + i + "]}")).status());
            }
            assertEquals(400, c.call(post("/sum", "{\"keys\": [1, 2")).status());
            assertEquals(200, c.call(RawHttp.get("/chain/1")).status());
            assertEquals(200, c.call(RawHttp.get("/chain/2")).status());
            assertEquals(400, c.call(RawHttp.get("/chain/abc")).status());
            assertEquals(404, c.call(RawHttp.get("/nope")).status()); // no route: counted server-wide only
            String stats;
            String metrics;
            try (RawHttp admin = new RawHttp(c.server.adminPort())) {
                stats = admin.exchange(RawHttp.get("/admin/stats")).text();
            }
            try (RawHttp admin = new RawHttp(c.server.adminPort())) {
                metrics = admin.exchange(RawHttp.get("/metrics")).text();
            }
            assertTrue(stats.contains("{\"route\":\"GET /chain/{key}\",\"answered\":3,\"ok\":2,\"bad_request\":1,\"mean_ms\":"),
                    stats);
            assertTrue(stats.contains("{\"route\":\"GET /chain/{key}/best-effort\",\"answered\":0,\"mean_ms\":0.0}"), stats);
            assertTrue(stats.contains("{\"route\":\"POST /sum\",\"answered\":4,\"ok\":3,\"bad_request\":1,\"mean_ms\":"),
                    stats);
            assertTrue(metrics.contains("doubleface_route_requests_total{outcome=\"ok\",route=\"POST /sum\",status=\"200\"} 3.0"),
                    metrics);
            assertTrue(Pattern.compile("(?m)^doubleface_route_latency_seconds_count\\{route=\"GET /chain/\\{key}\"} 3(\\.0)?$")
                    .matcher(metrics).find(), metrics);
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void stageTwoShardDownFailsFastOrIsReportedUnderBestEffort(String model) throws Exception {
        // bound but never listening, and held for the whole test: a connection there is refused, and no
        // server started meanwhile can be given the port (closing a probe socket first allowed both)
        try (java.net.Socket held = new java.net.Socket()) {
            held.bind(new InetSocketAddress("127.0.0.1", 0));
            InetSocketAddress dead = (InetSocketAddress) held.getLocalSocketAddress();
            try (Cluster c = new Cluster(model, dead, TestCluster.GENEROUS)) {
                // key 0: round 1 reads key 1 on backend b's shard 1, which is down
                RawHttp.Response failFast = c.call(RawHttp.get("/chain/0"));
                assertEquals(503, failFast.status(), failFast.toString());
                assertTrue(failFast.text().startsWith("backend b: shard 1 unavailable"), failFast.text());

                RawHttp.Response best = c.call(RawHttp.get("/chain/0/best-effort"));
                assertEquals(200, best.status(), best.toString());
                assertTrue(best.text().startsWith("0:" + FIELD_REPLY + ":missing=b/1(unavailable)"), best.text());

                RawHttp.Response fine = c.call(RawHttp.get("/chain/1"));
                assertEquals(200, fine.status(), "a request not touching the dead shard is answered: " + fine);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void deadlineInsideStageTwoAnswers504OrMergesWhatArrived(String model) throws Exception {
        try (BlackHole silent = new BlackHole();
                Cluster c = new Cluster(model, silent.address(), Duration.ofMillis(700))) {
            RawHttp.Response failFast = c.call(RawHttp.get("/chain/0"));
            assertEquals(504, failFast.status(), failFast.toString());
            // the loop models' deadline timer answers; the blocking models' call, bounded by the time
            // left, times out at the same moment and answers first
            assertTrue(failFast.text().equals("deadline of 700 ms exceeded with 1 of 1 shard replies missing (round 1)\n")
                    || failFast.text().startsWith("backend b: shard 1 timed out"), failFast.text());
            if (model.startsWith("doubleface") || model.startsWith("type2")) {
                assertTrue(failFast.text().endsWith("(round 1)\n"), failFast.text());
            }

            RawHttp.Response best = c.call(RawHttp.get("/chain/0/best-effort"));
            assertEquals(200, best.status(), best.toString());
            assertTrue(best.text().startsWith("0:" + FIELD_REPLY + ":missing=b/1(timeout)"), best.text());
        }
    }
}
