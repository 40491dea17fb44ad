package io.doubleface.services.hdsearch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.services.hdsearch.v1.HdSearchGrpc;
import io.doubleface.services.hdsearch.v1.SearchReply;
import io.doubleface.services.hdsearch.v1.SearchRequest;
import io.doubleface.services.musuite.Concurrent;
import io.doubleface.services.musuite.TestServer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * HDSearch over four real gRPC leaves on loopback answers exactly as {@link HdSearchReference} under
 * every threading model, over HTTP and gRPC; bad queries get 400 / {@code INVALID_ARGUMENT}; a
 * stopped leaf leaves its candidates out and is listed, no leaf at all is a 503.
 */
class HdSearchTest {

    static final int LEAVES = 4;
    static final HdSearchData DATA = HdSearchData.of(42, 2_000, 16, 20);
    static final LshIndex INDEX = LshIndex.build(DATA, 8, 8, 7);
    static final HdSearchReference REFERENCE = new HdSearchReference(DATA, INDEX);
    static TestServer cluster;

    @BeforeAll
    static void start() {
        cluster = start(LEAVES);
    }

    static TestServer start(int leaves) {
        return new TestServer(leaves, i -> new HdSearchLeaf(DATA, i, leaves),
                (b, driver) -> HdSearchService.install(b, driver, DATA, INDEX, true));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    static SearchReply grpc(TestServer c, SearchRequest r) {
        return HdSearchGrpc.newBlockingStub(c.channel)
                .withDeadlineAfter(TestServer.GENEROUS.toMillis(), TimeUnit.MILLISECONDS).search(r);
    }

    static String vectorParam(float[] v) {
        StringJoiner j = new StringJoiner(",");
        for (float x : v) {
            j.add(Float.toString(x));
        }
        return j.toString();
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.musuite.Models#ALL")
    void everyModelAnswersAsTheReferenceOverHttpAndGrpc(String model) throws Exception {
        cluster.server.switchTo(model);
        int nonEmpty = 0;
        for (int j = 0; j < 8; j++) {
            for (int k : new int[] {1, 10, 100}) {
                HdSearchResult expected = REFERENCE.search(DATA.query(j), k);
                nonEmpty += expected.neighbors().isEmpty() ? 0 : 1;
                HttpResponse<String> r = cluster.get("/hdsearch?query=" + j + "&k=" + k);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(expected.toJson(), r.body(), model + " http query " + j + " k=" + k);
                assertEquals(expected.toProto(), grpc(cluster, SearchRequest.newBuilder().setQuery(j).setK(k).build()),
                        model + " grpc query " + j + " k=" + k);
            }
        }
        assertTrue(nonEmpty > 20, "too few queries with neighbours: " + nonEmpty);
        // a vector of the caller's, over both upstreams
        float[] v = DATA.point(123);
        HdSearchResult expected = REFERENCE.search(v, 5);
        assertEquals(123, expected.neighbors().get(0).id(), "a corpus point is its own nearest neighbour");
        HttpResponse<String> r = cluster.get("/hdsearch?k=5&vector=" + vectorParam(v));
        assertEquals(expected.toJson(), r.body(), model + " http vector");
        SearchRequest.Builder g = SearchRequest.newBuilder().setK(5);
        for (float x : v) {
            g.addVector(x);
        }
        assertEquals(expected.toProto(), grpc(cluster, g.build()), model + " grpc vector");
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("io.doubleface.services.musuite.Models#ALL")
    void everyModelAnswersConcurrentQueriesEachAsTheReference(String model) throws Exception {
        cluster.server.switchTo(model);
        List<Integer> queries = new ArrayList<>();
        for (int j = 0; j < 120; j++) {
            queries.add(j);
        }
        List<String> bodies = Concurrent.all(queries, 16, j -> Concurrent.get(cluster, "/hdsearch?query=" + j
                + "&k=" + (1 + j % 20)));
        for (int j : queries) {
            assertEquals(REFERENCE.search(DATA.query(j), 1 + j % 20).toJson(), bodies.get(j), model + " query " + j);
        }
    }

    @Test
    void aQueryWithoutCandidatesCallsNoLeafAndAnswersNoNeighbours() throws Exception {
        cluster.server.switchTo("doubleface");
        io.doubleface.services.musuite.SplitMix64 r = new io.doubleface.services.musuite.SplitMix64(1);
        float[] v = new float[DATA.dims()];
        int tries = 0;
        do {
            for (int d = 0; d < v.length; d++) {
                v[d] = (float) r.nextGaussian();
            }
            assertTrue(++tries < 100_000, "no vector without candidates");
        } while (INDEX.candidates(v).length > 0);
        HdSearchResult expected = REFERENCE.search(v, 10);
        assertEquals(List.of(), expected.neighbors());
        assertEquals(0, expected.candidates());
        HttpResponse<String> http = cluster.get("/hdsearch?vector=" + vectorParam(v));
        assertEquals(200, http.statusCode(), http.body());
        assertEquals(expected.toJson(), http.body());
        SearchRequest.Builder g = SearchRequest.newBuilder();
        for (float x : v) {
            g.addVector(x);
        }
        assertEquals(expected.toProto(), grpc(cluster, g.build()));
    }

    @Test
    void defaultKIsTen() throws Exception {
        cluster.server.switchTo("doubleface");
        assertEquals(REFERENCE.search(DATA.query(3), 10).toJson(), cluster.get("/hdsearch?query=3").body());
        assertEquals(REFERENCE.search(DATA.query(3), 10).toProto(),
                grpc(cluster, SearchRequest.newBuilder().setQuery(3).build()));
    }

    @Test
    void badQueriesGet400OverHttpAndInvalidArgumentOverGrpc() throws Exception {
        cluster.server.switchTo("doubleface");
        String ok16 = vectorParam(DATA.query(0));
        String[] bad = {"", "?query=1&vector=" + ok16, "?query=-1", "?query=x", "?query=1&k=0", "?query=1&k=101",
            "?query=1&k=2&k=3", "?query=1&colour=red", "?vector=1,2,3", "?vector=" + ok16 + ",1",
            "?vector=" + ok16.replaceFirst("^[^,]*", "abc"), "?vector=" + ok16.replaceFirst("^[^,]*", "NaN"),
            "?vector=" + ok16.replaceFirst("^[^,]*", "1e30")};
        for (String q : bad) {
            HttpResponse<String> r = cluster.get("/hdsearch" + q);
            assertEquals(400, r.statusCode(), q + " -> " + r.body());
            assertTrue(r.body().length() > 10, q + " -> " + r.body());
        }
        List<SearchRequest> badGrpc = List.of(SearchRequest.getDefaultInstance(),
                SearchRequest.newBuilder().setQuery(1).addVector(1).build(),
                SearchRequest.newBuilder().setQuery(-1).build(),
                SearchRequest.newBuilder().setQuery(1).setK(101).build(),
                SearchRequest.newBuilder().setQuery(1).setK(-1).build(),
                SearchRequest.newBuilder().addVector(1).addVector(2).build(),
                SearchRequest.newBuilder().addAllVector(floats(16, Float.POSITIVE_INFINITY)).build());
        for (SearchRequest r : badGrpc) {
            try {
                grpc(cluster, r);
                throw new AssertionError("accepted " + r);
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), r.toString());
                assertTrue(e.getStatus().getDescription() != null && e.getStatus().getDescription().length() > 10);
            }
        }
    }

    static List<Float> floats(int n, float value) {
        List<Float> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(value);
        }
        return out;
    }

