package example.search;

import example.search.v1.Hit;
import example.search.v1.LeafGrpc;
import example.search.v1.LeafHits;
import example.search.v1.LeafQuery;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One leaf of the search: the documents of one shard in an inverted index, served as
 * {@code example.search.v1.Leaf/Search} by a plain grpc-java server — the leaf knows nothing of
 * doubleface. Thread-safe (the index is read-only after construction).
 */
public final class SearchLeaf extends LeafGrpc.LeafImplBase {

    /** Ranking of hits: more matched terms first, then the smaller document number. */
    public static final Comparator<Hit> RANKING = Comparator.comparingInt(Hit::getScore).reversed()
            .thenComparingInt(h -> Integer.parseInt(h.getDoc().substring(1)));

    private final Map<String, List<Integer>> postings = new HashMap<>();

    /** The leaf of {@code shard} of {@code shards} over {@code documents} documents ({@link Corpus}). */
    public SearchLeaf(int shard, int shards, int documents) {
        for (int d : Corpus.shard(shard, shards, documents)) {
            for (String w : Corpus.words(d)) {
                postings.computeIfAbsent(w, k -> new ArrayList<>()).add(d);
            }
        }
    }

    /** Starts a gRPC server on {@code 127.0.0.1:port} (0 = any free port) serving this leaf. */
    public Server serve(int port) throws IOException {
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port)).addService(this).build().start();
    }

    @Override
    public void search(LeafQuery q, StreamObserver<LeafHits> reply) {
        if (q.getLimit() < 1) {
            reply.onError(Status.INVALID_ARGUMENT.withDescription("limit: " + q.getLimit() + " (expected: > 0)")
                    .asException());
            return;
        }
        reply.onNext(LeafHits.newBuilder().addAllHits(search(q.getTermsList(), q.getLimit())).build());
        reply.onCompleted();
    }

    /** The best {@code limit} hits of this shard for {@code terms}, best first. */
    List<Hit> search(List<String> terms, int limit) {
        Map<Integer, Integer> scores = new HashMap<>();
        for (String t : terms) {
            for (int d : postings.getOrDefault(t, List.of())) {
                scores.merge(d, 1, Integer::sum);
            }
        }
        List<Hit> hits = new ArrayList<>(scores.size());
        scores.forEach((d, s) -> hits.add(Hit.newBuilder().setDoc("d" + d).setScore(s).build()));
        hits.sort(RANKING);
        return hits.size() > limit ? hits.subList(0, limit) : hits;
    }
}
