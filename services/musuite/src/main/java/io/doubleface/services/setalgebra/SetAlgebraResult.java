package io.doubleface.services.setalgebra;

import io.doubleface.services.musuite.Json;
import io.doubleface.services.setalgebra.v1.SearchReply;
import java.util.List;

/**
 * A Set Algebra answer.
 *
 * @param query the query answered
 * @param count documents containing every term (of the leaves that answered)
 * @param docs the {@code limit} smallest of their ids, ascending
 * @param missingLeaves the leaves that did not answer, ascending
 */
public record SetAlgebraResult(SetAlgebraQuery query, long count, List<Integer> docs, List<Integer> missingLeaves) {

    /** Copies the lists. */
    public SetAlgebraResult {
        docs = List.copyOf(docs);
        missingLeaves = List.copyOf(missingLeaves);
    }

    /** {@return e.g. {@code {"terms":["w51"],"stop_words":[],"count":2,"docs":[4,9],"missing_leaves":[]}}} */
    public String toJson() {
        StringBuilder sb = new StringBuilder(64 + docs.size() * 7).append("{\"terms\":[");
        strings(sb, query.terms()).append("],\"stop_words\":[");
        strings(sb, query.stopWords()).append("],\"count\":").append(count).append(",\"docs\":");
        Json.array(sb, docs).append(",\"missing_leaves\":");
        return Json.array(sb, missingLeaves).append("}\n").toString();
    }

    private static StringBuilder strings(StringBuilder sb, List<String> words) {
        for (int i = 0; i < words.size(); i++) {
            Json.quote(sb.append(i == 0 ? "" : ","), words.get(i));
        }
        return sb;
    }

    /** {@return the gRPC answer} */
    public SearchReply toProto() {
        return SearchReply.newBuilder().addAllTerms(query.terms()).addAllStopWords(query.stopWords()).setCount(count)
                .addAllDocs(docs).addAllMissingLeaves(missingLeaves).build();
    }
}
