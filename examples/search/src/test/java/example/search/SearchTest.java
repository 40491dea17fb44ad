package example.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.search.v1.Hit;
import example.search.v1.SearchGrpc;
import example.search.v1.SearchReply;
import example.search.v1.SearchRequest;
import io.doubleface.server.FanoutServer;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The search end to end: a gRPC client, the doubleface mid-tier, four real gRPC leaves; every model. */
@Timeout(300)
class SearchTest {

    static final List<String> MODELS = List.of("doubleface", "type2a-1f2b", "type2b", "type1-8", "thread-8",
            "thread-virtual", "doubleface-fifo");
    static final int SHARDS = 4;
    static final int DOCUMENTS = 2_000;
    static final List<String> QUERIES = List.of("w1", "w3 w9", "w0 w2 w5 w150", "w199 w198 w197", "w10 w11 w12 w13 w14",
            "nothing matches", "W4 w4 w8"); // the last: case and duplicates fold

    static final List<Server> leaves = new ArrayList<>();
    static FanoutServer server;
    static ManagedChannel channel;
    static SearchGrpc.SearchBlockingStub client;

    @BeforeAll
    static void start() throws Exception {
        for (int s = 0; s < SHARDS; s++) {
            leaves.add(new SearchLeaf(s, SHARDS, DOCUMENTS).serve(0));
        }
        FanoutServer.Builder b = FanoutServer.builder().grpc(0).ioThreads(2).deadline(Duration.ofSeconds(5));
        SearchApp.install(b, uri(leaves));
        server = b.configuration("doubleface").start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
        client = SearchGrpc.newBlockingStub(channel);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.close();
        }
        for (Server s : leaves) {
            s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static String uri(List<Server> servers) {
        return "grpc://" + servers.stream().map(s -> "127.0.0.1:" + s.getPort()).collect(Collectors.joining(","));
    }

    static SearchReply query(String text, int limit) {
        return client.withDeadlineAfter(30, TimeUnit.SECONDS)
                .query(SearchRequest.newBuilder().setText(text).setLimit(limit).build());
    }

    /** The answer computed without the service: every document of the shards not in {@code down}, scored and ranked. */
    static List<Hit> bruteForce(String text, int limit, int... down) {
        List<String> terms = List.of(text.toLowerCase().trim().split("\\s+"));
        List<Hit> hits = new ArrayList<>();
        for (int d = 0; d < DOCUMENTS; d++) {
            int shard = d % SHARDS;
            if (java.util.Arrays.stream(down).anyMatch(x -> x == shard)) {
                continue;
            }
            int score = (int) Corpus.words(d).stream().filter(w -> terms.stream().distinct().anyMatch(w::equals)).count();
            if (score > 0) {
                hits.add(Hit.newBuilder().setDoc("d" + d).setScore(score).build());
            }
        }
        hits.sort(SearchLeaf.RANKING);
        return hits.subList(0, Math.min(limit == 0 ? 10 : limit, hits.size()));
    }

    @Test
    void answersAreTheBruteForceTopKUnderEveryModel() {
        for (String model : MODELS) {
            server.switchTo(model);
            for (String q : QUERIES) {
                for (int limit : new int[] {0, 1, 7, 100}) {
                    SearchReply r = query(q, limit);
                    assertEquals(bruteForce(q, limit), r.getHitsList(), model + " '" + q + "' limit " + limit);
                    assertEquals(List.of(), r.getMissingShardsList(), model);
                }
            }
        }
        server.switchTo("doubleface");
        assertTrue(bruteForce("w1", 100).size() > 50, "the corpus gives the common words many documents");
    }

    @Test
    void everyAnswerIsRightWhileTheModelIsSwitchedUnderLoad() throws Exception {
        Map<String, List<Hit>> expected = new HashMap<>();
        for (String q : QUERIES) {
            expected.put(q, bruteForce(q, 20));
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger answered = new AtomicInteger();
        List<String> wrong = new CopyOnWriteArrayList<>();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            int first = c;
            clients.add(Thread.ofPlatform().start(() -> {
                for (int i = first; !stop.get(); i++) {
                    String q = QUERIES.get(i % QUERIES.size());
                    try {
                        SearchReply r = query(q, 20);
                        if (!r.getHitsList().equals(expected.get(q)) || r.getMissingShardsCount() != 0) {
                            wrong.add(q + ": " + r);
                        }
                        answered.incrementAndGet();
                    } catch (RuntimeException e) {
                        wrong.add(q + ": " + e);
                    }
                }
            }));
        }
        for (int i = 0; i < 3 * MODELS.size(); i++) {
            server.switchTo(MODELS.get(i % MODELS.size()));
            Thread.sleep(150);
        }
        stop.set(true);
        for (Thread t : clients) {
            t.join(30_000);
        }
        server.switchTo("doubleface");
        assertEquals(List.of(), wrong);
        assertTrue(answered.get() > 50, "answered " + answered.get());
    }

    @Test
    void badQueriesGetInvalidArgumentWithAReason() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> query("   ", 5));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertEquals("text: 0 distinct words (expected: 1..10)", e.getStatus().getDescription());
        e = assertThrows(StatusRuntimeException.class, () -> query("a b c d e f g h i j k", 5));
        assertEquals("text: 11 distinct words (expected: 1..10)", e.getStatus().getDescription());
        e = assertThrows(StatusRuntimeException.class, () -> query("w1", 101));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertEquals("limit: 101 (expected: 1..100, 0 = 10)", e.getStatus().getDescription());
        assertEquals(bruteForce("w1", 3), query("w1", 3).getHitsList(), "the server still answers");
    }

    @Test
    void aLeafDownGivesTheOtherLeavesHitsAndNamesTheMissingShard() throws Exception {
        List<Server> partialLeaves = new ArrayList<>();
        for (int s = 0; s < SHARDS; s++) {
            partialLeaves.add(new SearchLeaf(s, SHARDS, DOCUMENTS).serve(0));
        }
        FanoutServer.Builder b = FanoutServer.builder().grpc(0).ioThreads(2).deadline(Duration.ofSeconds(5));
        SearchApp.install(b, uri(partialLeaves));
        partialLeaves.get(2).shutdownNow().awaitTermination(5, TimeUnit.SECONDS); // shard 2 is gone
        ManagedChannel ch = null;
        try (FanoutServer partial = b.configuration("doubleface").start()) {
            ch = NettyChannelBuilder.forAddress("127.0.0.1", partial.grpcPort()).usePlaintext().build();
            SearchGrpc.SearchBlockingStub c = SearchGrpc.newBlockingStub(ch);
            for (String model : MODELS) {
                partial.switchTo(model);
                SearchReply r = c.withDeadlineAfter(30, TimeUnit.SECONDS)
                        .query(SearchRequest.newBuilder().setText("w3 w9").setLimit(15).build());
                assertEquals(List.of(2), r.getMissingShardsList(), model);
                assertEquals(bruteForce("w3 w9", 15, 2), r.getHitsList(), model);
            }
        } finally {
            if (ch != null) {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            for (Server s : partialLeaves) {
                s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /** Leaf {@code shard}, answering {@code delay} late (without holding a gRPC thread meanwhile). */
    static Server slowLeaf(int shard, Duration delay, java.util.concurrent.ScheduledExecutorService timer)
            throws java.io.IOException {
        SearchLeaf leaf = new SearchLeaf(shard, SHARDS, DOCUMENTS);
        example.search.v1.LeafGrpc.LeafImplBase slow = new example.search.v1.LeafGrpc.LeafImplBase() {
            @Override
            public void search(example.search.v1.LeafQuery q, io.grpc.stub.StreamObserver<example.search.v1.LeafHits> r) {
                timer.schedule(() -> leaf.search(q, r), delay.toMillis(), TimeUnit.MILLISECONDS);
            }
        };
        return io.grpc.netty.NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0))
                .addService(slow).build().start();
    }

    @Test
    void aLeafSlowerThanItsTimeoutIsLeftOutWithoutWaitingForTheDeadline() throws Exception {
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        List<Server> mixed = new ArrayList<>();
        ManagedChannel ch = null;
        try {
            for (int s = 0; s < SHARDS; s++) {
                // leaf 1 answers 3 s late: inside the 10-s deadline, so only its own timeout leaves it out
                mixed.add(s == 1 ? slowLeaf(s, Duration.ofSeconds(3), timer) : new SearchLeaf(s, SHARDS, DOCUMENTS).serve(0));
            }
            FanoutServer.Builder b = FanoutServer.builder().grpc(0).ioThreads(2).deadline(Duration.ofSeconds(10));
            SearchApp.install(b, uri(mixed));
            try (FanoutServer server = b.configuration("doubleface").start()) {
                ch = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
                SearchGrpc.SearchBlockingStub c = SearchGrpc.newBlockingStub(ch);
                for (String model : MODELS) {
                    server.switchTo(model);
                    SearchReply r = c.withDeadlineAfter(30, TimeUnit.SECONDS)
                            .query(SearchRequest.newBuilder().setText("w3 w9").setLimit(15).build());
                    assertEquals(List.of(1), r.getMissingShardsList(), model);
                    assertEquals(bruteForce("w3 w9", 15, 1), r.getHitsList(), model);
                }
            }
        } finally {
            if (ch != null) {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            for (Server s : mixed) {
                s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            timer.shutdownNow();
        }
    }
}
