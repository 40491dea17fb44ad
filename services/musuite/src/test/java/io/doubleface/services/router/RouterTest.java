package io.doubleface.services.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.services.musuite.Concurrent;
import io.doubleface.services.musuite.TestServer;
import io.doubleface.services.router.v1.GetRequest;
import io.doubleface.services.router.v1.RouterGrpc;
import io.doubleface.services.router.v1.SetRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Router over twelve real gRPC leaves (four groups of three replicas) answers exactly as
 * {@link RouterReference} under every threading model, over HTTP and gRPC; gets spread over the
 * replicas and fail over; sets need a majority; bad input is 400 / {@code INVALID_ARGUMENT}.
 */
class RouterTest {

    static final int LEAVES = 12;
    static final RouterData DATA = new RouterData(42, 500, 20);
    static final RouterKeys LAYOUT = new RouterKeys(LEAVES, 3);
    static final RouterReference REFERENCE = new RouterReference(DATA, LAYOUT);
    static final RouterLeaf[] LEAF = new RouterLeaf[LEAVES];
    static TestServer cluster;

    @BeforeAll
    static void start() {
        cluster = start(LEAF);
    }

    static TestServer start(RouterLeaf[] leaves) {
        return new TestServer(LEAVES, i -> leaves[i] = new RouterLeaf(DATA, LAYOUT, i),
                (b, driver) -> RouterService.install(b, driver, 3, true));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static String httpGet(TestServer c, String key) throws Exception {
        HttpResponse<String> r = c.get(RouterService.GET_PATH + "?key=" + enc(key));
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    static String httpSet(TestServer c, String key, String value) throws Exception {
        HttpResponse<String> r = c.get(RouterService.SET_PATH + "?key=" + enc(key) + "&value=" + enc(value));
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    static RouterGrpc.RouterBlockingStub stub(TestServer c) {
        return RouterGrpc.newBlockingStub(c.channel).withDeadlineAfter(TestServer.GENEROUS.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.musuite.Models#ALL")
    void everyModelAnswersAsTheReferenceOverHttpAndGrpc(String model) throws Exception {
        cluster.server.switchTo(model);
        for (int n = 0; n < 30; n += 3) {
            String key = RouterData.key(n);
            assertEquals(REFERENCE.get(key).toJson(), httpGet(cluster, key), model + " " + key);
            assertEquals(REFERENCE.get(key).toProto(), stub(cluster).get(GetRequest.newBuilder().setKey(key).build()));
        }
        String absent = "absent:" + model;
        assertEquals(REFERENCE.get(absent).toJson(), httpGet(cluster, absent));
        assertTrue(httpGet(cluster, absent).contains("\"found\":false"));
        for (int i = 0; i < 12; i++) {
            String key = model + ":k" + i;
            String value = i % 3 == 0 ? "quote \" back\\slash é ✓ " + i : "v" + i + "-" + model;
            if (i % 2 == 0) {
                assertEquals(REFERENCE.set(key, value).toJson(), httpSet(cluster, key, value), model + " set " + key);
            } else {
                assertEquals(REFERENCE.set(key, value).toProto(),
                        stub(cluster).set(SetRequest.newBuilder().setKey(key).setValue(value).build()));
            }
            // every replica stored it: whichever one a get reads, the value is the new one
            for (int read = 0; read < 3; read++) {
                assertEquals(REFERENCE.get(key).toJson(), httpGet(cluster, key), model + " get " + key);
                assertEquals(REFERENCE.get(key).toProto(), stub(cluster).get(GetRequest.newBuilder().setKey(key)
                        .build()));
            }
        }
        // a key set again answers its latest value
        String key = model + ":k0";
        assertEquals(REFERENCE.set(key, "second").toJson(), httpSet(cluster, key, "second"));
        assertEquals(REFERENCE.get(key).toJson(), httpGet(cluster, key));
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.musuite.Models#ALL")
    void everyModelAnswersConcurrentGetsEachAsTheReference(String model) throws Exception {
        cluster.server.switchTo(model);
        List<String> keys = new java.util.ArrayList<>();
        for (int n = 0; n < 150; n++) {
            keys.add(n % 10 == 9 ? "absent:" + n : RouterData.key(n));
        }
        List<String> bodies = Concurrent.all(keys, 16, k -> Concurrent.get(cluster, RouterService.GET_PATH + "?key="
                + enc(k)));
        for (int i = 0; i < keys.size(); i++) {
            assertEquals(REFERENCE.get(keys.get(i)).toJson(), bodies.get(i), model + " " + keys.get(i));
        }
    }

    @Test
    void getsAreSpreadOverEveryReplicaAndSetsReachThemAll() throws Exception {
        cluster.server.switchTo("doubleface");
        String key = RouterData.key(1);
        List<Integer> replicas = REFERENCE.replicas(key);
        long[] before = new long[LEAVES];
        long[] setsBefore = new long[LEAVES];
        for (int i = 0; i < LEAVES; i++) {
            before[i] = LEAF[i].gets();
            setsBefore[i] = LEAF[i].sets();
        }
        for (int i = 0; i < 30; i++) {
            httpGet(cluster, key);
        }
        httpSet(cluster, "spread", "x");
        long total = 0;
        for (int i = 0; i < LEAVES; i++) {
            long gets = LEAF[i].gets() - before[i];
            total += gets;
            if (replicas.contains(i)) {
                assertTrue(gets >= 5, "replica " + i + " served " + gets + " of 30 gets");
            } else {
                assertEquals(0, gets, "leaf " + i + " is not a replica of " + key);
            }
            assertEquals(REFERENCE.replicas("spread").contains(i) ? 1 : 0, LEAF[i].sets() - setsBefore[i], "leaf " + i);
        }
        assertEquals(30, total);
        REFERENCE.set("spread", "x");
    }

    @Test
    void badInputGets400OverHttpAndInvalidArgumentOverGrpc() throws Exception {
        String longKey = "k".repeat(RouterKeys.MAX_KEY_BYTES + 1);
        String longValue = "v".repeat(RouterKeys.MAX_VALUE_BYTES + 1);
        String[] bad = {RouterService.GET_PATH, RouterService.GET_PATH + "?key=", RouterService.GET_PATH + "?key="
                + longKey, RouterService.GET_PATH + "?key=a&key=b", RouterService.GET_PATH + "?key=a&value=b",
            RouterService.SET_PATH + "?key=a", RouterService.SET_PATH + "?value=a", RouterService.SET_PATH
                + "?key=a&value=" + longValue, RouterService.SET_PATH + "?key=a&value=b&ttl=3"};
        for (String q : bad) {
            HttpResponse<String> r = cluster.get(q);
            assertEquals(400, r.statusCode(), q + " -> " + r.body());
            assertTrue(r.body().contains("key") || r.body().contains("value") || r.body().contains("parameter"),
                    r.body());
        }
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> stub(cluster).get(GetRequest.getDefaultInstance())));
        assertEquals(Status.Code.INVALID_ARGUMENT,
                code(() -> stub(cluster).get(GetRequest.newBuilder().setKey(longKey).build())));
        assertEquals(Status.Code.INVALID_ARGUMENT,
                code(() -> stub(cluster).set(SetRequest.newBuilder().setValue("v").build())));
        assertEquals(Status.Code.INVALID_ARGUMENT,
                code(() -> stub(cluster).set(SetRequest.newBuilder().setKey("k").setValue(longValue).build())));
        // an empty value is a value
        assertEquals(REFERENCE.set("empty", "").toJson(), httpSet(cluster, "empty", ""));
        assertEquals(REFERENCE.get("empty").toJson(), httpGet(cluster, "empty"));
    }

    static Status.Code code(Supplier<?> call) {
        try {
            call.get();
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    @Test
    void getsFailOverToTheNextReplicaAndSetsNeedAMajority() throws Exception {
        RouterLeaf[] leaves = new RouterLeaf[LEAVES];
        try (TestServer c = start(leaves)) {
            RouterReference ref = new RouterReference(DATA, LAYOUT);
            String key = RouterData.key(7);
            List<Integer> replicas = ref.replicas(key);
            c.leaves.stop(replicas.get(0));
            for (int i = 0; i < 6; i++) { // round robin: some of these go to the stopped replica first
                assertEquals(ref.get(key).toJson(), httpGet(c, key));
            }
            RouterResult.Stored twoOfThree = new RouterResult.Stored(key, replicas.subList(1, 3),
                    List.of(replicas.get(0)));
            ref.set(key, "two of three");
            assertEquals(twoOfThree.toJson(), httpSet(c, key, "two of three"));
            assertEquals(twoOfThree.toProto(), stub(c).set(SetRequest.newBuilder().setKey(key).setValue("two of three")
                    .build()));
            for (int i = 0; i < 6; i++) {
                assertEquals(ref.get(key).toJson(), httpGet(c, key));
            }
            c.leaves.stop(replicas.get(1));
            HttpResponse<String> noMajority = c.get(RouterService.SET_PATH + "?key=" + enc(key) + "&value=lost");
            assertEquals(503, noMajority.statusCode(), noMajority.body());
            assertEquals(Status.Code.UNAVAILABLE,
                    code(() -> stub(c).set(SetRequest.newBuilder().setKey(key).setValue("lost").build())));
            // no majority, but the surviving replica stored it: no rollback (documented)
            assertEquals(new RouterResult.Got(key, true, "lost").toJson(), httpGet(c, key));
            c.leaves.stop(replicas.get(2));
            HttpResponse<String> none = c.get(RouterService.GET_PATH + "?key=" + enc(key));
            assertEquals(503, none.statusCode(), none.body());
            assertEquals(Status.Code.UNAVAILABLE, code(() -> stub(c).get(GetRequest.newBuilder().setKey(key).build())));
            // another group is not affected
            String other = null;
            for (int n = 0; other == null; n++) {
                if (LAYOUT.group(RouterData.key(n)) != LAYOUT.group(key)) {
                    other = RouterData.key(n);
                }
            }
            assertEquals(ref.get(other).toJson(), httpGet(c, other));
        }
    }
}
