package io.doubleface.services.hdsearch;

import io.doubleface.services.hdsearch.v1.SearchReply;
import java.util.List;

/**
 * An HDSearch answer: the nearest neighbours found among the LSH candidates, nearest first
 * (distance, then id), how many candidates there were, and the leaves that did not answer (their
 * candidates are missing from the answer).
 *
 * @param neighbors nearest first
 * @param candidates distinct LSH candidates of the query
 * @param missingLeaves leaves that did not answer, ascending
 */
public record HdSearchResult(List<Neighbor> neighbors, int candidates, List<Integer> missingLeaves) {

    /**
     * One neighbour.
     *
     * @param id the point's id
     * @param distance its squared Euclidean distance to the query
     */
    public record Neighbor(int id, float distance) {}

    /** Copies the lists. */
    public HdSearchResult {
        neighbors = List.copyOf(neighbors);
        missingLeaves = List.copyOf(missingLeaves);
    }

    /**
     * {@return the JSON answer, e.g. {@code {"neighbors":[{"id":7,"distance":1.25}],"candidates":40,"missing_leaves":[]}}}
     * Distances are written as Java's shortest {@code float} decimal form, so they read back to the same bits.
     */
    public String toJson() {
        StringBuilder sb = new StringBuilder(32 + neighbors.size() * 32).append("{\"neighbors\":[");
        for (int i = 0; i < neighbors.size(); i++) {
            Neighbor n = neighbors.get(i);
            sb.append(i == 0 ? "" : ",").append("{\"id\":").append(n.id()).append(",\"distance\":")
                    .append(Float.toString(n.distance())).append('}');
        }
        sb.append("],\"candidates\":").append(candidates).append(",\"missing_leaves\":[");
        for (int i = 0; i < missingLeaves.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(missingLeaves.get(i));
        }
        return sb.append("]}\n").toString();
    }

    /** {@return the gRPC answer} */
    public SearchReply toProto() {
        SearchReply.Builder b = SearchReply.newBuilder().setCandidates(candidates).addAllMissingLeaves(missingLeaves);
        for (Neighbor n : neighbors) {
            b.addNeighborsBuilder().setId(n.id()).setDistance(n.distance());
        }
        return b.build();
    }
}
