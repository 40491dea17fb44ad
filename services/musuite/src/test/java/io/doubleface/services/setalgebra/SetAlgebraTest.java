package io.doubleface.services.setalgebra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.services.musuite.TestServer;
import io.doubleface.services.setalgebra.v1.SearchRequest;
import io.doubleface.services.setalgebra.v1.SetAlgebraGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Set Algebra over four real gRPC leaves answers exactly as {@link SetAlgebraReference} under every
 * threading model, over HTTP and gRPC; bad queries are 400 / {@code INVALID_ARGUMENT}; a stopped
 * leaf's documents are missing and the leaf listed; no leaf is a 503.
 */
class SetAlgebraTest {

    static final int LEAVES = 4;
    static final SetAlgebraData DATA = SetAlgebraData.of(42, 3_000, 500, 20);
    static final SetAlgebraReference REFERENCE = new SetAlgebraReference(DATA);
    static TestServer cluster;

    @BeforeAll
    static void start() {
        cluster = start(LEAVES);
    }

    static TestServer start(int leaves) {
        return new TestServer(leaves, i -> new SetAlgebraLeaf(DATA, i, leaves),
                (b, driver) -> SetAlgebraService.install(b, driver, DATA, true));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    static SetAlgebraGrpc.SetAlgebraBlockingStub stub(TestServer c) {
        return SetAlgebraGrpc.newBlockingStub(c.channel).withDeadlineAfter(TestServer.GENEROUS.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    static SetAlgebraQuery synthetic(int j, int limit) {
        return new SetAlgebraQuery(DATA.query(j), List.of(), limit);
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.musuite.Models#ALL")
    void everyModelAnswersAsTheReferenceOverHttpAndGrpc(String model) throws Exception {
        cluster.server.switchTo(model);
        int nonEmpty = 0;
        int cut = 0;
        for (int j = 0; j < 20; j++) {
            for (int limit : new int[] {1, 5, 100}) {
                SetAlgebraResult expected = REFERENCE.search(synthetic(j, limit), LEAVES, List.of());
                nonEmpty += expected.count() > 0 ? 1 : 0;
                cut += expected.count() > limit ? 1 : 0;
                HttpResponse<String> r = cluster.get("/setalgebra?query=" + j + "&limit=" + limit);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(expected.toJson(), r.body(), model + " http query " + j + " limit " + limit);
                assertEquals(expected.toProto(), stub(cluster).search(SearchRequest.newBuilder().setQuery(j)
                        .setLimit(limit).build()), model + " grpc query " + j);
            }
        }
        assertTrue(nonEmpty == 60 && cut >= 10, "weak test queries: " + nonEmpty + " non-empty, " + cut + " cut");
        // words of the caller's, a stop word and a duplicate among them
        String stop = DATA.stopWords().get(0);
        List<String> words = new ArrayList<>(DATA.query(3));
        SetAlgebraQuery q = new SetAlgebraQuery(words, List.of(stop), 100);
        SetAlgebraResult expected = REFERENCE.search(q, LEAVES, List.of());
        String terms = stop + "," + String.join(",", words) + "," + words.get(0);
        assertEquals(expected.toJson(), cluster.get("/setalgebra?terms=" + terms).body());
        List<String> given = new ArrayList<>(List.of(stop));
        given.addAll(words);
        assertEquals(expected.toProto(), stub(cluster).search(SearchRequest.newBuilder().addAllTerms(given).build()));
        assertTrue(cluster.get("/setalgebra?terms=" + terms).body().contains("\"stop_words\":[\"" + stop + "\"]"));
    }

    @Test
    void badQueriesGet400OverHttpAndInvalidArgumentOverGrpc() throws Exception {
        cluster.server.switchTo("doubleface");
        String stop = DATA.stopWords().get(0);
        String[] bad = {"", "?query=1&terms=w200", "?terms=", "?terms=w1,,w2", "?terms=w-1", "?terms="
                + "w100,w101,w102,w103,w104,w105,w106,w107,w108,w109,w110", "?terms=" + stop, "?query=1&limit=0",
            "?query=1&limit=10001", "?query=-2", "?query=1&sort=asc", "?terms=" + "w".repeat(65)};
        for (String q : bad) {
            HttpResponse<String> r = cluster.get("/setalgebra" + q);
            assertEquals(400, r.statusCode(), q + " -> " + r.body());
            assertTrue(r.body().length() > 10, r.body());
        }
        assertTrue(cluster.get("/setalgebra?terms=" + stop).body().contains("only stop words"));
        List<SearchRequest> badGrpc = List.of(SearchRequest.getDefaultInstance(),
                SearchRequest.newBuilder().setQuery(1).addTerms("w300").build(),
                SearchRequest.newBuilder().addTerms(stop).build(),
                SearchRequest.newBuilder().addTerms("a b").build(),
                SearchRequest.newBuilder().setQuery(-1).build(),
                SearchRequest.newBuilder().setQuery(1).setLimit(-5).build());
        for (SearchRequest r : badGrpc) {
            try {
                stub(cluster).search(r);
                throw new AssertionError("accepted " + r);
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), r.toString());
            }
        }
    }

    @Test
    void aStoppedLeafsDocumentsAreMissingAndNoLeafIs503() throws Exception {
        try (TestServer c = start(LEAVES)) {
            c.leaves.stop(2);
            for (int j = 0; j < 10; j++) {
                SetAlgebraResult expected = REFERENCE.search(synthetic(j, 50), LEAVES, List.of(2));
                assertEquals(expected.toJson(), c.get("/setalgebra?limit=50&query=" + j).body(), "query " + j);
                assertEquals(expected.toProto(), stub(c).search(SearchRequest.newBuilder().setQuery(j).setLimit(50)
                        .build()));
                assertTrue(expected.toJson().contains("\"missing_leaves\":[2]"));
            }
            c.leaves.stop(0);
            c.leaves.stop(1);
            c.leaves.stop(3);
            assertEquals(503, c.get("/setalgebra?query=1").statusCode());
            try {
                stub(c).search(SearchRequest.newBuilder().setQuery(1).build());
                throw new AssertionError("answered with no leaf");
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
            }
        }
    }
}
