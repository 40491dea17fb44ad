package io.doubleface.services.recommend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.services.musuite.TestServer;
import io.doubleface.services.recommend.v1.PredictRequest;
import io.doubleface.services.recommend.v1.RecommendGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Recommend over four real gRPC leaves answers exactly as {@link RecommendReference} under every
 * threading model, over HTTP and gRPC; bad queries are 400 / {@code INVALID_ARGUMENT}; a stopped
 * leaf is left out and listed; no leaf is a 503.
 */
class RecommendTest {

    static final int LEAVES = 4;
    static final RecommendData DATA = RecommendData.of(7, 100, 150, 3_000);
    static final RecommendReference REFERENCE = new RecommendReference(DATA, LEAVES);
    static TestServer cluster;

    @BeforeAll
    static void start() {
        cluster = start(LEAVES);
    }

    static TestServer start(int leaves) {
        return new TestServer(leaves, i -> new RecommendLeaf(DATA, i, leaves),
                (b, driver) -> RecommendService.install(b, driver, DATA, true));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    static RecommendGrpc.RecommendBlockingStub stub(TestServer c) {
        return RecommendGrpc.newBlockingStub(c.channel).withDeadlineAfter(TestServer.GENEROUS.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.musuite.Models#ALL")
    void everyModelAnswersAsTheReferenceOverHttpAndGrpc(String model) throws Exception {
        cluster.server.switchTo(model);
        int predicted = 0;
        int byTwoOrMore = 0;
        for (int j = 0; j < 30; j++) {
            int[] q = DATA.query(j);
            RecommendResult expected = REFERENCE.predict(q[0], q[1], List.of());
            predicted += expected.predicted() ? 1 : 0;
            byTwoOrMore += expected.leavesPredicting() >= 2 ? 1 : 0;
            HttpResponse<String> r = cluster.get("/recommend?query=" + j);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(expected.toJson(), r.body(), model + " http query " + j);
            assertEquals(expected.toProto(), stub(cluster).predict(PredictRequest.newBuilder().setQuery(j).build()),
                    model + " grpc query " + j);
            RecommendResult pair = REFERENCE.predict(j, 149 - j, List.of());
            assertEquals(pair.toJson(), cluster.get("/recommend?user=" + j + "&item=" + (149 - j)).body());
            assertEquals(pair.toProto(), stub(cluster).predict(PredictRequest.newBuilder().setUser(j)
                    .setItem(149 - j).build()));
        }
        assertTrue(predicted >= 20 && byTwoOrMore >= 10, "weak queries: " + predicted + " predicted, "
                + byTwoOrMore + " by two leaves or more");
    }

    @Test
    void badQueriesGet400OverHttpAndInvalidArgumentOverGrpc() throws Exception {
        cluster.server.switchTo("doubleface");
        String[] bad = {"", "?user=1", "?item=1", "?query=1&user=1&item=2", "?user=-1&item=1", "?user=100&item=1",
            "?user=1&item=150", "?user=x&item=1", "?query=-1", "?user=1&item=1&k=3", "?user=99999999999&item=1"};
        for (String q : bad) {
            HttpResponse<String> r = cluster.get("/recommend" + q);
            assertEquals(400, r.statusCode(), q + " -> " + r.body());
            assertTrue(r.body().length() > 10, r.body());
        }
        List<PredictRequest> badGrpc = List.of(PredictRequest.getDefaultInstance(),
                PredictRequest.newBuilder().setUser(1).build(),
                PredictRequest.newBuilder().setQuery(1).setItem(1).build(),
                PredictRequest.newBuilder().setUser(100).setItem(1).build(),
                PredictRequest.newBuilder().setUser(1).setItem(-1).build());
        for (PredictRequest r : badGrpc) {
            try {
                stub(cluster).predict(r);
                throw new AssertionError("accepted " + r);
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), r.toString());
            }
        }
    }

    @Test
    void aStoppedLeafIsLeftOutAndListedAndNoLeafIs503() throws Exception {
        try (TestServer c = start(LEAVES)) {
            c.leaves.stop(3);
            for (int j = 0; j < 10; j++) {
                int[] q = DATA.query(j);
                RecommendResult expected = REFERENCE.predict(q[0], q[1], List.of(3));
                assertEquals(expected.toJson(), c.get("/recommend?query=" + j).body(), "query " + j);
                assertEquals(expected.toProto(), stub(c).predict(PredictRequest.newBuilder().setQuery(j).build()));
                assertEquals(List.of(3), expected.missingLeaves());
            }
            for (int l = 0; l < 3; l++) {
                c.leaves.stop(l);
            }
            assertEquals(503, c.get("/recommend?query=1").statusCode());
            try {
                stub(c).predict(PredictRequest.newBuilder().setQuery(1).build());
                throw new AssertionError("answered with no leaf");
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
            }
        }
    }
}