    @Test
    void aStoppedLeafIsLeftOutAndListedAndNoLeafAtAllIs503() throws Exception {
        try (TestServer c = start(LEAVES)) {
            c.leaves.stop(1);
            int listed = 0;
            for (int j = 0; j < 10; j++) {
                HdSearchResult expected = REFERENCE.searchWithout(DATA.query(j), 10, LEAVES, List.of(1));
                listed += expected.missingLeaves().isEmpty() ? 0 : 1;
                HttpResponse<String> r = c.get("/hdsearch?query=" + j);
                if (expected.missingLeaves().size() == expected.candidates()) {
                    continue; // no candidates at all: no call, nothing missing
                }
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(expected.toJson(), r.body(), "query " + j);
                assertEquals(expected.toProto(), grpc(c, SearchRequest.newBuilder().setQuery(j).build()));
            }
            assertTrue(listed > 5, "leaf 1 had candidates for only " + listed + " of 10 queries");
            for (int leaf = 0; leaf < LEAVES; leaf++) {
                if (leaf != 1) {
                    c.leaves.stop(leaf);
                }
            }
            HttpResponse<String> r = c.get("/hdsearch?query=0");
            assertEquals(503, r.statusCode(), r.body());
            try {
                grpc(c, SearchRequest.newBuilder().setQuery(0).build());
                throw new AssertionError("answered with no leaf");
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
            }
        }
    }

    @Test
    void recallOfTheTestCorpusIsAboveItsFloor() {
        double recall = REFERENCE.recall(100, 10);
        System.out.printf("HDSearch recall@10 of %s, %s: %.3f%n", DATA, INDEX, recall);
        assertTrue(recall >= 0.5, "recall@10 " + recall);
        assertTrue(recall <= 1.0);
    }
}
